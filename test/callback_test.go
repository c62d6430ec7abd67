package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/maestro-serverless/maestro/localstack"
	"github.com/maestro-serverless/maestro/localstack/stack"
	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/pricing"
	"github.com/maestro-serverless/maestro/steps/callbackstep"
	"github.com/maestro-serverless/maestro/steps/lambdastep"
)

// callbackQueue creates an SQS queue on the emulator for Callback steps'
// tokens and returns a function that waits for the next message on it.
func callbackQueue(t *testing.T) (url string, next func() callbackstep.Message) {
	t.Helper()
	ctx := context.Background()
	cfg := emulator.TestConfig(t)
	client := sqs.NewFromConfig(cfg)
	out, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(fmt.Sprintf("callbacks-%d-%d", os.Getpid(), stageSeq.Add(1)))})
	if err != nil {
		t.Fatal(err)
	}
	url = aws.ToString(out.QueueUrl)
	t.Cleanup(func() {
		_, _ = client.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: aws.String(url)})
	})
	next = func() callbackstep.Message {
		t.Helper()
		var m callbackstep.Message
		poll(t, 30*time.Second, "a task token arrives on the callback queue", func() (bool, string) {
			got, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 1})
			if err != nil {
				return false, err.Error()
			}
			if len(got.Messages) == 0 {
				return false, "no message"
			}
			msg := got.Messages[0]
			if _, err := client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: msg.ReceiptHandle}); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(aws.ToString(msg.Body)), &m); err != nil {
				t.Fatalf("callback message %q: %v", aws.ToString(msg.Body), err)
			}
			return true, ""
		})
		return m
	}
	return url, next
}

// report posts a task token holder's report as the project's senders do,
// the token in the body (POST /api/v3/tasks/{action} {"task_token", ...}),
// and returns the status and the decoded answer; body holds the report's
// other fields (a JSON object, or "" for none).
func (s *system) report(token, action, body string) (int, map[string]any) {
	s.t.Helper()
	fields := map[string]json.RawMessage{}
	if body != "" {
		if err := json.Unmarshal([]byte(body), &fields); err != nil {
			s.t.Fatalf("report body %q: %v", body, err)
		}
	}
	fields["task_token"], _ = json.Marshal(token)
	req, _ := json.Marshal(fields)
	var out map[string]any
	code := s.do("POST", "/api/v3/tasks/"+action, req, &out)
	return code, out
}

// reportInPath posts a report with the token in the path (POST
// /api/v3/tasks/{token}/{action}), the form kept for existing callers.
func (s *system) reportInPath(token, action, body string) (int, map[string]any) {
	s.t.Helper()
	var out map[string]any
	code := s.do("POST", "/api/v3/tasks/"+token+"/"+action, []byte(body), &out)
	return code, out
}

