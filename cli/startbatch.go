package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"time"

	"github.com/google/uuid"
)

// Batch starts (maestro start-batch, maestro start --count).
const (
	// maxBatch is the most run requests one start-batch request takes
	// (orchestrator.MaxBatchStarts).
	maxBatch = 100
	// maxRequestLine is the longest line of a start-batch file: the API's
	// largest request body.
	maxRequestLine = 256 << 10
	// batchAttempts is how many times a batch is sent when it is throttled
	// (429) or fails on the server's side (5xx, or starts answered 5xx).
	batchAttempts = 5
)

// batchOutcome is one request's outcome in a start-batch answer.
type batchOutcome struct {
	WorkflowInstanceID int64     `json:"workflow_instance_id"`
	WorkflowRunID      int64     `json:"workflow_run_id"`
	Created            bool      `json:"created"`
	Error              *APIError `json:"error"`
}

// batchAnswer is a start-batch answer.
type batchAnswer struct {
	Results []json.RawMessage `json:"results"`
}

// startBatch starts a run of wf for each start request in file: JSON
// Lines, one Maestro start request object per line ("-" is standard
// input; blank lines are skipped). See startRequests.
func (r *runner) startBatch(ctx context.Context, wf, version, file string) int {
	in := io.Reader(os.Stdin)
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			fmt.Fprintf(r.o.Stderr, "maestro start-batch: %v\n", err)
			return ExitUsage
		}
		defer f.Close()
		in = f
	}
	reqs, lines, err := readStartRequests(in)
	if err != nil {
		fmt.Fprintf(r.o.Stderr, "maestro start-batch: %s: %v\n", file, err)
		return ExitUsage
	}
	if len(reqs) == 0 {
		fmt.Fprintf(r.o.Stderr, "maestro start-batch: %s holds no start request\n", file)
		return ExitUsage
	}
	return r.startRequests(ctx, wf, version, reqs, func(i int) string { return fmt.Sprintf("line %d", lines[i]) })
}

// startCount starts n runs of wf with the same run params, in batches.
func (r *runner) startCount(ctx context.Context, wf, version string, params []string, n int) int {
	body, code := r.startBody("start", params)
	if code != ExitOK {
		return code
	}
	reqs := make([]map[string]json.RawMessage, n)
	for i := range reqs {
		reqs[i] = map[string]json.RawMessage{}
		for k, v := range body {
			reqs[i][k] = v
		}
	}
	return r.startRequests(ctx, wf, version, reqs, func(i int) string { return fmt.Sprintf("run %d", i+1) })
}

// readStartRequests reads JSON Lines of start request objects and the
// line number of each.
func readStartRequests(in io.Reader) ([]map[string]json.RawMessage, []int, error) {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), maxRequestLine)
	var reqs []map[string]json.RawMessage
	var lines []int
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var req map[string]json.RawMessage
		if line[0] != '{' || json.Unmarshal(line, &req) != nil {
			return nil, nil, fmt.Errorf("line %d: want a start request, a JSON object on one line", n)
		}
		reqs, lines = append(reqs, req), append(lines, n)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, nil, fmt.Errorf("line %d: longer than %d bytes", len(lines)+1, maxRequestLine)
		}
		return nil, nil, err
	}
	return reqs, lines, nil
}

