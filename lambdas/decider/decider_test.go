package decider

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

type recorder struct {
	calls []string
	fail  map[string]bool
}

func (r *recorder) HandleWake(_ context.Context, body []byte) error {
	r.calls = append(r.calls, string(body))
	if r.fail[string(body)] {
		return errors.New("boom")
	}
	return nil
}

func msg(id, group, body string) events.SQSMessage {
	return events.SQSMessage{MessageId: id, Body: body, Attributes: map[string]string{"MessageGroupId": group}}
}

func TestHandleCoalescesWakesAndKeepsGroupOrder(t *testing.T) {
	r := &recorder{fail: map[string]bool{"B": true}}
	resp, err := New(r, nil).Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		msg("1", "a", "A"), msg("2", "a", "A"), msg("3", "b", "B"), msg("4", "b", "B2"), msg("5", "a", "A"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	// A is applied once; B fails, so B2 (same group, later) is held back too.
	if got := len(r.calls); got != 2 || r.calls[0] != "A" || r.calls[1] != "B" {
		t.Fatalf("calls %v, want [A B]", r.calls)
	}
	var failed []string
	for _, f := range resp.BatchItemFailures {
		failed = append(failed, f.ItemIdentifier)
	}
	if len(failed) != 2 || failed[0] != "3" || failed[1] != "4" {
		t.Fatalf("failed %v, want [3 4]", failed)
	}
}
