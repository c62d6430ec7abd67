package engine

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/maestro-serverless/maestro/jsonnum"
	"github.com/maestro-serverless/maestro/model"
)

// compiledSet is a compiled param set, or why it did not compile.
type compiledSet struct {
	set ParamSet
	err error
}

// compiledOutput is a compiled signal output of a step.
type compiledOutput struct {
	name            string
	params, payload compiledSet
}

// compileSignals compiles step i's signal dependency match params and
// signal outputs. They see what the step's own params see, plus the step's
// params (outputs are evaluated once the step succeeded).
func (g *Graph) compileSignals(ev Evaluator, i int) {
	s := g.nodes[i].step
	if len(s.SignalDependencies) == 0 && len(s.SignalOutputs) == 0 {
		return
	}
	scope := stepScope(g.scope, s)
	for _, dep := range s.SignalDependencies {
		ps := model.Params{Names: dep.MatchNames, Defs: map[string]*model.ParamDefinition{}}
		for _, n := range dep.MatchNames {
			if m := dep.MatchParams[n]; m != nil && m.Param != nil {
				ps.Defs[n] = m.Param
			}
		}
		var c compiledSet
		c.set, c.err = ev.CompileParams(ps, scope)
		g.nodes[i].deps = append(g.nodes[i].deps, c)
	}
	for _, out := range s.SignalOutputs {
		co := compiledOutput{name: out.Name}
		if len(out.Params.Names) > 0 {
			co.params.set, co.params.err = ev.CompileParams(out.Params, scope)
		}
		if len(out.Payload.Names) > 0 {
			co.payload.set, co.payload.err = ev.CompileParams(out.Payload, scope)
		}
		g.nodes[i].outputs = append(g.nodes[i].outputs, co)
	}
}

// SignalCondition is one evaluated match condition of a signal dependency:
// the signal's param Param compared by Op with Value.
type SignalCondition struct {
	Param string               `json:"param"`
	Op    model.SignalOperator `json:"operator"`
	Value any                  `json:"value"`
}

// SignalQuery asks for an announced signal that satisfies one dependency of
// a step attempt.
type SignalQuery struct {
	StepID     string
	Attempt    int64
	Index      int
	Name       string
	Conditions []SignalCondition
}

// SignalMatch is a signal instance: one that satisfied a dependency, or one
// that triggered the run.
type SignalMatch struct {
	Name   string         `json:"name"`
	Seq    int64          `json:"seq_id"`
	Params map[string]any `json:"params,omitempty"`
}

// Signals finds announced signals for step dependencies. The engine stays
// pure: an implementation answers from the store, and its caller refuses
// to commit a decision whose lookups failed.
type Signals interface {
	// Find returns the newest signal named q.Name that meets all of
	// q.Conditions.
	Find(q SignalQuery) (SignalMatch, bool)
}

// WithSignals makes steps with signal dependencies look them up in s;
// without it such steps wait until they are bypassed.
func WithSignals(s Signals) Option { return func(d *decider) { d.signals = s } }

// Timer and event kinds of signal dependencies.
const (
	// PurposeSignalCheck re-checks a step's dependencies once, shortly
	// after it started waiting: a signal announced while the step was
	// registering as a waiter would otherwise wake nobody.
	PurposeSignalCheck TimerPurpose = "signal_check"
	// KindSignalArrived tags the JSON form of a SignalArrived event.
	KindSignalArrived EventKind = "signal_arrived"
)

// signalCheckDelay is when the one re-check of a waiting step's
// dependencies runs.
const signalCheckDelay = 30 * time.Second

// SignalArrived tells a run that a signal its waiting steps depend on was
// announced.
type SignalArrived struct {
	Name string `json:"name"`
	Seq  int64  `json:"seq_id"`
}

// Kind returns KindSignalArrived.
func (SignalArrived) Kind() EventKind { return KindSignalArrived }

func (SignalArrived) isEvent() {}

// MarshalJSON writes the event with its "kind".
func (e SignalArrived) MarshalJSON() ([]byte, error) {
	type plain SignalArrived
	return withKind(e.Kind(), plain(e))
}

