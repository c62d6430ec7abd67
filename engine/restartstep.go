package engine

import (
	"time"

	"github.com/maestro-serverless/maestro/model"
)

// SkippedByUser is the timeline message of a step a skip action ended when
// it restarted it (Maestro's wording).
const SkippedByUser = "Step is skipped because of a user skip action."

// StepRestart is what a step restart asks of the step it restarts (Maestro's
// restart config for one step): its step run params, merged over the
// definition's for that attempt, and whether the restart is a user's skip
// of a step that had ended (the step restarts and ends SKIPPED at once).
type StepRestart struct {
	StepID string        `json:"step_id"`
	Params *model.Params `json:"params,omitempty"`
	Skip   bool          `json:"skip,omitempty"`
}

// apply marks step s, just reset to run again, with what r asks of it.
func (r *StepRestart) apply(s *StepState) {
	if r == nil {
		return
	}
	s.RestartParams = r.Params
	s.SkipOnStart = r.Skip
}

// RestartStepRun is RestartFromStep with r applied to the restarted step
// r.StepID: the first state of the run that restarts prev from that step.
func RestartStepRun(g *Graph, prev *Instance, r StepRestart, now time.Time) (*Instance, error) {
	next, err := RestartFromStep(g, prev, r.StepID, now)
	if err != nil {
		return nil, err
	}
	r.apply(&next.Steps[g.index[r.StepID]])
	return next, nil
}

// stepParamDefs are step i's param definitions for its current attempt:
// the definition's, with the step run params of a restart merged over them.
func (d *decider) stepParamDefs(i int) (model.Params, bool) {
	n := &d.g.nodes[i]
	rp := d.st.Steps[i].RestartParams
	if rp == nil || len(rp.Names) == 0 {
		return n.step.Params, false
	}
	return n.step.Params.Merged(*rp), true
}

// skipOnStart ends step i, just created, as SKIPPED when a user's skip of
// it restarted it; it reports whether it did.
func (d *decider) skipOnStart(i int) bool {
	s := &d.st.Steps[i]
	if !s.SkipOnStart {
		return false
	}
	s.SkipOnStart = false
	d.endStep(i, model.StepSkipped, SkippedByUser)
	return true
}
