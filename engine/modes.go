package engine

import (
	"fmt"
	"slices"

	"github.com/maestro-serverless/maestro/model"
)

// CheckRunParamModes reports run params that override a definition param
// whose mode forbids it: CONSTANT and IMMUTABLE params are never changed by
// run params, MUTABLE_ON_START params only at start (restart false), and
// MUTABLE / MUTABLE_ON_START_RESTART params at start and restart. Each
// problem names the param and its mode.
func CheckRunParamModes(defined model.Params, run model.Params, restart bool) []string {
	var problems []string
	names := run.Names
	if len(names) == 0 {
		for n := range run.Defs {
			names = append(names, n)
		}
		slices.Sort(names)
	}
	for _, name := range names {
		def, ok := defined.Defs[name]
		if !ok || def == nil {
			continue // a new param: allowed
		}
		mode := def.Mode
		if mode == "" {
			mode = model.ModeMutable
		}
		switch {
		case mode == model.ModeConstant || mode == model.ModeImmutable:
			problems = append(problems, fmt.Sprintf("run_params.%s: param %q is %s and cannot be set by run params", name, name, mode))
		case restart && mode == model.ModeMutableOnStart:
			problems = append(problems, fmt.Sprintf("run_params.%s: param %q is MUTABLE_ON_START and cannot be changed on restart", name, name))
		}
	}
	return problems
}
