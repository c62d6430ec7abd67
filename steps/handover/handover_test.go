package handover

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/aws/smithy-go"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/orchestrator"
)

func TestAlwaysAndRefuse(t *testing.T) {
	a := Always{Why: "runs as a job"}
	m := orchestrator.StepWork{StepRef: orchestrator.StepRef{StepID: "s", Attempt: 2}}
	if !a.Waits(m) {
		t.Fatal("Waits = false")
	}
	res, err := a.RunStep(context.Background(), m)
	want := engine.StepFinished{StepID: "s", Attempt: 2, Outcome: engine.OutcomeFatalError, Message: "runs as a job"}
	if err != nil || !reflect.DeepEqual(res, want) {
		t.Fatalf("RunStep = %+v, %v", res, err)
	}
	h, end, err := Refuse("not allowed")
	want = engine.StepFinished{Outcome: engine.OutcomeFatalError, Message: "not allowed"}
	if err != nil || h != (orchestrator.Handover{}) || end == nil || !reflect.DeepEqual(*end, want) {
		t.Fatalf("Refuse = %+v, %+v, %v", h, end, err)
	}
}

func TestDetail(t *testing.T) {
	type detail struct {
		ID string `json:"id"`
	}
	for _, tc := range []struct {
		name   string
		ev     orchestrator.JobEvent
		want   detail
		ok     bool
		poison bool
	}{
		{"its event", orchestrator.JobEvent{Source: "aws.x", DetailType: "X Change", Detail: json.RawMessage(`{"id":"1"}`)}, detail{ID: "1"}, true, false},
		{"another source", orchestrator.JobEvent{Source: "aws.y", DetailType: "X Change", Detail: json.RawMessage(`{"id":"1"}`)}, detail{}, false, false},
		{"another type", orchestrator.JobEvent{Source: "aws.x", DetailType: "Y Change", Detail: json.RawMessage(`{"id":"1"}`)}, detail{}, false, false},
		{"poison", orchestrator.JobEvent{Source: "aws.x", DetailType: "X Change", Detail: json.RawMessage(`[]`)}, detail{}, false, true},
	} {
		got, ok, err := Detail[detail](tc.ev, "aws.x", "X Change")
		if ok != tc.ok || (tc.ok && got != tc.want) || errors.Is(err, orchestrator.ErrPoison) != tc.poison || (err != nil) != tc.poison {
			t.Errorf("%s: %+v, %v, %v", tc.name, got, ok, err)
		}
	}
}

func TestCancelled(t *testing.T) {
	gone := &smithy.GenericAPIError{Code: "ClientException", Message: "no such job"}
	other := &smithy.GenericAPIError{Code: "ThrottlingException"}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{gone, ""},
		{fmt.Errorf("operation error: %w", gone), ""},
		{other, "stop job 1: api error ThrottlingException: "},
		{errors.New("no network"), "stop job 1: no network"},
	} {
		got := ""
		if err := Cancelled(tc.err, "stop job 1", "InvalidParameterException", "ClientException"); err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("Cancelled(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
