package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/maestro-serverless/maestro/orchestrator"
)

// sampleOutput is what Maestro's sample-kubernetes-output-wf prints:
// `echo $MAESTRO_OUTPUT_START$1$MAESTRO_OUTPUT_END` with $1 its args' last
// element, read from the sample itself.
func sampleOutput(t *testing.T) string {
	t.Helper()
	var def struct {
		Workflow struct {
			Steps []struct {
				Step struct {
					ID     string `json:"id"`
					Params struct {
						Kubernetes struct {
							Value struct {
								Args struct {
									Value []string `json:"value"`
								} `json:"args"`
							} `json:"value"`
						} `json:"kubernetes"`
					} `json:"params"`
				} `json:"step"`
			} `json:"steps"`
		} `json:"workflow"`
	}
	if err := json.Unmarshal(readFile(t, "sample-kubernetes-output-wf.json"), &def); err != nil {
		t.Fatal(err)
	}
	for _, s := range def.Workflow.Steps {
		if args := s.Step.Params.Kubernetes.Value.Args.Value; s.Step.ID == "job1" && len(args) == 4 {
			return "MAESTRO_OUTPUT_START_TOKEN" + args[3] + "MAESTRO_OUTPUT_END_TOKEN"
		}
	}
	t.Fatal("the sample's job1 has no args to print")
	return ""
}

// lineage waits for a signal's latest instance (a step's signal outputs are
// announced from the work queue, after the step ends) and reads its
// lineage.
func (s *system) lineage(t *testing.T, name string) orchestrator.LineageView {
	t.Helper()
	var l orchestrator.LineageView
	poll(t, 30*time.Second, "signal "+name+" is announced", func() (bool, string) {
		code := s.do("GET", "/api/v3/signals/"+name+"/instances/latest/lineage", nil, &l)
		return code == http.StatusOK, fmt.Sprintf("HTTP %d", code)
	})
	return l
}

