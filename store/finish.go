package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/maestro-serverless/maestro/metering"
	"github.com/maestro-serverless/maestro/pricing"
)

// Ends written by workers.
//
// A worker whose step succeeded, while others are at its run (a fan-out, a
// DAG's parallel branches), hands the outcome to the decider. It used to
// put it in the run's inbox (an event item: one write unit, one more to
// delete it) and the decision then rewrote the attempt item inside its
// transaction (two units per KB). Now the worker writes the attempt's end
// itself, as the decision would (FinishAttempt: status, body, timeline
// entries, in the one write its outcome costs anyway; the end says what
// the outcome was), with a wake of the run's decider in the item's outbox. The wake names the
// attempt (Wake.Finished); the decider reads the attempts it is told about
// (FinishedAttempts), applies their outcomes, and leaves an item that
// already reads as its decision would have written it alone. A decision
// that ends the attempt otherwise (invalid outputs, a kill that came
// first) rewrites it: its status, body and timeline (the worker's entries
// replaced, see Attempt.ReplaceTimeline) win, as the run's state does.
//
// A lost wake leaves the run due in the sweep index (its sweep time covers
// the work it awaits): the sweeper's Redrive makes the decider read every
// attempt the run awaits.
const (
	// attrWorkerEntries counts the timeline entries a worker's
	// FinishAttempt appended: the last ones of the item's timeline.
	attrWorkerEntries = "wn"
)

// AttemptEnd is a step attempt's end as its worker writes it.
type AttemptEnd struct {
	Status   string
	Body     []byte
	Timeline [][]byte
}

// FinishAttempt writes attempt ref's end, provided token still holds its
// claim and it is RUNNING (ErrClaimLost otherwise), with, if wake, a wake
// of the run's decider naming the attempt in the item's outbox (endOutbox;
// a worker about to apply the end itself writes none, see WakeEnd). The
// end is the outcome: its reader derives the worker's event from it. The
// claim is removed with it.
func (s *Attempts) FinishAttempt(ctx context.Context, ref AttemptRef, token string, end AttemptEnd, wake bool) error {
	body, err := s.endBody(ref, end)
	if err != nil {
		return err
	}
	names := map[string]string{
		"#st": attrStatus, "#b": attrBody, "#e": attrEnc, "#tl": attrTimeline, "#wn": attrWorkerEntries,
		"#c": attrClaim, "#l": attrLease,
	}
	values := map[string]types.AttributeValue{
		":st": str(end.Status), ":b": body[attrBody], ":e": body[attrEnc], ":tl": entryList(end.Timeline),
		":wn": num(int64(len(end.Timeline))),
	}
	outbox := ""
	if wake {
		outbox = ", #ob = :ob"
		names["#ob"], values[":ob"] = attrOutbox, str(endOutbox)
	}
	// The claim goes: the attempt is no longer RUNNING, so it could not be
	// claimed again anyway, and the item is billed by size.
	set := "SET #st = :st, #b = :b, #e = :e, #tl = list_append(#tl, :tl), #wn = :wn" + outbox
	return s.updateCarrying(ctx, "finish", ref, token, set, " REMOVE #c, #l", names, values)
}

// endBody encodes an end's body as an attempt item stores it, refusing one
// over the item size limit.
func (s *base) endBody(ref AttemptRef, end AttemptEnd) (map[string]types.AttributeValue, error) {
	body, err := s.encodeBody(end.Body)
	if err != nil {
		return nil, err
	}
	if n := AttributeValueSize(body[attrBody]); n > MaxItemBytes {
		return nil, fmt.Errorf("store: finish %s: %w", ref, &ItemTooLargeError{Item: "step attempt " + ref.StepID, Bytes: n})
	}
	return body, nil
}