// raw GETs path and returns the body.
func (s *system) raw(path string) string {
	s.t.Helper()
	resp, err := s.client.Get(s.st.URL + path)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func callbackWorkflow(id, queue, extra string) []byte {
	return []byte(fmt.Sprintf(`{"properties":{"owner":"cb"},"workflow":{"id":%q,"steps":[
	  {"step":{"id":"wait","type":"Callback",%s"params":{
	    "callback":{"type":"MAP","value":{"sqs_queue_url":{"type":"STRING","value":%q},"message":{"type":"MAP","value":{"job":{"type":"STRING","value":"load-${workflow_instance_id}"}}}}}},
	    "transition":{"successors":{"after":"true"}}}},
	  {"step":{"id":"after","type":"NoOp","params":{"got":{"type":"LONG","expression":"params.getFromStep(\"wait\", \"rows\")"}}}}]}}`,
		id, extra, queue))
}

func TestCallbackSteps(t *testing.T) {
	t.Parallel()
	queue, next := callbackQueue(t)
	// A topic whose subscriber is the same queue (raw delivery: the
	// message as published).
	ctx := context.Background()
	cfg := emulator.TestConfig(t)
	snsc, sqsc := sns.NewFromConfig(cfg), sqs.NewFromConfig(cfg)
	topic, err := snsc.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String(fmt.Sprintf("callbacks-%d-%d", os.Getpid(), stageSeq.Add(1)))})
	if err != nil {
		t.Fatal(err)
	}
	qattrs, err := sqsc.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(queue), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := snsc.Subscribe(ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("sqs"),
		Endpoint: aws.String(qattrs.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]), Attributes: map[string]string{"RawMessageDelivery": "true"}}); err != nil {
		t.Fatal(err)
	}
	// An HTTP target: a loopback server that keeps what it is sent.
	posted := make(chan callbackstep.Message, 4)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m callbackstep.Message
		if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&m) != nil {
			http.Error(w, "want a POST of the callback message", http.StatusBadRequest)
			return
		}
		posted <- m
		w.WriteHeader(http.StatusAccepted)
	}))
	defer hook.Close()
	// On the shared emulator, where the queue and topic are.
	s := startSystem(t, stack.Options{Emulator: emulator, CallbackQueues: []string{queue}, CallbackTopics: []string{aws.ToString(topic.TopicArn)}})

	t.Run("an SNS topic and an HTTP call are targets too", func(t *testing.T) {
		def := strings.Replace(string(callbackWorkflow("cb-topic", queue, "")), `"sqs_queue_url":{"type":"STRING","value":"`+queue+`"}`,
			`"sns_topic_arn":{"type":"STRING","value":"`+aws.ToString(topic.TopicArn)+`"}`, 1)
		wf := s.push([]byte(def))
		r := s.start(wf, "")
		m := next()
		if m.WorkflowID != wf || m.StepID != "wait" {
			t.Fatalf("message through the topic: %+v", m)
		}
		// The token in the path still works.
		if code, out := s.reportInPath(m.TaskToken, "success", `{"outputs":{"rows":1}}`); code != http.StatusOK {
			t.Fatalf("success, the token in the path: HTTP %d %v", code, out)
		}
		if v := s.wait(wf, r.WorkflowInstanceID, 30*time.Second); v.Status != "SUCCEEDED" {
			t.Fatalf("instance %s %v", v.Status, v.StepStatuses)
		}

		def = strings.Replace(string(callbackWorkflow("cb-http", queue, "")), `"sqs_queue_url":{"type":"STRING","value":"`+queue+`"}`,
			`"http":{"type":"MAP","value":{"url":{"type":"STRING","value":"`+hook.URL+`/jobs"}}}`, 1)
		wf = s.push([]byte(def))
		r = s.start(wf, "")
		var got callbackstep.Message
		select {
		case got = <-posted:
		case <-time.After(30 * time.Second):
			t.Fatal("no callback call arrived")
		}
		if got.InstanceID != r.WorkflowInstanceID || len(got.TaskToken) != orchestrator.TaskTokenLength {
			t.Fatalf("posted %+v", got)
		}
		if code, out := s.report(got.TaskToken, "success", `{"outputs":{"rows":2}}`); code != http.StatusOK {
			t.Fatalf("success: HTTP %d %v", code, out)
		}
		if v := s.wait(wf, r.WorkflowInstanceID, 30*time.Second); v.Status != "SUCCEEDED" || fmt.Sprint(s.steps(wf, r.WorkflowInstanceID)["after"].Params["got"]) != "2" {
			t.Fatalf("instance %s %v", v.Status, v.StepStatuses)
		}
	})

	t.Run("success with outputs, then the token is spent", func(t *testing.T) {
		wf := s.push(callbackWorkflow("cb-success", queue, ""))
		r := s.start(wf, "")
		m := next()
		if m.WorkflowID != wf || m.InstanceID != r.WorkflowInstanceID || m.StepID != "wait" || m.Attempt != 1 ||
			fmt.Sprint(m.Message) != fmt.Sprintf("map[job:load-%d]", r.WorkflowInstanceID) {
			t.Fatalf("callback message %+v", m)
		}
		if len(m.TaskToken) != orchestrator.TaskTokenLength || orchestrator.TaskTokenLength*6 < 256 {
			t.Fatalf("task token %d characters, want %d (256 bits)", len(m.TaskToken), orchestrator.TaskTokenLength)
		}
		poll(t, 30*time.Second, "the step waits for its token", func() (bool, string) {
			tl := s.raw(fmt.Sprintf("/api/v3/workflows/%s/instances/%d/runs/1/steps/wait/attempts/1", wf, r.WorkflowInstanceID))
			return strings.Contains(tl, "waiting for its task token"), tl
		})
		// No view shows the token.
		for _, path := range []string{
			fmt.Sprintf("/api/v3/workflows/%s/instances/%d", wf, r.WorkflowInstanceID),
			fmt.Sprintf("/api/v3/workflows/%s/instances/%d/runs/1", wf, r.WorkflowInstanceID),
			fmt.Sprintf("/api/v3/workflows/%s/instances/%d/steps", wf, r.WorkflowInstanceID),
			fmt.Sprintf("/api/v3/workflows/%s/instances/%d/runs/1/steps/wait/attempts/1", wf, r.WorkflowInstanceID),
		} {
			if body := s.raw(path); strings.Contains(body, m.TaskToken) {
				t.Fatalf("GET %s shows the task token", path)
			}
		}
		if code, out := s.report(m.TaskToken, "success", `{"outputs":{"rows":7},"message":"loaded"}`); code != http.StatusOK || out["recorded"] != true {
			t.Fatalf("success: HTTP %d %v", code, out)
		}
		v := s.wait(wf, r.WorkflowInstanceID, 30*time.Second)
		steps := s.steps(wf, r.WorkflowInstanceID)
		if v.Status != "SUCCEEDED" || fmt.Sprint(steps["after"].Params["got"]) != "7" {
			t.Fatalf("instance %s %v; after saw rows = %v, want 7", v.Status, v.StepStatuses, steps["after"].Params["got"])
		}
		// Used twice, or for a failure after the success: 409, nothing changes.
		for _, action := range []string{"success", "failure", "heartbeat"} {
			if code, out := s.report(m.TaskToken, action, ""); code != http.StatusConflict {
				t.Fatalf("%s with a spent token: HTTP %d %v, want 409", action, code, out)
			}
		}
		// A wrong token is unknown; a malformed one is refused.
		wrong := strings.Repeat("A", orchestrator.TaskTokenLength)
		if code, out := s.report(wrong, "success", ""); code != http.StatusNotFound {
			t.Fatalf("a wrong token: HTTP %d %v, want 404", code, out)
		}
		if code, out := s.report("not-a-token", "success", ""); code != http.StatusBadRequest {
			t.Fatalf("a malformed token: HTTP %d %v, want 400", code, out)
		}
		if code, out := s.report(m.TaskToken, "finish", ""); code != http.StatusNotFound {
			t.Fatalf("an unknown action: HTTP %d %v, want 404", code, out)
		}
		s.idle(t)
		if got := s.instance(wf, r.WorkflowInstanceID); got.Status != "SUCCEEDED" || fmt.Sprint(s.steps(wf, r.WorkflowInstanceID)["wait"].Outputs["rows"]) != "7" {
			t.Fatalf("after the refused reports: %s %v", got.Status, s.steps(wf, r.WorkflowInstanceID)["wait"].Outputs)
		}
	})

	t.Run("failure is retried per the retry policy", func(t *testing.T) {
		wf := s.push(callbackWorkflow("cb-retry", queue, `"retry_policy":{"error_retry_limit":1,"backoff":{"type":"FIXED_BACKOFF","error_retry_backoff_in_secs":1}},`))
		r := s.start(wf, "")
		first := next()
		if code, out := s.report(first.TaskToken, "failure", `{"error":"USER_ERROR","message":"the load failed"}`); code != http.StatusOK {
			t.Fatalf("failure: HTTP %d %v", code, out)
		}
		second := next()
		if second.Attempt != 2 || second.TaskToken == first.TaskToken {
			t.Fatalf("the retry's message %+v: want attempt 2 with a new token", second)
		}
		if code, _ := s.report(first.TaskToken, "success", ""); code != http.StatusConflict {
			t.Fatalf("the first attempt's token after its failure: HTTP %d, want 409", code)
		}
		if code, out := s.report(second.TaskToken, "success", `{"outputs":{"rows":3}}`); code != http.StatusOK {
			t.Fatalf("success: HTTP %d %v", code, out)
		}
		v := s.wait(wf, r.WorkflowInstanceID, 30*time.Second)
		if v.Status != "SUCCEEDED" {
			t.Fatalf("instance %s %v", v.Status, v.StepStatuses)
		}
		var a1 orchestrator.StepView
		if code := s.do("GET", fmt.Sprintf("/api/v3/workflows/%s/instances/%d/runs/1/steps/wait/attempts/1", wf, r.WorkflowInstanceID), nil, &a1); code != http.StatusOK ||
			a1.RuntimeState.Status != "USER_FAILED" || !strings.Contains(timelineText(a1), "the load failed") {
			t.Fatalf("attempt 1: HTTP %d %s %q", code, a1.RuntimeState.Status, timelineText(a1))
		}
	})

	t.Run("no heartbeat within heartbeat_timeout times the step out", func(t *testing.T) {
		wf := s.push([]byte(strings.Replace(string(callbackWorkflow("cb-heartbeat", queue, "")), `"callback":`,
			`"heartbeat_timeout":{"type":"STRING","value":"2s"},"callback":`, 1)))
		r := s.start(wf, "")
		m := next()
		if code, out := s.report(m.TaskToken, "heartbeat", ""); code != http.StatusOK || out["recorded"] != true {
			t.Fatalf("heartbeat: HTTP %d %v", code, out)
		}
		v := s.wait(wf, r.WorkflowInstanceID, 30*time.Second)
		steps := s.steps(wf, r.WorkflowInstanceID)
		if v.Status != "FAILED" || steps["wait"].RuntimeState.Status != "TIMED_OUT" || !strings.Contains(timelineText(steps["wait"]), "no heartbeat for 2s") {
			t.Fatalf("instance %s %v: wait %s %q", v.Status, v.StepStatuses, steps["wait"].RuntimeState.Status, timelineText(steps["wait"]))
		}
		if code, _ := s.report(m.TaskToken, "heartbeat", ""); code != http.StatusConflict {
			t.Fatalf("a heartbeat after the timeout: HTTP %d, want 409", code)
		}
	})

	t.Run("a stopped step's token no longer applies", func(t *testing.T) {
		wf := s.push(callbackWorkflow("cb-stop", queue, ""))
		r := s.start(wf, "")
		m := next()
		s.act(wf, r.WorkflowInstanceID, "stop")
		if v := s.wait(wf, r.WorkflowInstanceID, 30*time.Second); v.Status != "STOPPED" {
			t.Fatalf("instance %s %v", v.Status, v.StepStatuses)
		}
		if code, out := s.report(m.TaskToken, "success", ""); code != http.StatusConflict {
			t.Fatalf("success after stop: HTTP %d %v, want 409", code, out)
		}
	})
}

