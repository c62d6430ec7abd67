package engine

import (
	"encoding/json"
	"fmt"
	"maps"
)

// Limits of the dynamic signal outputs of one step attempt. They are held
// in the run's state until the attempt succeeds, so they are bounded well
// below DynamoDB's item size.
const (
	// MaxDynamicSignals bounds the dynamic signal outputs of an attempt.
	MaxDynamicSignals = 20
	// MaxDynamicSignalBytes bounds their JSON encoding, all together.
	MaxDynamicSignalBytes = 32 << 10
)

// DynamicSignal is a signal output a step's job reported at run time
// (Maestro's maestro_dynamic_output artifact) rather than one its
// definition declares: announced, like a declared one, when the attempt
// succeeds, with the attempt as its publisher.
type DynamicSignal struct {
	Name string `json:"name"`
	// Params are the signal's LONG (int64) and STRING params.
	Params map[string]any `json:"params,omitempty"`
	// Payload holds its other values.
	Payload map[string]any `json:"payload,omitempty"`
}

// CheckDynamicSignals reports whether sigs are within the limits of one
// attempt's dynamic signal outputs, each with a name.
func CheckDynamicSignals(sigs []DynamicSignal) error {
	if len(sigs) > MaxDynamicSignals {
		return fmt.Errorf("%d dynamic signal outputs, more than %d", len(sigs), MaxDynamicSignals)
	}
	for k, s := range sigs {
		if s.Name == "" {
			return fmt.Errorf("dynamic signal output %d has no name", k)
		}
	}
	if len(sigs) == 0 {
		return nil
	}
	b, err := json.Marshal(sigs)
	if err != nil {
		return fmt.Errorf("dynamic signal outputs: %w", err)
	}
	if len(b) > MaxDynamicSignalBytes {
		return fmt.Errorf("dynamic signal outputs are %d bytes of JSON, more than %d", len(b), MaxDynamicSignalBytes)
	}
	return nil
}

// dynamicSignalOutputs emits an AnnounceSignal command for each of the
// dynamic signal outputs of step attempt s, numbered after its declared
// ones (from), so that each announcement's request id is its own.
func (d *decider) dynamicSignalOutputs(s *StepState, from int, sigs []DynamicSignal) {
	for k, sig := range sigs {
		d.out.Commands = append(d.out.Commands, AnnounceSignal{StepID: s.StepID, Attempt: s.Attempt, Index: from + k,
			Name: sig.Name, Params: signalParams(sig.Params), Payload: sig.Payload})
	}
}

// cloneSignals returns a copy of sigs whose maps are its own; nil for none.
func cloneSignals(sigs []DynamicSignal) []DynamicSignal {
	if len(sigs) == 0 {
		return nil
	}
	out := make([]DynamicSignal, len(sigs))
	for i, s := range sigs {
		out[i] = DynamicSignal{Name: s.Name, Params: maps.Clone(s.Params), Payload: maps.Clone(s.Payload)}
	}
	return out
}
