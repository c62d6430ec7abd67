package store

import (
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestDictV1Pinned: items name dictV1 by their encoding, so it must not
// change. A new dictionary is a new constant under a new name.
func TestDictV1Pinned(t *testing.T) {
	const want = "b68ce6fb0f6d4bc33d77315be8202b406b271d1dd13133c96ff2367ecc3a705a"
	sum := sha256.Sum256([]byte(dictV1))
	if got := hex.EncodeToString(sum[:]); got != want {
		t.Fatalf("dictV1 changed: sha256 %s, want %s; items written with it would no longer decode", got, want)
	}
}

// TestBodyEncodings: each body comes back byte for byte, stored in the
// encoding that suits it; bodies of older items (gzip) still decode; a
// corrupt one is an error.
func TestBodyEncodings(t *testing.T) {
	s := New(nil, "t", Options{})
	state, err := os.ReadFile("testdata/chain-run-state.json")
	if err != nil {
		t.Fatal(err)
	}
	noise := make([]byte, 600)
	rand.Read(noise)
	for _, tc := range []struct {
		name string
		body []byte
		enc  string
	}{
		{"empty", nil, encRaw},
		{"small", []byte(`{"step_id":"a"}`), encRaw},
		{"run state", state, encDict1},
		{"incompressible", noise, encRaw},
	} {
		t.Run(tc.name, func(t *testing.T) {
			attrs, err := s.b.encodeBody(tc.body)
			if err != nil {
				t.Fatal(err)
			}
			if got := getS(attrs, attrEnc); got != tc.enc {
				t.Errorf("encoding %q, want %q", got, tc.enc)
			}
			got, err := decodeBody(attrs)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tc.body) {
				t.Errorf("round trip: %d bytes, want %d", len(got), len(tc.body))
			}
		})
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(state)
	zw.Close()
	got, err := decodeBody(map[string]types.AttributeValue{attrBody: bin(gz.Bytes()), attrEnc: str(encGzip)})
	if err != nil || !bytes.Equal(got, state) {
		t.Errorf("gzip body of an older item: %d bytes, %v", len(got), err)
	}
	if _, err := decodeBody(map[string]types.AttributeValue{attrBody: bin([]byte("not deflate at all")), attrEnc: str(encDict1)}); err == nil {
		t.Error("a corrupt body decoded")
	}
}

// TestChainRunItemUnderOneWriteUnit: the items of a 10-step Http chain's
// run (from maestro bench) fit DynamoDB's 1 KB write unit: at its start,
// with the outbox of the commit that creates it (the creation's, the
// start's and the first step's events, the first step's work message and
// the run's timeout timer), and at its end (its state the largest it gets).
// Gzipped, without the dictionary, they took 1.3-1.7 KB: two units for every
// commit.
func TestChainRunItemUnderOneWriteUnit(t *testing.T) {
	s := New(nil, "t", Options{})
	for _, name := range []string{"chain-start", "chain-run"} {
		state, err := os.ReadFile("testdata/" + name + "-state.json")
		if err != nil {
			t.Fatal(err)
		}
		var outbox []Message
		raw, err := os.ReadFile("testdata/" + name + "-outbox.json")
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &outbox); err != nil {
			t.Fatal(err)
		}
		item, err := s.b.runItem("bench-httpchain-10", 1, 1, 12, "IN_PROGRESS", state, outbox, 1796628156735)
		if err != nil {
			t.Fatal(err)
		}
		if n := ItemSize(item); n > 1024 {
			t.Errorf("%s: run item %d bytes (state %d, outbox %d): two write units per commit", name, n,
				AttributeValueSize(item[attrBody]), AttributeValueSize(item[attrOutbox]))
		} else {
			t.Logf("%s: run item %d bytes (state %d bytes of JSON, outbox %d)", name, n, len(state), len(raw))
		}
		got, err := OutboxFromImage(map[string]events.DynamoDBAttributeValue{attrOutbox: events.NewStringAttribute(getS(item, attrOutbox))})
		if err != nil || len(got) != len(outbox) || got[0] != outbox[0] {
			t.Errorf("%s: outbox round trip: %+v, %v", name, got, err)
		}
	}
}

// TestOlderOutboxes: outboxes written gzipped before the dictionary still
// decode; a corrupt one of either encoding is an error.
func TestOlderOutboxes(t *testing.T) {
	msgs := []Message{{Queue: QueueEvents, Body: strings.Repeat(`{"workflow_id":"wf","status":"RUNNING"},`, 30)}}
	raw, _ := encodeOutboxRaw(msgs)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(raw)
	zw.Close()
	got, err := OutboxFromImage(map[string]events.DynamoDBAttributeValue{attrOutbox: events.NewStringAttribute(gzOutboxPrefix + base64.StdEncoding.EncodeToString(gz.Bytes()))})
	if err != nil || len(got) != 1 || got[0] != msgs[0] {
		t.Errorf("gzip outbox: %+v, %v", got, err)
	}
	for _, bad := range []string{"zd1:bm90IGRlZmxhdGU=", "zd1:***", "gz:bm90IGd6aXA="} {
		if _, err := OutboxFromImage(map[string]events.DynamoDBAttributeValue{attrOutbox: events.NewStringAttribute(bad)}); err == nil {
			t.Errorf("corrupt outbox %q decoded", bad)
		}
	}
}