// AnnounceSignal is the command to announce a step's signal output.
type AnnounceSignal struct {
	StepID  string         `json:"step_id"`
	Attempt int64          `json:"step_attempt_id"`
	Index   int            `json:"index"`
	Name    string         `json:"name"`
	Params  map[string]any `json:"params,omitempty"`
	Payload map[string]any `json:"payload,omitempty"`
}

// KindAnnounceSignal tags an AnnounceSignal command.
const KindAnnounceSignal CommandKind = "announce_signal"

// Kind returns KindAnnounceSignal.
func (AnnounceSignal) Kind() CommandKind { return KindAnnounceSignal }

func (AnnounceSignal) isCommand() {}

// MarshalJSON writes the command with its "kind".
func (c AnnounceSignal) MarshalJSON() ([]byte, error) {
	type plain AnnounceSignal
	return withKind(c.Kind(), plain(c))
}

// gateSignals lets step i (INITIALIZED, or resumed) past its signal
// dependencies: it reports true when every dependency has a matching
// signal. Otherwise the step waits in WAITING_FOR_SIGNALS, naming the
// signals it waits for, and one re-check timer is armed.
func (d *decider) gateSignals(i int) bool {
	n := &d.g.nodes[i]
	if len(n.deps) == 0 {
		return true
	}
	s := &d.st.Steps[i]
	if len(s.SignalDeps) != len(n.deps) {
		s.SignalDeps = make([]*SignalMatch, len(n.deps))
	}
	defaults := defaultStepParams(d.st, s.StepID, s.Attempt)
	env := &Env{
		Vars: overlay(d.st.Params, defaults), Step: d.stepFn, StepFields: stepFields(s, defaults),
		Instance: d.instanceFields(), Seed: defaults[ParamStepInstanceUUID].(string) + "/signals",
		Now: d.clock(),
	}
	var waiting []string
	for k, c := range n.deps {
		if s.SignalDeps[k] != nil {
			continue
		}
		dep := &n.step.SignalDependencies[k]
		if c.err != nil {
			d.endStep(i, model.StepFatallyFailed, fmt.Sprintf("signal dependency %d (%s): %v", k, dep.Name, c.err))
			return false
		}
		vals, err := c.set.Eval(d.ctx, env)
		if err != nil {
			d.endStep(i, model.StepFatallyFailed, fmt.Sprintf("signal dependency %d (%s): %v", k, dep.Name, err))
			return false
		}
		q := SignalQuery{StepID: s.StepID, Attempt: s.Attempt, Index: k, Name: dep.Name}
		for _, p := range dep.MatchNames {
			m := dep.MatchParams[p]
			if m == nil {
				continue
			}
			op := m.Operator
			if op == "" {
				op = model.OpEqual
			}
			q.Conditions = append(q.Conditions, SignalCondition{Param: p, Op: op, Value: vals[p]})
		}
		if d.signals != nil {
			if match, ok := d.signals.Find(q); ok {
				s.SignalDeps[k] = &match
				continue
			}
		}
		waiting = append(waiting, dep.Name)
	}
	if len(waiting) == 0 {
		s.WaitsFor = nil
		return true
	}
	first := s.Status != model.StepWaitingForSignals
	s.WaitsFor = waiting
	if first {
		d.setStepStatus(i, model.StepWaitingForSignals, "waiting for signals: "+joinTags(waiting))
		d.out.Commands = append(d.out.Commands, StartTimer{
			StepID: s.StepID, Attempt: s.Attempt, Purpose: PurposeSignalCheck,
			FireAt: time.UnixMilli(d.now + signalCheckDelay.Milliseconds()).UTC(),
		})
	}
	return false
}

// signalArrived re-checks the steps waiting for a signal of that name.
func (d *decider) signalArrived(e SignalArrived) error {
	if d.st.Status != model.WorkflowInProgress {
		return nil
	}
	if err := d.checkSteps(); err != nil {
		return err
	}
	d.startCounting()
	for i := range d.st.Steps {
		s := &d.st.Steps[i]
		if s.Status == model.StepWaitingForSignals && slices.Contains(s.WaitsFor, e.Name) {
			d.recheckSignals(i)
		}
	}
	return d.advance()
}

// signalCheck is the one re-check timer of a waiting step.
func (d *decider) signalCheck(e TimerFired) error {
	i, ok, err := d.attemptIf(e.StepID, e.Attempt, func(s *StepState) bool { return s.Status == model.StepWaitingForSignals })
	if err != nil || !ok {
		return err
	}
	d.startCounting()
	d.recheckSignals(i)
	return d.advance()
}

