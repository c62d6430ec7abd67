package steprights

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/maestro-serverless/maestro/access"
	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/store"
	"github.com/maestro-serverless/maestro/teamrights"
)

// grants is a table of workflow grants.
type grants map[string]access.Grant

func (g grants) Grant(_ context.Context, wf string) (access.Grant, bool, error) {
	if wf == "broken" {
		return access.Grant{}, false, errors.New("throttled")
	}
	gr, ok := g[wf]
	return gr, ok, nil
}

// runs holds the states of iteration runs, as engine.Instance JSON.
type runs map[string]*engine.Instance

func (r runs) LoadRun(_ context.Context, wf string, inst, run int64) (*store.RunRecord, []store.Event, error) {
	st, ok := r[wf]
	if !ok {
		return nil, nil, store.ErrNotFound
	}
	b, err := json.Marshal(st)
	return &store.RunRecord{WorkflowID: wf, InstanceID: inst, RunID: run, State: b}, nil, err
}

func TestScope(t *testing.T) {
	cfg := teamrights.Config{
		"data": {TaskRoleARN: "arn:aws:iam::123456789012:role/data-tasks"},
		"ml":   {TaskRoleARN: "arn:aws:iam::123456789012:role/ml-tasks"},
	}
	loop := model.InlineForeachPrefix + "0a1b"
	inner := model.InlineWhilePrefix + "ffee"
	orphan := model.InlineForeachPrefix + "dead"
	gone := model.InlineForeachPrefix + "beef"
	g := grants{
		"etl":   {Owners: []string{"team:data"}},
		"train": {Owners: []string{"team:ml", "team:data"}},
		"solo":  {Owners: []string{"arn:aws:iam::123456789012:role/alice"}},
		// A subworkflow child: its own owners apply, not its caller's.
		"child": {Owners: []string{"team:ml"}},
	}
	r := runs{
		// An iteration of etl's foreach, and of a while loop nested in
		// it: both defined by etl.
		loop:  {WorkflowID: loop, Parent: &engine.ParentRef{WorkflowID: "etl", RootWorkflowID: "etl", Owner: "etl"}},
		inner: {WorkflowID: inner, Parent: &engine.ParentRef{WorkflowID: loop, RootWorkflowID: "etl", Owner: "etl"}},
		// An iteration that names no defining workflow: its root is not
		// taken (below a subworkflow it would be another workflow's).
		orphan: {WorkflowID: orphan, Parent: &engine.ParentRef{WorkflowID: "x", RootWorkflowID: "etl"}},
	}
	res := New(cfg, g, r)
	for _, tc := range []struct {
		name     string
		wf       string
		team     string
		refusal  string // a substring of the refusal
		platform bool
	}{
		{"the workflow's owners' team", "etl", "data", "", false},
		{"the first mapped owner team by name", "train", "data", "", false},
		{"a subworkflow child: its own owners", "child", "ml", "", false},
		{"a loop iteration: the loop's workflow", loop, "data", "", false},
		{"a nested loop iteration: the workflow that defines it", inner, "data", "", false},
		{"owners with no mapped team", "solo", "", `owners (arn:aws:iam::123456789012:role/alice) name no team`, false},
		{"no recorded owners", "unknown", "", `workflow "unknown" has no recorded owners`, false},
		{"an iteration without its defining workflow", orphan, "", "names no workflow that defines it", false},
		{"an iteration whose run cannot be read", gone, "", "", true},
		{"a grant read failing", "broken", "", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := orchestrator.StepWork{StepRef: orchestrator.StepRef{WorkflowID: tc.wf, InstanceID: 1, RunID: 1, StepID: "s", Attempt: 1}, StepType: model.StepECS}
			s, err := res.Scope(context.Background(), m)
			msg, refused := teamrights.IsRefusal(err)
			switch {
			case tc.platform:
				if err == nil || refused {
					t.Fatalf("Scope = %+v, %v; want a platform error", s, err)
				}
			case tc.refusal != "":
				if !refused || !strings.Contains(msg, tc.refusal) {
					t.Fatalf("Scope = %+v, %v; want a refusal saying %q", s, err, tc.refusal)
				}
			default:
				if err != nil || !s.Enforced || s.Team != tc.team || s.Rights.TaskRoleARN != cfg[tc.team].TaskRoleARN {
					t.Fatalf("Scope = %+v, %v; want team %q's rights", s, err, tc.team)
				}
			}
		})
	}
}

func TestScopeUnconfigured(t *testing.T) {
	m := orchestrator.StepWork{StepRef: orchestrator.StepRef{WorkflowID: "etl"}}
	for name, r := range map[string]*Resolver{"nil": nil, "empty": New(teamrights.Config{}, nil, nil)} {
		if s, err := r.Scope(context.Background(), m); err != nil || s.Enforced {
			t.Errorf("%s resolver: %+v, %v; want nothing enforced", name, s, err)
		}
	}
	// Configured, but no grant source wired: every launch is refused.
	r := New(teamrights.Config{"data": {}}, nil, nil)
	if _, err := r.Scope(context.Background(), m); err == nil {
		t.Error("configured without a grant source: no refusal")
	} else if _, ok := teamrights.IsRefusal(err); !ok {
		t.Errorf("configured without a grant source: %v, want a refusal", err)
	}
}
