package events

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTransitionAndDefinitionEvents(t *testing.T) {
	inst := Transition("wf", 2, 7, 1, "", 0, "CREATED", "IN_PROGRESS", 1, 100)
	assert.Equal(t, Event{ID: "wf/7/1", Type: InstanceStatusChanged, WorkflowID: "wf", Version: 2, InstanceID: 7, RunID: 1,
		OldStatus: "CREATED", NewStatus: "IN_PROGRESS", Sequence: 1, LastSequence: 1, Time: 100,
		Transitions: []Change{{OldStatus: "CREATED", NewStatus: "IN_PROGRESS", Sequence: 1, Time: 100}}}, inst)
	// A decision's changes of one step in one event, summarised.
	many := Transitions("wf", 2, 7, 1, "job.1", 1, []Change{
		{OldStatus: "NOT_CREATED", NewStatus: "CREATED", Sequence: 4, Time: 100},
		{OldStatus: "CREATED", NewStatus: "INITIALIZED", Sequence: 5, Time: 100},
		{OldStatus: "INITIALIZED", NewStatus: "FATALLY_FAILED", Sequence: 6, Time: 101},
	})
	assert.Equal(t, "wf/7/4", many.ID)
	assert.Equal(t, "NOT_CREATED", many.OldStatus)
	assert.Equal(t, "FATALLY_FAILED", many.NewStatus)
	assert.Equal(t, int64(4), many.Sequence)
	assert.Equal(t, int64(6), many.LastSequence)
	assert.Equal(t, int64(101), many.Time)
	assert.Equal(t, "FATALLY_FAILED", Attributes(many)[AttrStatus])
	step := Transition("wf", 2, 7, 1, "job.1", 3, "RUNNING", "SUCCEEDED", 9, 200)
	assert.Equal(t, StepStatusChanged, step.Type)
	assert.Equal(t, "job.1", step.StepID)
	assert.Equal(t, int64(3), step.Attempt)
	assert.Equal(t, map[string]string{AttrType: "step_status_changed", AttrWorkflowID: "wf", AttrStatus: "SUCCEEDED", AttrRootWorkflowID: "wf"}, Attributes(step))
	// A child run's events name its parent; filters select a whole tree
	// by its root.
	child := step
	child.WorkflowID = "maestro_foreach_ab"
	child.Parent = &Parent{WorkflowID: "mid", InstanceID: 3, RunID: 1, StepID: "loop", Attempt: 1, RootWorkflowID: "top", RootInstanceID: 9}
	assert.Equal(t, "top", Attributes(child)[AttrRootWorkflowID])

	def := Definition(VersionActivated, "wf", 4, 12, 300)
	assert.Equal(t, "wf/definition/12", def.ID)
	assert.Equal(t, map[string]string{AttrType: "version_activated", AttrWorkflowID: "wf"}, Attributes(def))
	assert.Len(t, Types(), 9)
}

// TestTeamEvents: a team event names its team instead of a workflow; its
// attributes leave the empty workflow id out (SNS refuses an empty
// attribute value) and carry the team and what became of it; a batch of
// them decodes.
func TestTeamEvents(t *testing.T) {
	e := TeamChange("data", TeamDeleted, 7, 300)
	assert.Equal(t, Event{ID: "teams/7", Type: TeamChanged, Team: "data", NewStatus: "DELETED", Sequence: 7, Time: 300}, e)
	assert.Equal(t, map[string]string{AttrType: "team_changed", AttrTeam: "data", AttrStatus: "DELETED"}, Attributes(e))
	for k, v := range Attributes(Definition(AccessChanged, "wf", 0, 3, 1)) {
		assert.NotEmpty(t, v, "attribute %s", k)
	}
	enc, err := EncodeBatch([]Event{e, Definition(AccessChanged, "wf", 0, 3, 1)})
	require.NoError(t, err)
	got, err := DecodeBatch(enc)
	require.NoError(t, err)
	assert.Equal(t, []Event{e, Definition(AccessChanged, "wf", 0, 3, 1)}, got)
	// An event naming neither a workflow nor a team is still refused.
	_, err = DecodeBatch(`[{"event_id":"x","type":"team_changed"}]`)
	assert.ErrorContains(t, err, "lacks an id, type, or workflow id or team")
}

func TestBatchRoundTrip(t *testing.T) {
	tests := []struct {
		name    string
		n       int
		gzipped bool
	}{
		{"empty", 0, false},
		{"small stays JSON", 2, false},
		{"large is gzipped", 300, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			evs := make([]Event, tc.n)
			for i := range evs {
				evs[i] = Transition("wf", 1, 1, 1, fmt.Sprintf("job.%d", i%40), 1, "RUNNING", "SUCCEEDED", int64(i+1), 1_763_776_800_000)
			}
			enc, err := EncodeBatch(evs)
			require.NoError(t, err)
			assert.Equal(t, tc.gzipped, strings.HasPrefix(enc, gzipPrefix))
			if tc.gzipped {
				plain, _ := EncodeBatch(evs[:2])
				assert.Less(t, len(enc), 300*len(plain)/2/10, "gzip should shrink a decision's events at least 10x")
			}
			got, err := DecodeBatch(enc)
			require.NoError(t, err)
			if tc.n == 0 {
				assert.Empty(t, got)
				return
			}
			assert.Equal(t, evs, got)
		})
	}
}

func TestPlainBatchRoundTrip(t *testing.T) {
	evs := make([]Event, 300)
	for i := range evs {
		evs[i] = Transition("wf", 1, 1, 1, fmt.Sprintf("job.%d", i%40), 1, "RUNNING", "SUCCEEDED", int64(i+1), 1_763_776_800_000)
	}
	enc, err := EncodePlainBatch(evs)
	require.NoError(t, err)
	assert.False(t, strings.HasPrefix(enc, gzipPrefix), "a plain batch is never gzipped")
	got, err := DecodeBatch(enc)
	require.NoError(t, err)
	assert.Equal(t, evs, got)
}

func TestDecodeBatchRejectsGarbage(t *testing.T) {
	for _, s := range []string{"", "{}", "z:!!!", "z:" + "aGVsbG8=", `[{"type":"x"}]`} {
		_, err := DecodeBatch(s)
		assert.Error(t, err, "%q", s)
	}
}

func FuzzDecodeBatch(f *testing.F) {
	enc, _ := EncodeBatch([]Event{Transition("wf", 1, 1, 1, "a", 1, "A", "B", 1, 1)})
	f.Add(enc)
	f.Add("z:H4sIAAAAAAAA/w==")
	f.Fuzz(func(t *testing.T, s string) {
		evs, err := DecodeBatch(s)
		if err != nil {
			return
		}
		// Decoding what was encoded gives events that encode the same:
		// (an empty list and an absent one are the same event).
		again, err := EncodeBatch(evs)
		require.NoError(t, err)
		back, err := DecodeBatch(again)
		require.NoError(t, err)
		third, err := EncodeBatch(back)
		require.NoError(t, err)
		assert.Equal(t, again, third)
	})
}
