package orchestrator

import (
	"fmt"
	"strings"
	"testing"

	"github.com/maestro-serverless/maestro/signals"
)

// Signal triggers over the memstore: a signal delivered (the work
// message its announcement sends) starts the workflows whose active
// version has a trigger it completes — its match params met, every name
// of a join found with the same join keys, the condition true — once per
// match, however often it is delivered.

// signal announces signal name with params and delivers it as its work
// message would; it returns its sequence number.
func (r *roleRig) signal(name string, params map[string]any) int64 {
	r.t.Helper()
	v, err := r.o.Signals.AnnounceSignal(r.ctx, signals.Announce{Name: name, Params: params}, SignalSource{Kind: "api"})
	if err != nil {
		r.t.Fatalf("announce %s: %v", name, err)
	}
	r.deliver(name, v.SeqID)
	return v.SeqID
}

// deliver delivers instance seq of signal name.
func (r *roleRig) deliver(name string, seq int64) {
	r.t.Helper()
	if _, err := r.work(wireWork{Kind: WorkSignal, SignalName: name, SignalSeq: seq}, nil); err != nil {
		r.t.Fatalf("deliver %s/%d: %v", name, seq, err)
	}
}

// instances is how many instances workflow wf has.
func (r *roleRig) instances(wf string) int {
	r.t.Helper()
	l, err := r.o.Runs.ListInstances(r.ctx, wf, "", "", 100)
	if err != nil {
		r.t.Fatal(err)
	}
	return len(l.Instances)
}

// trigDef is workflow "trig" with one signal trigger (its JSON) and
// properties props ("" for the rig's).
func trigDef(trigger, props string) string {
	return strings.Replace(workDef("trig", props, workStep("s", "NoOp", "")), `"steps"`, `"signal_triggers": [`+trigger+`], "steps"`, 1)
}

// rigSig is a signal to deliver: its name and a param of each kind.
type rigSig struct {
	name string
	dt   int64
	k    string
}

// TestSignalTriggersStartWorkflows: each case delivers its signals in
// order, and after each the workflow has the instances it says.
func TestSignalTriggersStartWorkflows(t *testing.T) {
	const atLeast5 = `{"definitions": {"t/a": {"match_params": {"dt": {"value": 5, "operator": ">="}}}}}`
	const joined = `{"definitions": {"t/a": {"join_keys": ["k"]}, "t/b": {"join_keys": ["k"]}}}`
	for _, c := range []struct {
		name, trigger, props string
		sigs                 []rigSig
		want                 []int // instances after each signal
	}{
		{"match params", atLeast5, "", []rigSig{{"t/a", 3, "x"}, {"t/a", 7, "x"}, {"t/other", 9, "x"}, {"t/a", 9, "x"}}, []int{0, 1, 1, 2}},
		{"a join", joined, "", []rigSig{{"t/a", 1, "x"}, {"t/b", 1, "y"}, {"t/b", 2, "x"}}, []int{0, 0, 1}},
		{"a condition", `{"definitions": {"t/a": {}}, "condition": "params.getFromSignal('t/a', 'dt') > 10"}`, "", []rigSig{{"t/a", 3, "x"}, {"t/a", 11, "x"}}, []int{0, 1}},
		{"a dedup expression", `{"definitions": {"t/a": {}}, "dedup_expr": "params.getFromSignal('t/a', 'k')"}`, "", []rigSig{{"t/a", 1, "x"}, {"t/a", 2, "x"}, {"t/a", 3, "y"}}, []int{1, 1, 2}},
		{"triggers disabled", atLeast5, `{"owner": "unit", "signal_trigger_disabled": true}`, []rigSig{{"t/a", 7, "x"}}, []int{0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRoleRig(t)
			r.push(trigDef(c.trigger, c.props))
			for i, s := range c.sigs {
				seq := r.signal(s.name, map[string]any{"dt": s.dt, "k": s.k})
				r.deliver(s.name, seq) // delivered twice: one start per match
				if got := r.instances("trig"); got != c.want[i] {
					t.Fatalf("after signal %d (%+v): %d instances, want %d", i, s, got, c.want[i])
				}
			}
		})
	}
}

// TestSignalTriggerStartsOnlyForLaterSignals: a signal announced before a
// trigger on its name became active does not fire it; the instance a
// later one starts says which signal started it, and the signal's lineage
// names it.
func TestSignalTriggerStartsOnlyForLaterSignals(t *testing.T) {
	r := newRoleRig(t)
	early, err := r.o.Signals.AnnounceSignal(r.ctx, signals.Announce{Name: "t/a", Params: map[string]any{"dt": int64(1)}}, SignalSource{Kind: "api"})
	if err != nil {
		t.Fatal(err)
	}
	r.push(trigDef(`{"definitions": {"t/a": {}}}`, ""))
	r.deliver("t/a", early.SeqID)
	if n := r.instances("trig"); n != 0 {
		t.Fatalf("an earlier signal started %d instances", n)
	}
	seq := r.signal("t/a", map[string]any{"dt": int64(2)})
	v, err := r.o.Runs.GetInstance(r.ctx, "trig", 1)
	if err != nil || v.Initiator == nil || v.Initiator.Type != "SIGNAL" {
		t.Fatalf("the triggered instance %+v %v", v, err)
	}
	lv, err := r.o.Signals.SignalLineage(r.ctx, "t/a", seq)
	if err != nil || len(lv.Triggered) != 1 || fmt.Sprintf("%s/%d", lv.Triggered[0].WorkflowID, lv.Triggered[0].InstanceID) != "trig/1" {
		t.Errorf("lineage %s %v", rigJSON(lv), err)
	}
}
