package store

import (
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// TestOutboxRoundTrip: a small outbox is stored as its JSON, a large one
// deflated behind "zd1:" and several times smaller; the router's decoder
// reads both back, and gzip's "gz:" of older items, and rejects a corrupt
// compressed one.
func TestOutboxRoundTrip(t *testing.T) {
	small := []Message{{Queue: QueueWork, Body: `{"kind":"run_step"}`}}
	var large []Message
	for i := range 8 {
		large = append(large, Message{Queue: QueueEvents, Body: strings.Repeat(`{"workflow_id":"wf","status":"RUNNING"},`, 10+i)})
	}
	s := New(nil, "t", Options{})
	for name, msgs := range map[string][]Message{"small": small, "large": large} {
		enc, err := s.b.encodeOutbox(msgs)
		if err != nil {
			t.Fatal(err)
		}
		if compressed := strings.HasPrefix(enc, dictOutboxPrefix); compressed != (name == "large") {
			t.Errorf("%s: compressed %v", name, compressed)
		}
		got, err := OutboxFromImage(map[string]events.DynamoDBAttributeValue{attrOutbox: events.NewStringAttribute(enc)})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(got) != len(msgs) || got[len(got)-1] != msgs[len(msgs)-1] {
			t.Errorf("%s: round trip %+v", name, got)
		}
		if name == "large" {
			raw, _ := encodeOutboxRaw(msgs)
			if len(enc)*3 > len(raw) {
				t.Errorf("compressed outbox %d bytes, JSON %d: want a third or less", len(enc), len(raw))
			}
		}
	}
	if _, err := OutboxFromImage(map[string]events.DynamoDBAttributeValue{attrOutbox: events.NewStringAttribute("gz:bm90IGd6aXA=")}); err == nil {
		t.Error("a corrupt compressed outbox decoded")
	}
}
