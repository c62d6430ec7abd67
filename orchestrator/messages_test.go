package orchestrator

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/store"
	"github.com/maestro-serverless/maestro/triggers"
)

// catalogSamples is one filled message of every kind.
func catalogSamples() []Work {
	ref := StepRef{WorkflowID: "wf", InstanceID: 2, RunID: 3, StepID: "s", Attempt: 4}
	at := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	return []Work{
		StepWork{StepRef: ref, StepKind: "step", StepType: "Http", Params: engine.Values{"n": int64(1)}, StartTime: 5, Crowd: 6, Backstop: true},
		TimerWork{StepRef: ref, Purpose: engine.PurposeRetry, FireAt: at},
		WakeWork{store.Wake{WorkflowID: "wf", InstanceID: 2, RunID: 3}},
		PurgeWork{WorkflowID: "wf", Round: 7},
		SyncTriggersWork{WorkflowID: "wf"},
		TimeTriggerWork{triggers.Firing{WorkflowID: "wf", TriggerIndex: 1, ScheduledTime: at}},
		SignalWork{SignalName: "sig", SignalSeq: 8},
		AnnounceWork{StepRef: ref, SignalName: "sig", Params: engine.Values{"p": "v"}, Payload: map[string]any{"k": "v"}, Index: 1},
		SubworkflowWork{StepRef: ref, Subworkflow: &engine.StartSubworkflow{StepID: "s", Attempt: 4, WorkflowID: "child"}},
		SweepWork{},
		CancelJobWork{StepRef: ref, StepType: "Batch", Job: "job-1", Reason: "stopped"},
		JobEventWork{JobEvent: []byte(`{"source":"aws.batch"}`)},
		BackfillWork{WorkflowID: "wf", BackfillID: "bf-1", Tick: true},
	}
}

// TestWorkCatalogRoundTrips: every kind encodes with "kind" first and
// decodes to its own type, equal to what was encoded; every kind of the
// catalog has a sample here.
func TestWorkCatalogRoundTrips(t *testing.T) {
	kinds := map[WorkKind]bool{}
	for _, w := range catalogSamples() {
		body := EncodeWork(w)
		if !strings.HasPrefix(body, `{"kind":"`+string(w.Kind())+`"`) {
			t.Errorf("%T encodes as %s, want kind first", w, body)
		}
		got, err := DecodeWork([]byte(body))
		if err != nil {
			t.Fatalf("%T: decode %s: %v", w, body, err)
		}
		got = deref(got)
		if EncodeWork(got) != body || reflect.TypeOf(got) != reflect.TypeOf(w) {
			t.Errorf("%T: decoded as %T %s, want %s", w, got, EncodeWork(got), body)
		}
		kinds[w.Kind()] = true
	}
	for k := range decoders {
		if !kinds[k] {
			t.Errorf("kind %s has no sample", k)
		}
	}
	if got := EncodeWork(SweepWork{}); got != SweepBody {
		t.Errorf("a sweep encodes as %s; the sweep schedule sends %s", got, SweepBody)
	}
}

// TestDecodeWorkReadsTheUnionForm: a message as the one struct of every
// field wrote it (the form before the catalog had a type per kind, still
// in queues during a deploy) decodes to its kind's type.
func TestDecodeWorkReadsTheUnionForm(t *testing.T) {
	body := `{"kind":"timer","workflow_id":"wf","workflow_instance_id":2,"workflow_run_id":3,"step_id":"s","step_attempt_id":4,"purpose":"retry","fire_at":"2026-11-27T12:00:00Z"}`
	w, err := DecodeWork([]byte(body))
	m, ok := w.(*TimerWork)
	if err != nil || !ok || m.Ref() != (store.AttemptRef{WorkflowID: "wf", InstanceID: 2, RunID: 3, StepID: "s", Attempt: 4}) || m.Purpose != engine.PurposeRetry {
		t.Fatalf("decoded %#v, %v", w, err)
	}
	purge := `{"kind":"purge","workflow_id":"wf","workflow_instance_id":0,"workflow_run_id":0,"step_id":"","step_attempt_id":0,"round":2}`
	if w, err := DecodeWork([]byte(purge)); err != nil || *w.(*PurgeWork) != (PurgeWork{WorkflowID: "wf", Round: 2}) {
		t.Fatalf("purge decoded %#v, %v", w, err)
	}
}

// TestDecodeWorkRefusesWhatNoRetryCanRead: bodies that are not a message
// of a known kind are ErrPoison (the dead-letter queue), naming why.
func TestDecodeWorkRefusesWhatNoRetryCanRead(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`not json`, "decode work message"},
		{`{"kind":"launch_missiles"}`, `unknown work kind "launch_missiles"`},
		{`{}`, `unknown work kind ""`},
		{`{"kind":"timer","step_attempt_id":"four"}`, "decode timer message"},
		{`{"kind":"timer"} {}`, "after top-level value"},
		{`{"kind":"time_trigger","workflow_id":"wf"}`, "trigger_index is missing"},
	} {
		_, err := DecodeWork([]byte(tc.body))
		if !errors.Is(err, ErrPoison) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrPoison saying %q", tc.body, err, tc.want)
		}
	}
}

// FuzzDecodeWork: any body either fails as ErrPoison or decodes to a
// message whose encoding decodes to the same message.
func FuzzDecodeWork(f *testing.F) {
	for _, w := range catalogSamples() {
		f.Add([]byte(EncodeWork(w)))
	}
	f.Add([]byte(`{"kind":"run_step","params":{"a":{"b":[1,2,{"c":null}]}}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		w, err := DecodeWork(body)
		if err != nil {
			if !errors.Is(err, ErrPoison) {
				t.Fatalf("%q: %v is not ErrPoison", body, err)
			}
			return
		}
		once := EncodeWork(deref(w))
		again, err := DecodeWork([]byte(once))
		if err != nil || EncodeWork(deref(again)) != once {
			t.Fatalf("%q: re-encoded %s decodes as %v, %v", body, once, again, err)
		}
	})
}

// deref returns the message a pointer from DecodeWork points to.
func deref(w Work) Work {
	if v := reflect.ValueOf(w); v.Kind() == reflect.Pointer {
		return v.Elem().Interface().(Work)
	}
	return w
}
