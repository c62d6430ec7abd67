package engine

import (
	"encoding/json"
	"fmt"
	"maps"

	"github.com/maestro-serverless/maestro/model"
)

// Rollup counts the leaf steps of a run's tree by status (Maestro's
// WorkflowRollupOverview, without its per-step references): the run's own
// steps other than foreach, while and subworkflow steps, plus the leaf
// steps of the child runs those started. A child counts once it has ended
// and reported its own rollup (ChildEnded.Rollup); a run's parent keeps
// the sum of its ended children per loop or subworkflow step, so the
// state holds a few counters per such step, never one entry per child.
type Rollup struct {
	TotalLeafCount int64                      `json:"total_leaf_count"`
	Overview       map[model.StepStatus]int64 `json:"overview,omitempty"`
}

// add adds o's counts to r.
func (r *Rollup) add(o *Rollup) {
	if o == nil {
		return
	}
	r.TotalLeafCount += o.TotalLeafCount
	for k, v := range o.Overview {
		if r.Overview == nil {
			r.Overview = map[model.StepStatus]int64{}
		}
		r.Overview[k] += v
	}
}

func (r *Rollup) clone() *Rollup {
	if r == nil {
		return nil
	}
	return &Rollup{TotalLeafCount: r.TotalLeafCount, Overview: maps.Clone(r.Overview)}
}

// RollupOf returns the rollup of run st of a definition compiled as g: its
// own leaf steps by status (NOT_CREATED included) and its ended children's
// rollups.
func RollupOf(g *Graph, st *Instance) *Rollup {
	r := &Rollup{Overview: map[model.StepStatus]int64{}}
	for i := range g.nodes {
		step := g.nodes[i].step
		var s *StepState
		if i < len(st.Steps) {
			s = &st.Steps[i]
		}
		switch {
		case isForeach(step) || isWhile(step):
			if s != nil && s.Loop != nil {
				r.add(s.Loop.Rollup)
			}
		case isSubworkflow(step):
			if s != nil && s.Child != nil {
				r.add(s.Child.Rollup)
			}
		default:
			status := model.StepNotCreated
			if s != nil && s.Status != "" {
				status = s.Status
			}
			r.TotalLeafCount++
			r.Overview[status]++
		}
	}
	return r
}

// rollupJSON is Rollup in Maestro's JSON shape: each status's count as
// {"cnt": n}.
type rollupJSON struct {
	TotalLeafCount int64                          `json:"total_leaf_count"`
	Overview       map[model.StepStatus]countJSON `json:"overview,omitempty"`
}

type countJSON struct {
	Cnt int64 `json:"cnt"`
}

// MarshalJSON writes the rollup in Maestro's shape.
func (r Rollup) MarshalJSON() ([]byte, error) {
	out := rollupJSON{TotalLeafCount: r.TotalLeafCount}
	if len(r.Overview) > 0 {
		out.Overview = make(map[model.StepStatus]countJSON, len(r.Overview))
		for k, v := range r.Overview {
			out.Overview[k] = countJSON{v}
		}
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads the rollup from Maestro's shape.
func (r *Rollup) UnmarshalJSON(data []byte) error {
	var in rollupJSON
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	r.TotalLeafCount, r.Overview = in.TotalLeafCount, nil
	if len(in.Overview) > 0 {
		r.Overview = make(map[model.StepStatus]int64, len(in.Overview))
		for k, v := range in.Overview {
			r.Overview[k] = v.Cnt
		}
	}
	return nil
}

// bodyLeaves counts the typed (leaf) steps of a loop body's top level:
// the leaf steps each iteration has at least.
func bodyLeaves(steps []model.Step) int64 {
	var n int64
	for i := range steps {
		switch steps[i].Kind {
		case model.KindForeach, model.KindWhile, model.KindSubworkflow:
		default:
			n++
		}
	}
	return n
}

// checkLeafLimit stops a root run whose tree has grown past
// model.TotalLeafStepCountLimit leaf steps (what its ended children
// reported, and its own), as Maestro's end task does: the run ends
// STOPPED, its running steps stopped, with a message naming the limit.
func (d *decider) checkLeafLimit() error {
	if d.st.Parent != nil || d.st.Status != model.WorkflowInProgress || d.st.Ending != nil {
		return nil
	}
	n := RollupOf(d.g, d.st).TotalLeafCount
	if n <= model.TotalLeafStepCountLimit {
		return nil
	}
	msg := fmt.Sprintf("stopped: the instance's tree has %d leaf steps, more than the limit of %d", n, model.TotalLeafStepCountLimit)
	return d.endRun(Ending{StepStatus: model.StepStopped, StepMessage: msg, RunStatus: model.WorkflowStopped, Message: msg})
}
