package bench

import (
	"encoding/json"
	"fmt"
)

// Workload is one benchmarked workflow: its Maestro definition and the
// edges of its DAG, which the step-launch overhead is measured over.
type Workload struct {
	// Name labels the workload in reports ("chain", "fanout").
	Name string
	// WorkflowID is the definition's workflow id.
	WorkflowID string
	// Definition is the JSON body pushed to POST /api/v3/workflows.
	Definition []byte
	// Upstreams maps each step to the steps that must finish before it
	// starts; root steps are absent.
	Upstreams map[string][]string
	// Steps is the number of steps in one instance.
	Steps int
	// CallsServer is set when every step calls the benchmark's Http server
	// (CallLog), which then measures the gaps between steps.
	CallsServer bool
	// Concurrent, when > 1, is how many instances are started at once, as
	// one round; Config.Runs rounds run one after the other.
	Concurrent int
	// Iterations, when > 0, is the foreach iterations of one instance: the
	// unit its throughput and cost are counted in instead of steps.
	Iterations int
	// Items, when > 0, is the items of the JSONL object the workload's
	// foreach reads (items_from): put into the stack's bucket at ItemsKey
	// before the definition is pushed, with ItemsBucket in the definition
	// replaced by the bucket's name.
	Items    int
	ItemsKey string
}

// defStep, defTransition, defWorkflow and defDocument are the subset of
// Maestro's definition JSON the generated workloads use.
type defStep struct {
	ID         string         `json:"id"`
	Type       string         `json:"type"`
	Params     map[string]any `json:"params,omitempty"`
	Transition *defTransition `json:"transition,omitempty"`
}

type defTransition struct {
	Successors map[string]string `json:"successors"`
}

type defWrapped struct {
	Step defStep `json:"step"`
}

type defWorkflow struct {
	ID    string       `json:"id"`
	Name  string       `json:"name"`
	Steps []defWrapped `json:"steps"`
}

type defDocument struct {
	Properties map[string]string `json:"properties"`
	Workflow   defWorkflow       `json:"workflow"`
}

// Chain returns a sequential chain of n NoOp steps, s1 -> s2 -> ... -> sn.
func Chain(workflowID string, n int) (*Workload, error) {
	if n < 1 {
		return nil, fmt.Errorf("bench: chain needs at least 1 step, got %d", n)
	}
	ups := map[string][]string{}
	steps := make([]defWrapped, 0, n)
	for i := 1; i <= n; i++ {
		s := defStep{ID: chainStep(i), Type: "NoOp"}
		if i < n {
			s.Transition = &defTransition{Successors: map[string]string{chainStep(i + 1): "true"}}
		}
		if i > 1 {
			ups[s.ID] = []string{chainStep(i - 1)}
		}
		steps = append(steps, defWrapped{Step: s})
	}
	return newWorkload("chain", workflowID, fmt.Sprintf("bench: %d-step NoOp chain", n), steps, ups)
}

// FanOut returns a fan-out of width NoOp steps between a root and a join:
// root -> f1..fwidth -> join (width+2 steps).
func FanOut(workflowID string, width int) (*Workload, error) {
	if width < 1 {
		return nil, fmt.Errorf("bench: fan-out needs a width of at least 1, got %d", width)
	}
	ups := map[string][]string{}
	rootNext := make(map[string]string, width)
	branches := make([]defWrapped, 0, width)
	joinUps := make([]string, 0, width)
	for i := 1; i <= width; i++ {
		id := fmt.Sprintf("f%d", i)
		rootNext[id] = "true"
		ups[id] = []string{"root"}
		joinUps = append(joinUps, id)
		branches = append(branches, defWrapped{Step: defStep{
			ID: id, Type: "NoOp", Transition: &defTransition{Successors: map[string]string{"join": "true"}},
		}})
	}
	ups["join"] = joinUps
	steps := make([]defWrapped, 0, width+2)
	steps = append(steps, defWrapped{Step: defStep{ID: "root", Type: "NoOp", Transition: &defTransition{Successors: rootNext}}})
	steps = append(steps, branches...)
	steps = append(steps, defWrapped{Step: defStep{ID: "join", Type: "NoOp"}})
	return newWorkload("fanout", workflowID, fmt.Sprintf("bench: %d-wide NoOp fan-out", width), steps, ups)
}

