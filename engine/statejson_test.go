package engine

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/model"
)

// TestStateJSONAgreesWithInstance: SplitState, JoinState and StepEntryID
// read and write the names Instance's and StepState's JSON tags give, so
// renaming either tag fails here.
func TestStateJSONAgreesWithInstance(t *testing.T) {
	inst := Instance{WorkflowID: "wf", InstanceID: 7, RunID: 2, UUID: "u", Status: model.WorkflowInProgress,
		Steps: []StepState{
			{StepID: "a", Attempt: 1, Status: model.StepSucceeded, StartTime: 10, EndTime: 20},
			{StepID: "b", Attempt: 2, Status: model.StepRunning, Message: "<retry>", ErrorRetries: 1},
			{StepID: "c", Status: model.StepNotCreated},
		},
		Seq: 9, Version: 3}
	state, err := json.Marshal(inst)
	require.NoError(t, err)

	fields, steps, err := SplitState(state)
	require.NoError(t, err)
	require.Len(t, steps, len(inst.Steps), "the step entries are Instance.Steps")
	for i, s := range inst.Steps {
		want, err := json.Marshal(s)
		require.NoError(t, err)
		assert.JSONEq(t, string(want), string(steps[i]), "entry %d", i)
		id, err := StepEntryID(steps[i])
		require.NoError(t, err)
		assert.Equal(t, s.StepID, id, "StepEntryID is StepState.StepID")
	}
	var rest Instance
	require.NoError(t, json.Unmarshal(mustJSON(json.Marshal(fields)), &rest))
	assert.Nil(t, rest.Steps, "fields hold no step entries")
	want := inst
	want.Steps = nil
	assert.Equal(t, want, rest, "fields hold every other member")

	joined, err := JoinState(fields, steps)
	require.NoError(t, err)
	var back Instance
	require.NoError(t, json.Unmarshal(joined, &back))
	assert.Equal(t, inst, back, "JoinState(SplitState(state)) is the state")
	assert.JSONEq(t, string(state), string(joined))

	// No step entries: left out, as Instance.Steps's omitempty does.
	none, err := JoinState(fields, nil)
	require.NoError(t, err)
	assert.JSONEq(t, string(mustJSON(json.Marshal(want))), string(none))
	_, steps, err = SplitState(none)
	require.NoError(t, err)
	assert.Nil(t, steps)
}

// TestStateJSONRefusesMalformedDocuments: a state that is not an object,
// step entries that are not an array, an entry that is not an object.
func TestStateJSONRefusesMalformedDocuments(t *testing.T) {
	for _, st := range []string{"not json", `[1]`, `{"steps":3}`, ""} {
		_, _, err := SplitState([]byte(st))
		assert.Error(t, err, "state %q", st)
	}
	_, err := StepEntryID(json.RawMessage(`[1]`))
	assert.Error(t, err)
	// A null state has no fields and no entries; joined with entries it is
	// an object.
	fields, steps, err := SplitState([]byte(`null`))
	require.NoError(t, err)
	assert.Nil(t, steps)
	b, err := JoinState(fields, nil)
	require.NoError(t, err)
	assert.Equal(t, "null", string(b))
	b, err = JoinState(fields, []json.RawMessage{json.RawMessage(`{"step_id":"a"}`)})
	require.NoError(t, err)
	assert.Equal(t, `{"steps":[{"step_id":"a"}]}`, string(b))
}

func mustJSON(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
