package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/maestro-serverless/maestro/localstack/stack"
)

// itemsWorkflow is a workflow whose foreach step "loop" takes its
// iterations from uri, declaring fields, and runs body (one step) in each.
func itemsWorkflow(id, uri, fields, body string) []byte {
	return fmt.Appendf(nil, `{"properties":{"owner":"items"},"workflow":{"id":%q,"steps":[
	  {"foreach":{"id":"loop","concurrency":4,"items_from":{"s3_uri":%q,"fields":{%s}},
	    "steps":[%s],"transition":{"successors":{"after":"true"}}}},
	  {"step":{"id":"after","type":"NoOp"}}]}}`, id, uri, fields, body)
}

// TestForeachItemsFromS3 runs foreach loops fed by objects in the local
// stack's bucket, read over the S3 API: every item an iteration, called
// once with its fields as params; an object's fault fails the step naming
// it, and nothing else is read.
func TestForeachItemsFromS3(t *testing.T) {
	t.Parallel()
	ls, srv := startLoopServer(t, 0)
	s := startSystem(t, stack.Options{})
	ctx := context.Background()
	bucket := s.st.Resources.Bucket.Name
	client := s3.NewFromConfig(s.st.Emulator.TestConfig(t), func(o *s3.Options) {
		o.BaseEndpoint = aws.String(s.st.Emulator.Endpoint)
		o.UsePathStyle = true
	})
	put := func(key, body string) string {
		t.Helper()
		if _, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader(body)}); err != nil {
			t.Fatalf("put %s: %v", key, err)
		}
		return "s3://" + bucket + "/" + key
	}
	failed := func(wf string, id int64, want string) {
		t.Helper()
		v := s.wait(wf, id, 60*time.Second)
		loop := s.steps(wf, id)["loop"]
		if v.Status != "FAILED" || loop.RuntimeState.Status != "FATALLY_FAILED" {
			t.Fatalf("instance %s, loop %s; want FAILED, FATALLY_FAILED", v.Status, loop.RuntimeState.Status)
		}
		var said []string
		for _, e := range loop.Timeline {
			said = append(said, e.Message)
		}
		if !strings.Contains(strings.Join(said, "\n"), want) {
			t.Errorf("the loop's timeline says %q, want it to name %q", said, want)
		}
		if loop.Foreach != nil && loop.Foreach.Launched > 0 {
			t.Errorf("%d iterations launched from a faulty object", loop.Foreach.Launched)
		}
	}

	t.Run("jsonl: each item once, its fields typed", func(t *testing.T) {
		var b strings.Builder
		for i := range 30 {
			fmt.Fprintf(&b, `{"file":"f%02d","n":%d,"big":9007199254740993}`+"\n", i, i)
			if i == 10 {
				b.WriteString("\n") // a blank line is no item
			}
		}
		uri := put("items/in.jsonl", b.String())
		body := fmt.Sprintf(`{"step":{"id":"call","type":"Http","params":{"http":{"type":"MAP","value":{
		  "url":{"type":"STRING","value":"%s/it/${file}"},"method":{"type":"STRING","value":"GET"}}}}}}`, srv.URL)
		wf, r, v := s.run(itemsWorkflow("items-jsonl", uri, `"file":"STRING","n":"LONG"`, body), 90*time.Second)
		if v.Status != "SUCCEEDED" {
			t.Fatalf("instance %s, steps %v", v.Status, v.StepStatuses)
		}
		calls, peak := ls.snapshot()
		for i := range 30 {
			if n := calls[fmt.Sprintf("f%02d", i)]; n != 1 {
				t.Errorf("item %d called %d times, want 1", i, n)
			}
		}
		if peak > 4 {
			t.Errorf("%d iterations called at once, concurrency is 4", peak)
		}
		o := s.steps(wf, r.WorkflowInstanceID)["loop"].Foreach
		if o == nil || o.Total != 30 || o.Counts["SUCCEEDED"] != 30 || o.ItemsFrom != uri || o.ItemsRead == 0 {
			t.Fatalf("foreach overview %+v", o)
		}
		it := s.instance(o.WorkflowID, 12)
		if fmt.Sprint(it.Params["file"]) != "f11" || fmt.Sprint(it.Params["n"]) != "11" || fmt.Sprint(it.Params["loop_index"]) != "11" {
			t.Errorf("iteration 12's params %v", it.Params)
		}
		// A LONG past 2^53 stays exact (read as text: the test's decoding
		// into any would round it).
		var raw json.RawMessage
		if code := s.do("GET", fmt.Sprintf("/api/v3/workflows/%s/instances/12", o.WorkflowID), nil, &raw); code != http.StatusOK ||
			!strings.Contains(string(raw), "9007199254740993") {
			t.Errorf("iteration 12: HTTP %d, %s", code, raw)
		}
	})

	t.Run("csv and a json array", func(t *testing.T) {
		csvURI := put("items/in.csv", "name,note\r\nada,\"says \"\"hi\"\", twice\"\r\ngrace,\"two\nlines\"\r\n")
		noop := `{"step":{"id":"body","type":"NoOp"}}`
		wf, r, v := s.run(itemsWorkflow("items-csv", csvURI, `"name":"STRING"`, noop), 60*time.Second)
		if v.Status != "SUCCEEDED" {
			t.Fatalf("csv: instance %s, steps %v", v.Status, v.StepStatuses)
		}
		o := s.steps(wf, r.WorkflowInstanceID)["loop"].Foreach
		if o == nil || o.Total != 2 || o.Counts["SUCCEEDED"] != 2 {
			t.Fatalf("csv: foreach overview %+v", o)
		}
		if p := s.instance(o.WorkflowID, 1).Params; fmt.Sprint(p["note"]) != `says "hi", twice` {
			t.Errorf("csv: iteration 1's params %v", p)
		}
		if p := s.instance(o.WorkflowID, 2).Params; fmt.Sprint(p["note"]) != "two\nlines" {
			t.Errorf("csv: iteration 2's params %v", p)
		}

		jsonURI := put("items/in.json", ` [ {"x": 1.5}, {"x": 2.5, "tags": ["a", "b"]} , {"x": 3.0} ] `)
		wf, r, v = s.run(itemsWorkflow("items-json", jsonURI, `"x":"DOUBLE"`, noop), 60*time.Second)
		if v.Status != "SUCCEEDED" {
			t.Fatalf("json: instance %s, steps %v", v.Status, v.StepStatuses)
		}
		o = s.steps(wf, r.WorkflowInstanceID)["loop"].Foreach
		if o == nil || o.Total != 3 || o.Counts["SUCCEEDED"] != 3 {
			t.Fatalf("json: foreach overview %+v", o)
		}
		if p := s.instance(o.WorkflowID, 2).Params; fmt.Sprint(p["x"]) != "2.5" || fmt.Sprint(p["tags"]) != "[a b]" {
			t.Errorf("json: iteration 2's params %v", p)
		}
	})

	t.Run("a restart runs the failed item again and those never launched", func(t *testing.T) {
		rs, rsrv := startLoopServer(t, 0, "r2")
		var b strings.Builder
		for i := range 6 {
			fmt.Fprintf(&b, "{\"file\":\"r%d\"}\n", i)
		}
		uri := put("items/restart.jsonl", b.String())
		wf := s.push(fmt.Appendf(nil, `{"properties":{"owner":"items"},"workflow":{"id":"items-restart","steps":[
		  {"foreach":{"id":"loop","concurrency":1,"items_from":{"s3_uri":%q,"fields":{"file":"STRING"}},
		    "steps":[{"step":{"id":"call","type":"Http","retry_policy":{"error_retry_limit":0,"platform_retry_limit":0},
		      "params":{"http":{"type":"MAP","value":{"url":{"type":"STRING","value":"%s/it/${file}"},"method":{"type":"STRING","value":"GET"}}}}}}]}}]}}`,
			uri, rsrv.URL))
		r := s.start(wf, "")
		if v := s.wait(wf, r.WorkflowInstanceID, 60*time.Second); v.Status != "FAILED" {
			t.Fatalf("first run: %s %v", v.Status, v.StepStatuses)
		}
		if o := s.steps(wf, r.WorkflowInstanceID)["loop"].Foreach; o == nil || o.Launched != 3 {
			t.Fatalf("first run's overview %+v: want three launched, the third failing", o)
		}
		rs.heal("r2")
		s.restart(t, wf, r.WorkflowInstanceID, "RESTART_FROM_INCOMPLETE", "restart")
		if v := s.wait(wf, r.WorkflowInstanceID, 60*time.Second); v.Status != "SUCCEEDED" || v.WorkflowRunID != 2 {
			t.Fatalf("restarted run: %s run %d %v", v.Status, v.WorkflowRunID, v.StepStatuses)
		}
		calls, _ := rs.snapshot()
		want := map[string]int{"r0": 1, "r1": 1, "r2": 2, "r3": 1, "r4": 1, "r5": 1}
		if fmt.Sprint(calls) != fmt.Sprint(want) {
			t.Errorf("calls %v, want %v", calls, want)
		}
	})

	t.Run("an object's fault fails the step naming it", func(t *testing.T) {
		noop := `{"step":{"id":"body","type":"NoOp"}}`
		bad := put("items/bad.jsonl", "{\"a\":1}\n\n{\"a\":2}\n[1,2]\n{\"a\":3}\n")
		wf := s.push(itemsWorkflow("items-bad-line", bad, "", noop))
		failed(wf, s.start(wf, "").WorkflowInstanceID, "line 4")

		wf = s.push(itemsWorkflow("items-missing", "s3://"+bucket+"/items/none.jsonl", "", noop))
		failed(wf, s.start(wf, "").WorkflowInstanceID, "no such object")

		// A bucket the stack was not given is not read, whatever the
		// functions' role could reach.
		wf = s.push(itemsWorkflow("items-elsewhere", "s3://someone-elses-bucket/in.jsonl", "", noop))
		failed(wf, s.start(wf, "").WorkflowInstanceID, "someone-elses-bucket")

		typed := put("items/typed.jsonl", "{\"n\":1}\n{\"n\":\"two\"}\n")
		wf = s.push(itemsWorkflow("items-typed", typed, `"n":"LONG"`, noop))
		failed(wf, s.start(wf, "").WorkflowInstanceID, "line 2")
	})
}