// HTTPJoins returns layers of width Http steps where every step of a
// layer waits for every step of the layer before (width × width join
// edges between layers): the fan-in DAG of the peer benchmark
// (httpchain.py --dag-layers, --dag-width), each step calling url +
// "<workflow id>/<instance id>/<step id>" (see CallLog).
func HTTPJoins(workflowID, url string, layers, width int) (*Workload, error) {
	if layers < 1 || width < 1 {
		return nil, fmt.Errorf("bench: an Http join DAG needs layers and a width of at least 1, got %d and %d", layers, width)
	}
	id := func(l, w int) string { return fmt.Sprintf("j%d_%d", l, w) }
	ups := map[string][]string{}
	steps := make([]defWrapped, 0, layers*width)
	params := httpParams(url)
	for l := 1; l <= layers; l++ {
		for w := 1; w <= width; w++ {
			s := defStep{ID: id(l, w), Type: "Http", Params: params}
			if l < layers {
				next := make(map[string]string, width)
				for v := 1; v <= width; v++ {
					next[id(l+1, v)] = "true"
				}
				s.Transition = &defTransition{Successors: next}
			}
			if l > 1 {
				for v := 1; v <= width; v++ {
					ups[s.ID] = append(ups[s.ID], id(l-1, v))
				}
			}
			steps = append(steps, defWrapped{Step: s})
		}
	}
	w, err := newWorkload("httpjoins", workflowID, fmt.Sprintf("bench: %d layers of %d Http steps, every edge a join", layers, width), steps, ups)
	if err == nil {
		w.CallsServer = true
	}
	return w, err
}

// HTTPDAG returns width chains of depth Http steps side by side (width ×
// depth steps), each step calling url + "<workflow id>/<instance id>/<step id>" (see
// CallLog): steps that do work, on a worker, as most steps of real
// pipelines do.
func HTTPDAG(workflowID, url string, width, depth int) (*Workload, error) {
	if width < 1 || depth < 1 {
		return nil, fmt.Errorf("bench: an Http DAG needs a width and a depth of at least 1, got %d and %d", width, depth)
	}
	ups := map[string][]string{}
	steps := make([]defWrapped, 0, width*depth)
	params := httpParams(url)
	for w := 1; w <= width; w++ {
		for d := 1; d <= depth; d++ {
			s := defStep{ID: fmt.Sprintf("h%d_%d", w, d), Type: "Http", Params: params}
			if d < depth {
				s.Transition = &defTransition{Successors: map[string]string{fmt.Sprintf("h%d_%d", w, d+1): "true"}}
			}
			if d > 1 {
				ups[s.ID] = []string{fmt.Sprintf("h%d_%d", w, d-1)}
			}
			steps = append(steps, defWrapped{Step: s})
		}
	}
	w, err := newWorkload("httpdag", workflowID, fmt.Sprintf("bench: %d chains of %d Http steps", width, depth), steps, ups)
	if err == nil {
		w.CallsServer = true
	}
	return w, err
}

// HTTPChain returns a chain of n Http steps calling url + "<workflow
// id>/<instance id>/<step id>": Temporal's Chain(n) of activities.
func HTTPChain(name, workflowID, url string, n int) (*Workload, error) {
	w, err := HTTPDAG(workflowID, url, 1, n)
	if err == nil {
		w.Name = name
	}
	return w, err
}

// HTTPFan returns width Http steps with no edges between them, all started
// at once (Temporal's Fan(width)); the run's step concurrency is width.
func HTTPFan(workflowID, url string, width int) (*Workload, error) {
	if width < 1 {
		return nil, fmt.Errorf("bench: an Http fan needs a width of at least 1, got %d", width)
	}
	params := httpParams(url)
	steps := make([]defWrapped, 0, width)
	for i := 1; i <= width; i++ {
		steps = append(steps, defWrapped{Step: defStep{ID: fmt.Sprintf("f%d", i), Type: "Http", Params: params}})
	}
	w, err := newWorkload("httpfan", workflowID, fmt.Sprintf("bench: %d Http steps in parallel", width), steps, map[string][]string{})
	if err != nil {
		return nil, err
	}
	w.CallsServer = true
	// Maestro's default instance_step_concurrency (100) would run the fan
	// in waves.
	return w, w.edit(func(doc map[string]any) { doc["workflow"].(map[string]any)["instance_step_concurrency"] = width })
}

// Concurrently makes w a workload of n instances started at once, with a
// PARALLEL run strategy that admits them all (Maestro's default,
// SEQUENTIAL, would run them one after the other).
func (w *Workload) Concurrently(n int) error {
	w.Concurrent = n
	return w.edit(func(doc map[string]any) {
		doc["properties"].(map[string]any)["run_strategy"] = map[string]any{"rule": "PARALLEL", "workflow_concurrency": n}
	})
}

