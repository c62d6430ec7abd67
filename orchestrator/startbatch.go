package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/maestro-serverless/maestro/model"
)

// MaxBatchStarts is the most run requests one StartBatch takes. The
// deployed stage admits 50 API requests a second, so a client that starts
// hundreds of runs at once sends them in batches; a hundred starts are a
// few round trips each, well inside API Gateway's 29 s.
const MaxBatchStarts = 100

// batchStartsAtOnce is how many of a PARALLEL workflow's batch starts go
// at once. Their commits contend for the workflow's slot counter: on the
// local stack 60 starts answered in 2.1-2.5 s ten at once, 1.3-1.5 s
// thirty at once, 1.5-1.7 s all at once, and 60 single start requests
// sent at once in 1.7-1.8 s.
const batchStartsAtOnce = 30

// BatchStart is one run request's outcome in a batch start: the instance
// it started, or the one its request_id started before (Created false),
// or the error that kept it from starting.
type BatchStart struct {
	*StartResponse
	// Error is why the request started nothing. The batch sent again
	// with the same request_ids starts what did not start and nothing
	// twice.
	Error *Error `json:"error,omitempty"`
}

// BatchStartResult answers a batch start: one outcome per request, in
// request order, and how many started, were found started before, or
// failed.
type BatchStartResult struct {
	Results []BatchStart `json:"results"`
	Started int          `json:"started"`
	Found   int          `json:"found"`
	Failed  int          `json:"failed"`
}

// StartBatch starts an instance of the selected version for each request,
// as StartWorkflow would, and answers each one's outcome in request order.
//
// Every request carries a request_id of its own: sending a batch again
// starts nothing twice. The requests are checked before anything is
// written, and a batch the start would refuse any of (more than
// MaxBatchStarts requests, a missing or repeated request_id, run params
// that are not valid or override a protected param) is refused whole,
// naming the request (requests[i]). Past that check each start stands
// alone: one that fails (a store error) is answered in its place while the
// others go on, and one not begun when the request's deadline is near
// (batchStartMargin) is answered 503.
//
// Instance ids are reserved together, in request order, so a workflow's
// queue serves a batch's runs in that order. A PARALLEL workflow's runs are then
// started batchStartsAtOnce at a time; any other strategy's one after
// another, so that the first of them takes the free slot.
func (o *Runs) StartBatch(ctx context.Context, wf, selector string, reqs []StartRequest) (*BatchStartResult, error) {
	if err := checkBatchRequests(reqs); err != nil {
		return nil, err
	}
	target, err := o.startTarget(ctx, wf, selector)
	if err != nil {
		return nil, err
	}
	params := make([]model.Params, len(reqs))
	var problems []string
	for i, req := range reqs {
		p, err := target.runParams(req, model.Params{})
		if err != nil {
			problems = append(problems, requestProblems(i, err)...)
			continue
		}
		params[i] = p
	}
	if len(problems) > 0 {
		return nil, Invalid("invalid batch start: nothing was started", problems...)
	}
	requestIDs := make([]string, len(reqs))
	for i, req := range reqs {
		requestIDs[i] = req.RequestID
	}
	ids, prior, err := o.store.Instances.ReserveInstances(ctx, wf, requestIDs)
	if err != nil {
		return nil, Internal(err)
	}
	res := &BatchStartResult{Results: make([]BatchStart, len(reqs))}
	for i, p := range prior {
		if p != nil {
			res.Results[i].StartResponse = startResponse(p, false)
		}
	}
	at := 1
	if strategyOf(target.head).rule == model.RunParallel {
		at = batchStartsAtOnce
	}
	slots := make(chan struct{}, at)
	var wg sync.WaitGroup
	for i, req := range reqs {
		if ids[i] == 0 {
			continue
		}
		slots <- struct{}{}
		if late(ctx) {
			<-slots
			res.Results[i].Error = &Error{Status: http.StatusServiceUnavailable, Message: fmt.Sprintf(
				"not started: less than %v of the request's time was left for it; send the batch again (its request_id keeps the others from starting twice)", batchStartMargin)}
			continue
		}
		wg.Go(func() {
			defer func() { <-slots }()
			resp, err := o.startReserved(ctx, target, req, params[i], requestInitiator(ctx, req), nil, ids[i])
			if err != nil {
				res.Results[i].Error = o.batchFailure(ctx, wf, req, err)
				return
			}
			res.Results[i].StartResponse = resp
		})
	}
	wg.Wait()
	for _, r := range res.Results {
		switch {
		case r.Error != nil:
			res.Failed++
		case r.Created:
			res.Started++
		default:
			res.Found++
		}
	}
	return res, nil
}

// batchStartMargin is the time a batch start leaves itself before its
// request's deadline (the API's: API Gateway answers 504 after 29 s): a
// start not begun by then is answered 503, to be sent again, rather than
// cut off mid-way.
const batchStartMargin = 3 * time.Second

// late reports whether ctx's deadline is nearer than batchStartMargin.
func late(ctx context.Context) bool {
	d, ok := ctx.Deadline()
	return ctx.Err() != nil || ok && time.Until(d) < batchStartMargin
}

// checkBatchRequests checks a batch's size and request ids.
func checkBatchRequests(reqs []StartRequest) error {
	switch {
	case len(reqs) == 0:
		return Invalid("invalid batch start", "requests: must hold at least one run request")
	case len(reqs) > MaxBatchStarts:
		return Invalid("invalid batch start", fmt.Sprintf("requests: at most %d run requests are allowed, got %d", MaxBatchStarts, len(reqs)))
	}
	var problems []string
	first := make(map[string]int, len(reqs))
	for i, req := range reqs {
		if req.RequestID == "" {
			problems = append(problems, fmt.Sprintf("requests[%d].request_id: is required in a batch (it makes sending the batch again safe)", i))
			continue
		}
		if j, ok := first[req.RequestID]; ok {
			problems = append(problems, fmt.Sprintf("requests[%d].request_id: repeats requests[%d].request_id", i, j))
			continue
		}
		first[req.RequestID] = i
	}
	if len(problems) > 0 {
		return Invalid("invalid batch start: nothing was started", problems...)
	}
	return nil
}

// requestProblems are the field errors err lists, each prefixed with the
// request's place in the batch.
func requestProblems(i int, err error) []string {
	e := AsError(err)
	if len(e.Errors) == 0 {
		return []string{fmt.Sprintf("requests[%d]: %s", i, e.Message)}
	}
	out := make([]string, len(e.Errors))
	for k, d := range e.Errors {
		out[k] = fmt.Sprintf("requests[%d]: %s: %s", i, e.Message, d)
	}
	return out
}

// batchFailure is a failed batch start's answer; the cause of an internal
// error, which the answer does not carry, is logged.
func (o *Runs) batchFailure(ctx context.Context, wf string, req StartRequest, err error) *Error {
	e := AsError(err)
	if e.Status >= 500 {
		cause := errors.Unwrap(e)
		if cause == nil {
			cause = e
		}
		o.log.ErrorContext(ctx, "a batch start failed", "workflow_id", wf, "request_id", req.RequestID, "error", cause)
	}
	return e
}