// claimedWriteError is the error of a write to attempt ref conditioned on
// its claim (what it did, for the message): ErrClaimLost when the
// condition failed.
func claimedWriteError(what string, ref AttemptRef, err error) error {
	var ccf *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &ccf):
		return fmt.Errorf("store: %s %s: %w", what, ref, ErrClaimLost)
	case err != nil:
		return fmt.Errorf("store: %s %s: %w", what, ref, err)
	}
	return nil
}

// FinishDeferredAttempt writes attempt ref's whole item, start and end, for
// a worker that ran the attempt without claiming it: a worker continuing
// its run inline runs the step its own commit started, whose start the
// commit deferred to it (see package orchestrator), and writes the item
// once, at the end, as ClaimAttempt with start and then FinishAttempt would
// have left it — start's timeline entries then end's, end's status and
// body, no claim. One write instead of two; until it, readers derive the
// attempt from the run's state, as for any deferred start.
//
// It returns ErrClaimLost when the item exists: a decision ended the
// attempt (a kill, a timeout) or, the run having been swept as stuck, a
// worker claimed it again.
func (s *Attempts) FinishDeferredAttempt(ctx context.Context, ref AttemptRef, start AttemptStart, end AttemptEnd, wake bool) error {
	body, err := s.endBody(ref, end)
	if err != nil {
		return err
	}
	item := merge(ref.key(), map[string]types.AttributeValue{
		attrStatus:        str(end.Status),
		attrBody:          body[attrBody],
		attrEnc:           body[attrEnc],
		attrTimeline:      entryList(append(slices.Clip(start.Timeline), end.Timeline...)),
		attrWorkerEntries: num(int64(len(end.Timeline))),
	})
	if wake {
		item[attrOutbox] = str(endOutbox)
	}
	wctx, taken, own := ctx, pricing.Usage(nil), int64(0)
	if !keepsLedger(ctx) {
		// The end carries the worker's usage to the run (see ops.go).
		taken = takeUsage(ctx)
		own = withOwnUnits(item, taken, 1, 0)
		wctx = precharged(ctx, own)
	}
	_, err = s.db.PutItem(wctx, &dynamodb.PutItemInput{
		TableName:                aws.String(s.table),
		Item:                     item,
		ConditionExpression:      aws.String("attribute_not_exists(#pk)"),
		ExpressionAttributeNames: map[string]string{"#pk": attrPK},
	})
	switch {
	case err != nil && !keepsLedger(ctx):
		giveBack(ctx, taken, own)
	case err == nil && !keepsLedger(ctx):
		reportWritten(ctx, metering.Sum(taken, unitsUsage(own)))
	}
	return claimedWriteError("finish", ref, err)
}

// WakeEnd adds the wake to the end of attempt ref its worker wrote without
// one (FinishAttempt), when it is still there: the worker could not apply
// it itself after all.
func (s *Attempts) WakeEnd(ctx context.Context, ref AttemptRef) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       ref.key(),
		UpdateExpression:          aws.String("SET #ob = :ob"),
		ConditionExpression:       aws.String("attribute_exists(#wn)"),
		ExpressionAttributeNames:  map[string]string{"#ob": attrOutbox, "#wn": attrWorkerEntries},
		ExpressionAttributeValues: map[string]types.AttributeValue{":ob": str(endOutbox)},
	})
	var ccf *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &ccf):
		return nil // a decision applied it meanwhile
	case err != nil:
		return fmt.Errorf("store: wake the end of %s: %w", ref, err)
	}
	return nil
}

// FinishedAttempt is an attempt item whose worker wrote its end
// (FinishAttempt) or recorded its outcome (RecordOutcome, by a worker that
// went on inline and died).
type FinishedAttempt struct {
	Ref     AttemptRef
	Attempt Attempt
	// Outcome is the outcome a worker recorded (an engine event, JSON);
	// nil for an end the worker wrote.
	Outcome []byte
	// WorkerEntries is how many of the last timeline entries the worker
	// wrote with the end (0 for an outcome recorded alone).
	WorkerEntries int
	// Ops is the usage the worker's end or outcome carries to the run (see
	// ops.go), added by the commit that applies it.
	Ops pricing.Usage
}

