package engine

import (
	"encoding/json"
	"fmt"
)

// stateStepsField is the JSON name of Instance.Steps; StepEntryID reads
// StepState.StepID's. TestStateJSONAgreesWithInstance holds both to the
// fields' tags.
const stateStepsField = "steps"

// SplitState splits a run state document (an Instance's JSON) without
// decoding its values: fields holds its members other than its step
// entries, steps its step entries (Instance.Steps, each a StepState's
// JSON) in order, nil when it has none. It is for code that stores a
// run's state in parts (package store pages it) and must not know the
// document's field names; JoinState puts the parts back together.
func SplitState(state []byte) (fields map[string]json.RawMessage, steps []json.RawMessage, err error) {
	if err := json.Unmarshal(state, &fields); err != nil {
		return nil, nil, fmt.Errorf("run state: %w", err)
	}
	if raw, ok := fields[stateStepsField]; ok {
		if err := json.Unmarshal(raw, &steps); err != nil {
			return nil, nil, fmt.Errorf("run state steps: %w", err)
		}
		delete(fields, stateStepsField)
	}
	return fields, steps, nil
}

// JoinState returns the run state document whose members are fields and
// whose step entries are steps, left out when there are none (as
// Instance.Steps is): fields in key order and every value compacted, as
// encoding/json writes a map. It sets fields' step entries to steps; nil
// fields with no steps make the document null.
func JoinState(fields map[string]json.RawMessage, steps []json.RawMessage) ([]byte, error) {
	if len(steps) == 0 {
		delete(fields, stateStepsField)
	} else {
		raw, err := json.Marshal(steps)
		if err != nil {
			return nil, fmt.Errorf("run state steps: %w", err)
		}
		if fields == nil {
			fields = map[string]json.RawMessage{}
		}
		fields[stateStepsField] = raw
	}
	b, err := json.Marshal(fields)
	if err != nil {
		return nil, fmt.Errorf("run state: %w", err)
	}
	return b, nil
}

// StepEntryID returns the step id (StepState.StepID) of a step entry of a
// run state document, as SplitState returns them.
func StepEntryID(entry json.RawMessage) (string, error) {
	var e struct {
		StepID string `json:"step_id"`
	}
	if err := json.Unmarshal(entry, &e); err != nil {
		return "", fmt.Errorf("step entry: %w", err)
	}
	return e.StepID, nil
}