func lambdaWorkflow(id, function, extra, payload string) []byte {
	return []byte(fmt.Sprintf(`{"properties":{"owner":"lambda"},"workflow":{"id":%q,"steps":[
	  {"step":{"id":"fn","type":"Lambda",%s"params":{"lambda":{"type":"MAP","value":{"function_name":{"type":"STRING","value":%q}%s}}},
	    "transition":{"successors":{"after":"true"}}}},
	  {"step":{"id":"after","type":"NoOp","params":{"got":{"type":"LONG","expression":"params.getFromStep(\"fn\", \"doubled\")"}}}}]}}`,
		id, extra, function, payload))
}

func TestLambdaSteps(t *testing.T) {
	t.Parallel()
	var flaky atomic.Int64
	var apiURL atomic.Value
	functions := map[string]localstack.LocalFunction{
		"double": localstack.FunctionFunc(func(_ context.Context, payload []byte) ([]byte, error) {
			var in struct{ N int64 }
			if err := json.Unmarshal(payload, &in); err != nil {
				return nil, err
			}
			return []byte(fmt.Sprintf(`{"doubled": %d, "from": "double"}`, 2*in.N)), nil
		}),
		"flaky": localstack.FunctionFunc(func(context.Context, []byte) ([]byte, error) {
			if flaky.Add(1) == 1 {
				return nil, fmt.Errorf("warehouse not ready")
			}
			return []byte(`{"doubled": 2}`), nil
		}),
		// An asynchronous function ends its step through the task token.
		"later": localstack.FunctionFunc(func(_ context.Context, payload []byte) ([]byte, error) {
			var in map[string]any
			if err := json.Unmarshal(payload, &in); err != nil {
				return nil, err
			}
			token, _ := in[lambdastep.PayloadTokenField].(string)
			body, _ := json.Marshal(map[string]any{"task_token": token, "outputs": map[string]any{"doubled": in["n"].(float64) * 2}})
			resp, err := http.Post(apiURL.Load().(string)+"/api/v3/tasks/success", "application/json", bytes.NewReader(body))
			if err != nil {
				return nil, err
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return nil, fmt.Errorf("report the task's success: HTTP %d", resp.StatusCode)
			}
			return nil, nil
		}),
	}
	s := startSystem(t, stack.Options{Functions: functions})
	apiURL.Store(s.st.URL)
	payload := `,"payload":{"type":"MAP","value":{"n":{"type":"LONG","value":21}}}`

	t.Run("outputs reach the next step", func(t *testing.T) {
		wf, r, v := s.run(lambdaWorkflow("lambda-double", "double", "", payload), 30*time.Second)
		steps := s.steps(wf, r.WorkflowInstanceID)
		if v.Status != "SUCCEEDED" || fmt.Sprint(steps["after"].Params["got"]) != "42" || steps["fn"].Outputs["from"] != "double" {
			t.Fatalf("instance %s %v; outputs %v, after saw %v", v.Status, v.StepStatuses, steps["fn"].Outputs, steps["after"].Params["got"])
		}
		calls := s.st.Functions.Calls()
		if len(calls) != 1 || calls[0].Function != "double" || calls[0].InvocationType != "RequestResponse" || string(calls[0].Payload) != `{"n":21}` {
			t.Fatalf("invocations %+v", calls)
		}
		lambdaCost(t, "the run", v.Cost, 1)
		lambdaCost(t, "its step", attempt(t, s, wf, r.WorkflowInstanceID, "fn", 1).Cost, 1)
	})

	t.Run("a function error is retried per the retry policy", func(t *testing.T) {
		wf, r, v := s.run(lambdaWorkflow("lambda-flaky", "flaky", `"retry_policy":{"error_retry_limit":2,"backoff":{"type":"FIXED_BACKOFF","error_retry_backoff_in_secs":1}},`, ""), 30*time.Second)
		if v.Status != "SUCCEEDED" || flaky.Load() != 2 {
			t.Fatalf("instance %s %v after %d invocations", v.Status, v.StepStatuses, flaky.Load())
		}
		// Both invocations were billed, the failed one's too.
		lambdaCost(t, "a run whose function failed once", v.Cost, 2)
		var a1 orchestrator.StepView
		s.do("GET", fmt.Sprintf("/api/v3/workflows/%s/instances/%d/runs/1/steps/fn/attempts/1", wf, r.WorkflowInstanceID), nil, &a1)
		if a1.RuntimeState.Status != "USER_FAILED" || !strings.Contains(timelineText(a1), "warehouse not ready") {
			t.Fatalf("attempt 1: %s %q", a1.RuntimeState.Status, timelineText(a1))
		}
	})

	t.Run("a function off the allow-list is not invoked", func(t *testing.T) {
		before := len(s.st.Functions.Calls())
		wf, r, v := s.run(lambdaWorkflow("lambda-denied", "arn:aws:lambda:us-east-1:000000000000:function:other", "", ""), 30*time.Second)
		steps := s.steps(wf, r.WorkflowInstanceID)
		if v.Status != "FAILED" || steps["fn"].RuntimeState.Status != "FATALLY_FAILED" || !strings.Contains(timelineText(steps["fn"]), "allow-list") {
			t.Fatalf("instance %s %v: %q", v.Status, v.StepStatuses, timelineText(steps["fn"]))
		}
		if len(s.st.Functions.Calls()) != before {
			t.Fatal("the function was invoked")
		}
	})

	t.Run("a Kubernetes step without ECS settings fails saying so", func(t *testing.T) {
		wf, r, v := s.run(readFile(t, "sample-kubernetes-wf.json"), 30*time.Second)
		a := s.steps(wf, r.WorkflowInstanceID)["job.2"]
		if v.Status != "FAILED" || a.RuntimeState.Status != "FATALLY_FAILED" || !strings.Contains(timelineText(a), "need the stack's ECS settings") {
			t.Fatalf("instance %s %v: %q", v.Status, v.StepStatuses, timelineText(a))
		}
	})

	t.Run("an asynchronous invocation ends through its task token", func(t *testing.T) {
		wf, r, v := s.run(lambdaWorkflow("lambda-later", "later", "", payload+`,"invocation_type":{"type":"STRING","value":"Event"}`), 30*time.Second)
		steps := s.steps(wf, r.WorkflowInstanceID)
		if v.Status != "SUCCEEDED" || fmt.Sprint(steps["after"].Params["got"]) != "42" {
			t.Fatalf("instance %s %v; after saw %v", v.Status, v.StepStatuses, steps["after"].Params["got"])
		}
		calls := s.st.Functions.Calls()
		last := calls[len(calls)-1]
		if last.Function != "later" || last.InvocationType != "Event" || !strings.Contains(string(last.Payload), `"maestro_task_token":"`) {
			t.Fatalf("invocation %+v", last)
		}
	})
}