// FinishedAttempts reads attempts refs (BatchGetItem, strongly consistent)
// and returns those that carry a worker's end or outcome, in refs' order.
func (s *Attempts) FinishedAttempts(ctx context.Context, refs []AttemptRef) ([]FinishedAttempt, error) {
	ks := make([]map[string]types.AttributeValue, 0, len(refs))
	seen := map[AttemptRef]bool{}
	for _, r := range refs {
		if !seen[r] {
			seen[r] = true
			ks = append(ks, r.key())
		}
	}
	items, err := s.batchGet(ctx, ks)
	if err != nil {
		return nil, fmt.Errorf("store: read finished attempts: %w", err)
	}
	byRef := map[AttemptRef]FinishedAttempt{}
	for _, item := range items {
		var outcome []byte
		if o, ok := item[attrOutcome].(*types.AttributeValueMemberB); ok {
			outcome = o.Value
		}
		n := int(getN(item, attrWorkerEntries))
		if outcome == nil && n == 0 {
			continue
		}
		a, ref, err := attemptRefFromItem(item)
		if err != nil {
			return nil, err
		}
		if n < 0 || n > len(a.Timeline) {
			return nil, fmt.Errorf("store: attempt %s: %d worker entries of a timeline of %d", ref, n, len(a.Timeline))
		}
		byRef[ref] = FinishedAttempt{Ref: ref, Attempt: *a, Outcome: outcome, WorkerEntries: n, Ops: opsOf(item)}
	}
	out := make([]FinishedAttempt, 0, len(byRef))
	for _, r := range refs {
		if f, ok := byRef[r]; ok {
			out = append(out, f)
			delete(byRef, r)
		}
	}
	return out, nil
}

// FinishedStep names a step attempt whose worker wrote its end (a hint in
// a wake: the decider reads it).
type FinishedStep struct {
	StepID  string `json:"step_id"`
	Attempt int64  `json:"step_attempt_id"`
}

// FinishedWakeMessage is the wake of ref's run that names ref.
func FinishedWakeMessage(ref AttemptRef) Message {
	return WakeMessageOf(Wake{WorkflowID: ref.WorkflowID, InstanceID: ref.InstanceID, RunID: ref.RunID,
		Finished: []FinishedStep{{StepID: ref.StepID, Attempt: ref.Attempt}}})
}

func wakeBody(w Wake) string {
	b, _ := json.Marshal(w) // strings and numbers: cannot fail
	return string(b)
}

// WakeCoalesceKey returns the key under which decision-queue wake bodies
// may be merged (MergeWakes): the run a Wake body names, without its
// hints. Any other body is its own key.
func WakeCoalesceKey(body string) string {
	var w Wake
	if err := json.Unmarshal([]byte(body), &w); err != nil || w.WorkflowID == "" {
		return body
	}
	return WakeBody(w.WorkflowID, w.InstanceID, w.RunID)
}

// MergeWakes returns one wake body for wake bodies of one run (same
// WakeCoalesceKey): the run, with every attempt any of them names, in
// order, once each. Bodies that are not wakes share a key only when they
// are equal: the first is returned.
func MergeWakes(bodies ...string) string {
	var out Wake
	for _, b := range bodies {
		var w Wake
		if err := json.Unmarshal([]byte(b), &w); err != nil || w.WorkflowID == "" {
			return bodies[0]
		}
		out.WorkflowID, out.InstanceID, out.RunID = w.WorkflowID, w.InstanceID, w.RunID
		out.Ops = metering.Sum(out.Ops, w.Ops)
		for _, f := range w.Finished {
			if !slices.Contains(out.Finished, f) {
				out.Finished = append(out.Finished, f)
			}
		}
	}
	if len(out.Finished) == 0 && out.Ops == nil {
		return WakeBody(out.WorkflowID, out.InstanceID, out.RunID)
	}
	return wakeBody(out)
}