// TestDynamicSignalOutputs runs Maestro's sample-kubernetes-output-wf as an
// ECS task whose end arrives as an ECS event: the maestro_dynamic_output
// artifact it prints is announced as signal demo_table, published by its
// step, and starts a workflow that a signal trigger subscribes and
// unblocks a step waiting on it. Dynamic outputs reported through PUT
// /output-data override the printed ones; output data for an attempt that
// is not the caller's (another job, a forged instance or step) or not
// running is refused, and so is a bad shape, naming the field.
func TestDynamicSignalOutputs(t *testing.T) {
	t.Parallel()
	e := startJobsEnv(t)
	trig := e.push([]byte(`{"properties":{"owner":"dyn"},"workflow":{"id":"dyn-triggered",
	  "signal_triggers":[{"definitions":{"demo_table":{}}}],"steps":[{"step":{"id":"go","type":"NoOp"}}]}}`))
	gated := e.push([]byte(`{"properties":{"owner":"dyn"},"workflow":{"id":"dyn-gated","steps":[
	  {"step":{"id":"wait","type":"NoOp","signal_dependencies":[{"name":"demo_table"}]}}]}}`))
	rg := e.start(gated, "")
	poll(t, 30*time.Second, "the gated step waits for demo_table", func() (bool, string) {
		st := e.instance(gated, rg.WorkflowInstanceID).StepStatuses
		return st["wait"] == "WAITING_FOR_SIGNALS", fmt.Sprint(st)
	})
	wf := e.push(readFile(t, "sample-kubernetes-output-wf.json"))

	// runningTask starts the sample and waits until its step runs as a task.
	runningTask := func(t *testing.T) (int64, string) {
		t.Helper()
		r := e.start(wf, "")
		arn := aws.ToString(e.nextTask(t).TaskArn)
		poll(t, 30*time.Second, "the step runs as its task", func() (bool, string) {
			a := attempt(t, e.system, wf, r.WorkflowInstanceID, "job1", 1)
			return strings.Contains(timelineText(a), "running as ECS task "+arn), timelineText(a)
		})
		return r.WorkflowInstanceID, arn
	}

	t.Run("the sample's dynamic output is announced, triggers and unblocks", func(t *testing.T) {
		inst, arn := runningTask(t)
		e.printLog(t, e.st.ECS.LogGroup, "maestro/main/"+taskID(arn), "hello world", sampleOutput(t))
		e.taskStopped(t, arn, exit(0), "EssentialContainerExited", "Essential container in task exited")
		if v := e.wait(wf, inst, 30*time.Second); v.Status != "SUCCEEDED" || v.StepStatuses["end"] != "SUCCEEDED" {
			t.Fatalf("sample %s %v", v.Status, v.StepStatuses)
		}
		started := e.waitInstances(t, trig, 1, 30*time.Second)
		if v := e.wait(trig, started[0].WorkflowInstanceID, 30*time.Second); v.Status != "SUCCEEDED" {
			t.Fatalf("triggered workflow %s", v.Status)
		}
		if v := e.wait(gated, rg.WorkflowInstanceID, 30*time.Second); v.Status != "SUCCEEDED" {
			t.Fatalf("gated workflow %s %v", v.Status, v.StepStatuses)
		}
		l := e.lineage(t, "demo_table")
		if p := l.PublishedBy; p == nil || p.Kind != "step" || p.WorkflowID != wf || p.InstanceID != inst || p.StepID != "job1" || p.Attempt != 1 {
			t.Fatalf("demo_table published by %+v, want step job1 attempt 1 of %s/%d", p, wf, inst)
		}
		if len(l.Triggered) != 1 || l.Triggered[0].WorkflowID != trig || len(l.Unblocked) != 1 || l.Unblocked[0].WorkflowID != gated || l.Unblocked[0].StepID != "wait" {
			t.Fatalf("demo_table triggered %+v, unblocked %+v", l.Triggered, l.Unblocked)
		}
	})

	t.Run("output data's dynamic outputs; others' and bad ones refused", func(t *testing.T) {
		inst, arn := runningTask(t)
		body := func(instance int64, step, job, artifact string) []byte {
			return []byte(fmt.Sprintf(`{"workflow_id":%q,"workflow_instance_id":%d,"step_id":%q,"external_job_type":"KUBERNETES","external_job_id":%q,
			  "artifacts":{"maestro_dynamic_output":%s}}`, wf, instance, step, job, artifact))
		}
		good := `{"type":"DYNAMIC_OUTPUT","signal_outputs":[{"type":"MAP","evaluated_result":{"name":"od_table","dt":20260101,"rows":1.5}}]}`
		var res orchestrator.OutputDataResult
		var refused map[string]any
		for _, c := range []struct {
			name string
			body []byte
			code int
			want string
		}{
			{"another job", body(inst, "job1", "arn:aws:ecs:us-east-1:000000000000:task/other/0123", good), http.StatusConflict, "runs as job ecs:" + arn},
			{"a forged instance", body(inst+100, "job1", arn, good), http.StatusNotFound, ""},
			{"a forged step", body(inst, "job9", arn, good), http.StatusNotFound, "no step job9"},
			{"a step not running", body(inst, "end", arn, good), http.StatusConflict, "applies only while the attempt runs"},
			{"a nameless output", body(inst, "job1", arn, `{"signal_outputs":[{"evaluated_result":{"dt":1}}]}`), http.StatusBadRequest,
				"artifacts.maestro_dynamic_output.signal_outputs[0].evaluated_result.name: is required"},
			{"a bad param name", body(inst, "job1", arn, `{"signal_outputs":[{"evaluated_result":{"name":"x","`+strings.Repeat("p", 200)+`":"v"}}]}`), http.StatusBadRequest,
				"param names must be at most 128 bytes"},
		} {
			refused = nil
			if code := e.do("PUT", "/api/v3/output-data", c.body, &refused); code != c.code || !strings.Contains(fmt.Sprint(refused), c.want) {
				t.Errorf("%s: HTTP %d %v, want %d naming %q", c.name, code, refused, c.code, c.want)
			}
		}
		if code := e.do("PUT", "/api/v3/output-data", body(inst, "job1", arn, good), &res); code != http.StatusOK || len(res.Signals) != 1 || res.Signals[0] != "od_table" {
			t.Fatalf("output data: HTTP %d %+v", code, res)
		}
		// The job prints the sample's output too: the output data's win.
		e.printLog(t, e.st.ECS.LogGroup, "maestro/main/"+taskID(arn), sampleOutput(t))
		e.taskStopped(t, arn, exit(0), "EssentialContainerExited", "Essential container in task exited")
		if v := e.wait(wf, inst, 30*time.Second); v.Status != "SUCCEEDED" {
			t.Fatalf("sample %s %v", v.Status, v.StepStatuses)
		}
		l := e.lineage(t, "od_table")
		if p := l.PublishedBy; p == nil || p.WorkflowID != wf || p.InstanceID != inst || p.StepID != "job1" {
			t.Fatalf("od_table published by %+v", p)
		}
		if l.Signal.Params["dt"] != float64(20260101) || fmt.Sprint(l.Signal.Payload["rows"]) != "1.5" {
			t.Fatalf("od_table params %v payload %v: want dt a param, rows (not whole) payload", l.Signal.Params, l.Signal.Payload)
		}
		if d := e.lineage(t, "demo_table"); d.Signal.SeqID != 1 {
			t.Fatalf("demo_table instance %d: the printed output must yield to the output data's", d.Signal.SeqID)
		}
		// Once the attempt ended, output data is refused.
		if code := e.do("PUT", "/api/v3/output-data", body(inst, "job1", arn, good), &refused); code != http.StatusConflict {
			t.Fatalf("late output data: HTTP %d %v", code, refused)
		}
	})

	t.Run("a bad dynamic output in the log fails the step, naming the field", func(t *testing.T) {
		inst, arn := runningTask(t)
		e.printLog(t, e.st.ECS.LogGroup, "maestro/main/"+taskID(arn),
			`MAESTRO_OUTPUT_START_TOKEN{"artifacts":{"maestro_dynamic_output":{"signal_outputs":[{"evaluated_result":{"name":"bad","n":null}},{"value":5}]}}}MAESTRO_OUTPUT_END_TOKEN`)
		e.taskStopped(t, arn, exit(0), "EssentialContainerExited", "Essential container in task exited")
		v := e.wait(wf, inst, 30*time.Second)
		a := attempt(t, e.system, wf, inst, "job1", 1)
		if v.Status != "FAILED" || a.RuntimeState.Status != "FATALLY_FAILED" ||
			!strings.Contains(timelineText(a), "artifacts.maestro_dynamic_output.signal_outputs[1].value: must be an object with name") {
			t.Fatalf("instance %s, job1 %s: %q", v.Status, a.RuntimeState.Status, timelineText(a))
		}
		var none map[string]any
		if code := e.do("GET", "/api/v3/signals/bad/instances/latest", nil, &none); code != http.StatusNotFound {
			t.Fatalf("signal bad: HTTP %d %v, want none announced", code, none)
		}
	})
}