// edit changes w's definition document.
func (w *Workload) edit(change func(doc map[string]any)) error {
	var doc map[string]any
	if err := json.Unmarshal(w.Definition, &doc); err != nil {
		return fmt.Errorf("bench: decode %s definition: %w", w.Name, err)
	}
	change(doc)
	b, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("bench: encode %s definition: %w", w.Name, err)
	}
	w.Definition = b
	return nil
}

func httpParams(url string) map[string]any {
	return map[string]any{"http": map[string]any{"type": "MAP",
		"expression": fmt.Sprintf(`{"url": %q + workflow_id + "/" + workflow_instance_id + "/" + step_id, "method": "GET"}`, url)}}
}

func chainStep(i int) string { return fmt.Sprintf("s%d", i) }

func newWorkload(name, workflowID, title string, steps []defWrapped, ups map[string][]string) (*Workload, error) {
	doc := defDocument{
		// A definition without properties is valid Maestro, but the owner
		// keeps the pushed properties snapshot non-empty.
		Properties: map[string]string{"owner": "maestro-bench"},
		Workflow:   defWorkflow{ID: workflowID, Name: title, Steps: steps},
	}
	body, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("bench: encode %s definition: %w", name, err)
	}
	return &Workload{Name: name, WorkflowID: workflowID, Definition: body, Upstreams: ups, Steps: len(steps)}, nil
}

// Foreach returns a workflow whose one foreach step runs n iterations, at
// most concurrency at once, of one NoOp step: what a loop costs by itself.
func Foreach(workflowID string, n, concurrency int) (*Workload, error) {
	return foreachWorkload("foreach", workflowID, n, concurrency, "NoOp",
		map[string]any{"step": map[string]any{"id": "body", "type": "NoOp"}})
}

// ForeachHTTP returns a workflow whose one foreach step runs n iterations,
// at most concurrency at once, of one Http step calling url: iterations
// that do work, each a run of its own.
func ForeachHTTP(workflowID, url string, n, concurrency int) (*Workload, error) {
	return foreachWorkload("foreachhttp", workflowID, n, concurrency, "Http",
		map[string]any{"step": map[string]any{"id": "body", "type": "Http", "params": httpParams(url)}})
}

func foreachWorkload(name, workflowID string, n, concurrency int, kind string, body map[string]any) (*Workload, error) {
	if err := checkForeach(n, concurrency); err != nil {
		return nil, err
	}
	// Two loop params whose product is n keep each array under the
	// expression language's 25,001 elements.
	outer := 1
	for outer*25_000 < n {
		outer *= 10
	}
	if n%outer != 0 {
		return nil, fmt.Errorf("bench: %d iterations do not split into %d rows; use a round number", n, outer)
	}
	return foreachDefinition(name, workflowID, fmt.Sprintf("bench: foreach of %d %s iterations, %d at once", n, kind, concurrency), n,
		map[string]any{"id": "loop", "concurrency": concurrency, "steps": []any{body},
			"params": map[string]any{"loop_params": map[string]any{"type": "MAP", "value": map[string]any{
				"i": map[string]any{"type": "LONG_ARRAY", "expression": fmt.Sprintf("Util.intsBetween(0, %d, 1)", n/outer)},
				"j": map[string]any{"type": "LONG_ARRAY", "expression": fmt.Sprintf("Util.intsBetween(0, %d, 1)", outer)},
			}}}})
}

// checkForeach checks the size of a foreach workload.
func checkForeach(n, concurrency int) error {
	if n < 1 || concurrency < 1 {
		return fmt.Errorf("bench: a foreach needs at least 1 iteration and a concurrency of at least 1, got %d and %d", n, concurrency)
	}
	return nil
}

// foreachDefinition is the workload of one foreach step (its object
// loop) of n iterations, the workflow named title.
func foreachDefinition(name, workflowID, title string, n int, loop map[string]any) (*Workload, error) {
	doc := map[string]any{
		"properties": map[string]any{"owner": "maestro-bench", "run_strategy": "parallel"},
		"workflow": map[string]any{
			"id": workflowID, "name": title, "instance_step_concurrency": 999,
			"steps": []any{map[string]any{"foreach": loop}},
		},
	}
	def, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("bench: encode %s definition: %w", name, err)
	}
	return &Workload{Name: name, WorkflowID: workflowID, Definition: def, Upstreams: map[string][]string{}, Steps: 1, Iterations: n}, nil
}
