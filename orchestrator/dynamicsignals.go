package orchestrator

import (
	"encoding/json"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/signals"
)

// DynamicSignals reads a job's maestro_dynamic_output artifact (raw, at
// JSON path at) as the dynamic signal outputs of its step attempt: each
// checked as an announcement is (signals.ParseDynamicOutput), all together
// within the attempt's limits (engine.CheckDynamicSignals). Problems are
// "<path>: <rule>"; the signals are usable only when there are none.
func DynamicSignals(raw json.RawMessage, at string) ([]engine.DynamicSignal, []string) {
	anns, problems := signals.ParseDynamicOutput(raw, at)
	if len(problems) > 0 {
		return nil, problems
	}
	out := make([]engine.DynamicSignal, len(anns))
	for i, a := range anns {
		out[i] = engine.DynamicSignal{Name: a.Name, Params: a.Params, Payload: a.Payload}
		if len(a.Params) == 0 {
			out[i].Params = nil
		}
	}
	if err := engine.CheckDynamicSignals(out); err != nil {
		return nil, []string{at + ".signal_outputs: " + err.Error()}
	}
	return out, nil
}