// recheckSignals looks the waiting step i's dependencies up again and
// lets it go on when they are met.
func (d *decider) recheckSignals(i int) {
	if d.gateSignals(i) {
		d.starts++
		d.evaluate(i)
	}
}

// bypassSignals releases a step waiting for signals without them
// (BYPASS_STEP_DEPENDENCIES).
func (d *decider) bypassSignals(i int) {
	s := &d.st.Steps[i]
	s.WaitsFor = nil
	d.starts++
	d.evaluate(i)
}

// signalEnv adds the run's trigger signals and step i's dependency signals
// to env.
func (d *decider) signalEnv(env *Env, i int) {
	if sigs := d.st.Initiator.Signals; len(sigs) > 0 {
		env.Signals = make(map[string]map[string]any, len(sigs))
		env.SignalParams = map[string]any{}
		for _, sg := range sigs {
			params := signalParams(sg.Params)
			env.Signals[sg.Name] = params
			for k, v := range params {
				if _, seen := env.SignalParams[k]; !seen {
					env.SignalParams[k] = v
				}
			}
		}
	}
	if i >= 0 {
		if deps := d.st.Steps[i].SignalDeps; len(deps) > 0 {
			env.SignalDependencies = make([]map[string]any, len(deps))
			for k, m := range deps {
				if m != nil {
					env.SignalDependencies[k] = signalParams(m.Params)
				}
			}
		}
	}
}

// signalOutputs evaluates step i's signal outputs as it succeeds and emits
// an AnnounceSignal command for each.
func (d *decider) signalOutputs(i int) error {
	n := &d.g.nodes[i]
	s := &d.st.Steps[i]
	dynamic := s.Signals
	s.Signals = nil
	if len(n.outputs) == 0 {
		d.dynamicSignalOutputs(s, 0, dynamic)
		return nil
	}
	env := &Env{
		Vars: overlay(d.st.Params, s.Params), Step: d.stepFn, StepFields: stepFields(s, s.Params),
		Instance: d.instanceFields(), Seed: stepUUID(d.st.UUID, s.StepID, s.Attempt) + "/signal-outputs",
		Now: d.clock(),
	}
	d.signalEnv(env, i)
	cmds := make([]Command, 0, len(n.outputs))
	for k, out := range n.outputs {
		eval := func(c compiledSet) (map[string]any, error) {
			if c.err != nil {
				return nil, c.err
			}
			if c.set == nil {
				return nil, nil
			}
			v, err := c.set.Eval(d.ctx, env)
			if err != nil {
				return nil, err
			}
			return normalizeEach(v, "%s")
		}
		params, err := eval(out.params)
		if err != nil {
			return fmt.Errorf("signal output %d (%s) params: %w", k, out.name, err)
		}
		payload, err := eval(out.payload)
		if err != nil {
			return fmt.Errorf("signal output %d (%s) payload: %w", k, out.name, err)
		}
		cmds = append(cmds, AnnounceSignal{StepID: s.StepID, Attempt: s.Attempt, Index: k, Name: out.name, Params: params, Payload: payload})
	}
	d.out.Commands = append(d.out.Commands, cmds...)
	d.dynamicSignalOutputs(s, len(n.outputs), dynamic)
	return nil
}

// succeed ends step i SUCCEEDED through FINISHING, announcing its signal
// outputs; outputs that cannot be evaluated fail it instead.
func (d *decider) succeed(i int, msg string) {
	if err := d.signalOutputs(i); err != nil {
		d.endStep(i, model.StepFatallyFailed, err.Error())
		return
	}
	d.setStepStatus(i, model.StepFinishing, "")
	d.endStep(i, model.StepSucceeded, msg)
}

// signalParams returns signal params as LONG (int64) or STRING values:
// decoded from stored JSON (through jsonnum.Decode), whole numbers arrive as
// json.Number and become int64 exactly.
func signalParams(in map[string]any) map[string]any {
	out := make(map[string]any, len(in))
	for k, v := range in {
		switch x := v.(type) {
		case json.Number:
			if n, ok := jsonnum.Long(string(x)); ok {
				v = n
			}
		case int:
			v = int64(x)
		}
		out[k] = v
	}
	return out
}
