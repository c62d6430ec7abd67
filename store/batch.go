package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/maestro-serverless/maestro/store/internal/layout"
)

// RunKey names one run of an instance.
type RunKey struct {
	WorkflowID        string
	InstanceID, RunID int64
}

// GetRuns reads the run items of many runs at once (BatchGetItem, 100 per
// request, strongly consistent): the records of those that exist. It is
// for readers of many children (params.getFromForeach), which read them
// one Query each otherwise.
func (s *Runs) GetRuns(ctx context.Context, keys []RunKey) (map[RunKey]*RunRecord, error) {
	ks := make([]map[string]types.AttributeValue, len(keys))
	for i, k := range keys {
		ks[i] = key(layout.RunPK(k.WorkflowID, k.InstanceID), layout.RunSK(k.RunID))
	}
	items, err := s.batchGet(ctx, ks)
	if err != nil {
		return nil, fmt.Errorf("store: get runs: %w", err)
	}
	out := make(map[RunKey]*RunRecord, len(items))
	for _, item := range items {
		wf, inst, err := layout.ParseRunPK(getS(item, attrPK))
		if err != nil {
			return nil, err
		}
		run, err := strconv.ParseInt(strings.TrimPrefix(getS(item, attrSK), "RUN#"), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("store: run key %q: %w", getS(item, attrSK), err)
		}
		rec, err := runRecordFromItem(item, wf, inst, run)
		if err != nil {
			return nil, err
		}
		if err := s.withPages(ctx, rec, item, nil); err != nil {
			if !errors.Is(err, errPageGone) {
				return nil, err
			}
			// A commit replaced a page since: read the run again.
			if rec, _, err = s.LoadRun(ctx, wf, inst, run); err != nil {
				return nil, err
			}
		}
		out[RunKey{WorkflowID: wf, InstanceID: inst, RunID: run}] = rec
	}
	return out, nil
}

// GetAttempts reads many step attempt items at once (BatchGetItem, 100 per
// request, strongly consistent): those that exist, by reference.
func (s *Attempts) GetAttempts(ctx context.Context, refs []AttemptRef) (map[AttemptRef]*Attempt, error) {
	ks := make([]map[string]types.AttributeValue, len(refs))
	for i, r := range refs {
		ks[i] = r.key()
	}
	items, err := s.batchGet(ctx, ks)
	if err != nil {
		return nil, fmt.Errorf("store: get attempts: %w", err)
	}
	out := make(map[AttemptRef]*Attempt, len(items))
	for _, item := range items {
		a, ref, err := attemptRefFromItem(item)
		if err != nil {
			return nil, err
		}
		out[ref] = a
	}
	return out, nil
}

// attemptRefFromItem decodes a step attempt item read by its whole key: the
// attempt and its reference.
func attemptRefFromItem(item map[string]types.AttributeValue) (*Attempt, AttemptRef, error) {
	wf, inst, err := layout.ParseRunPK(getS(item, attrPK))
	if err != nil {
		return nil, AttemptRef{}, err
	}
	a, run, err := attemptFromItem(item)
	if err != nil {
		return nil, AttemptRef{}, err
	}
	return a, AttemptRef{WorkflowID: wf, InstanceID: inst, RunID: run, StepID: a.StepID, Attempt: a.Attempt}, nil
}

// GetInstances reads the summaries of instances insts of workflow wf at
// once (BatchGetItem, 100 per request, strongly consistent): those that
// exist, by instance id.
func (s *Instances) GetInstances(ctx context.Context, wf string, insts []int64) (map[int64]*InstanceRecord, error) {
	ks := make([]map[string]types.AttributeValue, len(insts))
	for i, n := range insts {
		ks[i] = key(layout.WorkflowPK(wf), layout.InstanceSK(n))
	}
	items, err := s.batchGet(ctx, ks)
	if err != nil {
		return nil, fmt.Errorf("store: get instances of %s: %w", wf, err)
	}
	out := make(map[int64]*InstanceRecord, len(items))
	for _, item := range items {
		rec, err := instanceFromItem(item)
		if err != nil {
			return nil, err
		}
		out[rec.InstanceID] = rec
	}
	return out, nil
}

// ReserveInstances is ReserveInstance for a batch of starts, each with a
// request id of its own: for each request id, the instance a start with
// it already made (prior[i]) or a new id (ids[i]), the new ids
// consecutive in the order of requestIDs. It reads the request ids'
// records and their instances with one BatchGetItem each (per 100 keys)
// and takes the new ids with one update of the workflow's counter.
func (s *Instances) ReserveInstances(ctx context.Context, wf string, requestIDs []string) (ids []int64, prior []*InstanceRecord, err error) {
	if err := CheckRequestIDs(requestIDs); err != nil {
		return nil, nil, fmt.Errorf("store: reserve instances of %s: %w", wf, err)
	}
	ks := make([]map[string]types.AttributeValue, len(requestIDs))
	at := make(map[string]int, len(requestIDs)) // request sort key -> index
	for i, id := range requestIDs {
		sk := layout.RequestSK(id)
		ks[i], at[sk] = key(layout.WorkflowPK(wf), sk), i
	}
	items, err := s.batchGet(ctx, ks)
	if err != nil {
		return nil, nil, fmt.Errorf("store: read start requests of %s: %w", wf, err)
	}
	made := make([]int64, len(requestIDs)) // the instance a request made, or 0
	var insts []int64
	for _, item := range items {
		i, ok := at[getS(item, attrSK)]
		if !ok {
			continue
		}
		made[i] = getN(item, "instance")
		insts = append(insts, made[i])
	}
	found := map[int64]*InstanceRecord{}
	if len(insts) > 0 {
		if found, err = s.GetInstances(ctx, wf, insts); err != nil {
			return nil, nil, err
		}
	}
	prior = make([]*InstanceRecord, len(requestIDs))
	for i := range requestIDs {
		prior[i] = found[made[i]]
	}
	ids, err = NumberFresh(prior, func(n int) (int64, error) { return s.nextInstanceIDs(ctx, wf, n) })
	if err != nil {
		return nil, nil, err
	}
	return ids, prior, nil
}

// NumberFresh numbers the starts of a batch that no earlier start made
// (prior[i] nil): consecutive instance ids in their order, the first of
// them taken by take(n) for all n; ids[i] is 0 for the others. With none
// to number, take is not called.
func NumberFresh(prior []*InstanceRecord, take func(n int) (int64, error)) ([]int64, error) {
	ids := make([]int64, len(prior))
	fresh := 0
	for _, p := range prior {
		if p == nil {
			fresh++
		}
	}
	if fresh == 0 {
		return ids, nil
	}
	next, err := take(fresh)
	if err != nil {
		return nil, err
	}
	for i, p := range prior {
		if p == nil {
			ids[i], next = next, next+1
		}
	}
	return ids, nil
}

// CheckRequestIDs refuses a batch of start request ids with an empty or
// repeated one (see Instances.ReserveInstances).
func CheckRequestIDs(requestIDs []string) error {
	seen := make(map[string]bool, len(requestIDs))
	for i, id := range requestIDs {
		if id == "" || seen[id] {
			return fmt.Errorf("request id %d (%q) is empty or repeated", i, id)
		}
		seen[id] = true
	}
	return nil
}