// startRequests sends reqs to the start-batch route in batches of
// maxBatch and prints each request's outcome, named by name. A request
// without a request_id gets a new one, kept while its batch is sent again:
// a batch throttled (429) or failed (5xx, or some of its starts answered
// 5xx) is sent again, up to batchAttempts times, and a request started
// the first time is then found, not started twice. The exit code is 0
// only when every request started or was found started.
func (r *runner) startRequests(ctx context.Context, wf, version string, reqs []map[string]json.RawMessage, name func(int) string) int {
	for _, req := range reqs {
		if _, ok := req["request_id"]; !ok {
			req["request_id"], _ = json.Marshal(uuid.NewString())
		}
	}
	path := "/api/v3/workflows/" + url.PathEscape(wf) + "/versions/" + url.PathEscape(version) + "/actions/start-batch"
	results := make([]json.RawMessage, len(reqs))
	failed := 0
	for from := 0; from < len(reqs); from += maxBatch {
		batch := reqs[from:min(from+maxBatch, len(reqs))]
		if err := r.sendBatch(ctx, path, batch, results[from:from+len(batch)]); err != nil {
			return r.fail("start-batch", renameRequests(err, from, name))
		}
	}
	started, found := 0, 0
	for i, raw := range results {
		var o batchOutcome
		_ = json.Unmarshal(raw, &o)
		switch {
		case o.Error != nil:
			failed++
			if !r.json {
				fmt.Fprintf(r.o.Stdout, "%s: not started: %v\n", name(i), o.Error)
			}
		case o.Created:
			started++
			if !r.json {
				fmt.Fprintf(r.o.Stdout, "%s: started %s instance %d (run %d)\n", name(i), wf, o.WorkflowInstanceID, o.WorkflowRunID)
			}
		default:
			found++
			if !r.json {
				fmt.Fprintf(r.o.Stdout, "%s: %s instance %d was started by this request_id before\n", name(i), wf, o.WorkflowInstanceID)
			}
		}
	}
	if r.json {
		out, _ := json.Marshal(map[string]any{"results": results, "started": started, "found": found, "failed": failed})
		fmt.Fprintln(r.o.Stdout, string(out))
	} else {
		fmt.Fprintf(r.o.Stdout, "%d started, %d started before, %d not started\n", started, found, failed)
	}
	if failed > 0 {
		return ExitFailed
	}
	return ExitOK
}

// sendBatch sends one batch and puts each request's outcome in out. It
// sends the batch again after a throttle or a server-side failure, and the
// requests whose starts failed on the server's side, up to batchAttempts
// times.
func (r *runner) sendBatch(ctx context.Context, path string, batch []map[string]json.RawMessage, out []json.RawMessage) error {
	pending := make([]int, len(batch)) // indices in batch still to send
	for i := range pending {
		pending[i] = i
	}
	for attempt := 1; ; attempt++ {
		send := make([]map[string]json.RawMessage, len(pending))
		for k, i := range pending {
			send[k] = batch[i]
		}
		body, err := json.Marshal(map[string]any{"requests": send})
		if err != nil {
			return err
		}
		var ans batchAnswer
		err = r.c.Do(ctx, http.MethodPost, path, body, &ans)
		var ae *APIError
		switch {
		case err == nil && len(ans.Results) != len(send):
			return fmt.Errorf("the API answered %d outcomes to %d requests", len(ans.Results), len(send))
		case err == nil:
			var again []int
			for k, i := range pending {
				out[i] = ans.Results[k]
				var o batchOutcome
				if json.Unmarshal(ans.Results[k], &o) == nil && o.Error != nil && o.Error.Status >= 500 {
					again = append(again, i)
				}
			}
			if len(again) == 0 || attempt == batchAttempts {
				return nil
			}
			pending = again
		case errors.As(err, &ae) && ae.Status != http.StatusTooManyRequests && ae.Status < 500:
			return err
		case attempt == batchAttempts:
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(1<<(attempt-1)) * 500 * time.Millisecond):
		}
	}
}

// requestIndex is a request's place in a batch as the API names it.
var requestIndex = regexp.MustCompile(`requests\[(\d+)\]`)

// renameRequests names the requests an API error lists as the user knows
// them (a batch's requests[i] is request from+i).
func renameRequests(err error, from int, name func(int) string) error {
	var ae *APIError
	if !errors.As(err, &ae) {
		return err
	}
	e := *ae
	e.Errors = make([]string, len(ae.Errors))
	for k, d := range ae.Errors {
		e.Errors[k] = requestIndex.ReplaceAllStringFunc(d, func(m string) string {
			i, _ := strconv.Atoi(requestIndex.FindStringSubmatch(m)[1])
			return name(from + i)
		})
	}
	return &e
}