// timelineText is a step attempt's timeline messages, one per line.
func timelineText(v orchestrator.StepView) string {
	var b strings.Builder
	for _, e := range v.Timeline {
		b.WriteString(e.Message)
		b.WriteByte('\n')
	}
	return b.String()
}

// lambdaCost checks that cost is n invocations of Lambda steps' functions,
// each billed whole milliseconds at the local functions' memory.
func lambdaCost(t *testing.T, what string, cost *pricing.Cost, n float64) {
	t.Helper()
	if cost == nil {
		t.Fatalf("%s: no cost", what)
	}
	req, gb := cost.Parts[pricing.LambdaStepRequests], cost.Parts[pricing.LambdaStepGBSeconds]
	ms := gb.Count * 1000 * 1024 / localstack.LocalFunctionMemoryMB
	if req.Count != n || ms < n || math.Abs(ms-math.Round(ms)) > 1e-6 || math.Abs(cost.USDOf(pricing.KindLambdaSteps)-req.USD-gb.USD) > 1e-15 ||
		!slices.Contains(cost.Covers, pricing.KindLambdaSteps) {
		t.Fatalf("%s: cost %+v, want %v invocations billed whole milliseconds at %d MB", what, *cost, n, localstack.LocalFunctionMemoryMB)
	}
}
