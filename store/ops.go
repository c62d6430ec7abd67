package store

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/maestro-serverless/maestro/metering"
	"github.com/maestro-serverless/maestro/pricing"
)

// A run's orchestration cost (see package metering) is stored with the
// writes the orchestrator makes for the run anyway: the run item holds the
// run's total (attrOps), and an inbox event or a step attempt's end the
// usage it carries to the run, added when a commit applies it. Each such
// write moves what the context's ledger holds into the item it writes,
// with an estimate of its own write units (a commit's are in the total it
// writes), and tells the meter so (metering.Precharged): what the write is
// then billed beyond the estimate lands in the ledger for the next one.

// attrOps is the orchestration usage an item holds, as opsValue writes it.
const attrOps = "ops"

// maxEstimateRounds bounds the rounds of sizing an item that holds its
// own write units: its size settles after one or two.
const maxEstimateRounds = 4

// opsParts are the parts an item's usage holds, in the order it is
// written; opsCode is the short name each is stored under: the usage rides
// on items billed by the kilobyte, so it is kept to a few dozen bytes
// ("w=31;r=14.5;g=0.0312").
func opsParts() []string {
	return []string{pricing.DynamoDBWriteUnits, pricing.DynamoDBReadUnits, pricing.SQSRequests, pricing.SQSFIFORequests,
		pricing.SNSRequests, pricing.SchedulerInvocations, pricing.APIRequests, pricing.LambdaRequests, pricing.LambdaGBSeconds}
}

func opsCode(part string) string {
	switch part {
	case pricing.DynamoDBWriteUnits:
		return "w"
	case pricing.DynamoDBReadUnits:
		return "r"
	case pricing.SQSRequests:
		return "q"
	case pricing.SQSFIFORequests:
		return "f"
	case pricing.SNSRequests:
		return "n"
	case pricing.SchedulerInvocations:
		return "s"
	case pricing.APIRequests:
		return "a"
	case pricing.LambdaRequests:
		return "l"
	case pricing.LambdaGBSeconds:
		return "g"
	}
	return ""
}

// opsValue encodes usage u (nil when empty): its orchestration parts,
// in a fixed order, each to six significant digits.
func opsValue(u pricing.Usage) types.AttributeValue {
	var b strings.Builder
	for _, part := range opsParts() {
		v := u[part]
		if !(v > 0) || math.IsInf(v, 0) {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(';')
		}
		b.WriteString(opsCode(part))
		b.WriteByte('=')
		b.WriteString(strconv.FormatFloat(v, 'g', 6, 64))
	}
	if b.Len() == 0 {
		return nil
	}
	return &types.AttributeValueMemberS{Value: b.String()}
}

// opsOf decodes the usage item holds (nil when none); what it cannot read
// it leaves out.
func opsOf(item map[string]types.AttributeValue) pricing.Usage {
	sv, ok := item[attrOps].(*types.AttributeValueMemberS)
	if !ok || sv.Value == "" {
		return nil
	}
	var u pricing.Usage
	for _, kv := range strings.Split(sv.Value, ";") {
		code, num, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(num, 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			continue
		}
		for _, part := range opsParts() {
			if opsCode(part) == code {
				if u == nil {
					u = pricing.Usage{}
				}
				u[part] = v
			}
		}
	}
	return u
}

// setOps sets item's usage to u (removes it when u is empty).
func setOps(item map[string]types.AttributeValue, u pricing.Usage) {
	if v := opsValue(u); v != nil {
		item[attrOps] = v
	} else {
		delete(item, attrOps)
	}
}

// WriteUnits is the write request units of an item of size bytes:
// ceil(size / 1 KB), at least 1.
func WriteUnits(size int) int64 {
	return max(1, int64((size+1023)/1024))
}

// unitsUsage is n write units as usage.
func unitsUsage(n int64) pricing.Usage {
	if n <= 0 {
		return nil
	}
	return pricing.Usage{pricing.DynamoDBWriteUnits: float64(n)}
}

// takeUsage takes what ctx's ledger holds (nil without a ledger).
func takeUsage(ctx context.Context) pricing.Usage {
	return metering.From(ctx).Take()
}

// giveBack returns usage taken for a write that failed to ctx's ledger,
// with the write's own estimate: the meter counted the failed write less
// that estimate.
func giveBack(ctx context.Context, taken pricing.Usage, own int64) {
	l := metering.From(ctx)
	l.AddUsage(taken)
	l.Add(pricing.DynamoDBWriteUnits, float64(own))
}

// precharged is ctx for a write whose own units (own) are already in what
// it records.
func precharged(ctx context.Context, own int64) context.Context {
	if metering.From(ctx) == nil {
		return ctx
	}
	return metering.Precharged(ctx, unitsUsage(own))
}

// withOwnUnits sets item's usage to base plus its own write units (units
// of its size, times factor, plus extra) and returns those units; the item
// is sized with the usage it holds.
func withOwnUnits(item map[string]types.AttributeValue, base pricing.Usage, factor, extra int64) int64 {
	var own int64
	for range maxEstimateRounds {
		setOps(item, metering.Sum(base, unitsUsage(own)))
		n := factor*WriteUnits(ItemSize(item)) + extra
		if n == own {
			break
		}
		own = n
	}
	return own
}

// keepLedgerKey marks a context whose attempt writes leave the ledger alone.
type keepLedgerKey struct{}

// KeepLedger returns ctx for attempt end writes that leave the ledger's
// usage for the commit that follows them (a worker about to apply the end
// itself, inline): the commit records it.
func KeepLedger(ctx context.Context) context.Context {
	return context.WithValue(ctx, keepLedgerKey{}, true)
}

func keepsLedger(ctx context.Context) bool {
	v, _ := ctx.Value(keepLedgerKey{}).(bool)
	return v
}

// recordOps sets the usage commit c's plan p records — the run's (c.Ops)
// with taken and the commit's own write units — on the run item and the
// items that carry it, and returns those own units.
func (s *Runs) recordOps(p *commitPlan, c Commit, taken pricing.Usage) int64 {
	run := p.items[0].Put.Item
	// The committer dispatches the iterations born running with its own.
	outbox := c.Outbox
	for _, ch := range c.Children {
		if ch.Born {
			outbox = append(slices.Clip(outbox), ch.Outbox...)
		}
	}
	after := afterCommit(outbox)
	// Only the run item and the items that carry its usage change size
	// from round to round: the others are sized once.
	units, index := make([]int64, len(p.items)), make([]int64, len(p.items))
	for i := range p.items {
		units[i], index[i] = itemUnits(p, c, i)
	}
	var own int64
	for range maxEstimateRounds {
		total := metering.Settle(c.Ops, metering.Sum(taken, after, unitsUsage(own)))
		if c.RecordedOps != nil {
			*c.RecordedOps = total
		}
		setOps(run, total)
		units[0], index[0] = itemUnits(p, c, 0)
		for _, i := range p.carry {
			setOps(p.items[i].Put.Item, total)
			units[i], index[i] = itemUnits(p, c, i)
		}
		n := commitUnits(units, index)
		if n == own {
			break
		}
		own = n
	}
	return own
}

// commitUnits is the write units of a commit whose items are billed units
// each, doubled in a transaction, and the sweep index's index units
// (itemUnits).
func commitUnits(units, index []int64) int64 {
	var n, idx int64
	for i, u := range units {
		n += u
		idx += index[i]
	}
	if len(units) > 1 {
		n *= 2
	}
	return n + idx
}

// itemUnits estimates the write units item i of plan p of commit c is
// billed, before a transaction doubles them — ceil(size / 1 KB): a put's
// whole item (the run item's the larger of it and the item it replaces),
// an update's key and values (a lower bound: DynamoDB bills the larger of
// the item before and after), one for a delete (inbox events are small) or
// a condition check — and the sweep index's entries it writes or removes.
func itemUnits(p *commitPlan, c Commit, i int) (units, index int64) {
	it := p.items[i]
	switch {
	case it.Put != nil:
		size := ItemSize(it.Put.Item)
		var index int64
		if i == 0 {
			size = max(size, c.PriorBytes)
			if c.SweepAt != c.PriorSweepAt {
				index = b2i(c.PriorSweepAt > 0) + b2i(c.SweepAt > 0)
			}
		} else if _, ok := it.Put.Item[attrSweepSK]; ok {
			index = 1
		}
		return WriteUnits(size), index
	case it.Update != nil:
		size := ItemSize(it.Update.Key)
		for _, v := range it.Update.ExpressionAttributeValues {
			size += AttributeValueSize(v)
		}
		return WriteUnits(size), 0
	}
	return 1, 0
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// updateCarrying makes the claimed update of attempt ref (claimedUpdate)
// of expression set then rest (what follows the SET clause), the item
// carrying the worker's usage and the update's own write units to the run
// unless ctx keeps the ledger (KeepLedger). what names the write in errors.
func (s *base) updateCarrying(ctx context.Context, what string, ref AttemptRef, token, set, rest string,
	names map[string]string, values map[string]types.AttributeValue) error {
	keep := keepsLedger(ctx)
	var taken pricing.Usage
	var own int64
	if !keep {
		taken = takeUsage(ctx)
		set += ", #ops = :ops"
		names["#ops"] = attrOps
		for range maxEstimateRounds {
			values[":ops"] = opsValue(metering.Sum(taken, unitsUsage(own)))
			size := ItemSize(ref.key())
			for _, v := range values {
				size += AttributeValueSize(v)
			}
			n := WriteUnits(size)
			if n == own {
				break
			}
			own = n
		}
		ctx = precharged(ctx, own)
	}
	err := s.updateItem(ctx, s.claimedUpdate(ref, token, set+rest, names, values))
	switch {
	case err != nil && !keep:
		giveBack(ctx, taken, own)
	case err == nil && !keep:
		reportWritten(ctx, metering.Sum(taken, unitsUsage(own)))
	}
	return claimedWriteError(what, ref, err)
}

// afterCommit estimates what the stream router is billed for a commit's
// outbox once it is written: its check that a direct step's worker took
// it, so that its backstop copy is not needed (an eventually consistent
// read of the attempt item: half a unit), and its publishing of the
// change events to SNS (ten to a request: a tenth each). (What a message's
// send is billed the message carries itself: MessageOps.) The router's batches mix the events of every record of its
// invocation, so a run's share of a part-filled batch is not known: the
// estimate is low by less than a request per invocation that publishes.
func afterCommit(outbox []Message) pricing.Usage {
	var u pricing.Usage
	add := func(part string, n float64) {
		if n > 0 {
			if u == nil {
				u = pricing.Usage{}
			}
			u[part] += n
		}
	}
	direct := map[string]int{}
	var events int
	for _, m := range outbox {
		if m.Direct {
			direct[m.Queue]++
		}
		if m.Queue == QueueEvents {
			events += m.Events
		}
	}
	add(pricing.DynamoDBReadUnits, 0.5*float64(direct[QueueWork]))
	add(pricing.SNSRequests, float64(events)/10)
	return u
}

// writtenKey carries where an attempt end write reports the usage it
// wrote on the item.
type writtenKey struct{}

// WithWrittenOps returns ctx for an attempt end write (FinishAttempt,
// FinishDeferredAttempt) that stores in *sink the usage it wrote on the
// item: a worker that applies the end itself (inline) carries it to the
// run with its commit.
func WithWrittenOps(ctx context.Context, sink *pricing.Usage) context.Context {
	return context.WithValue(ctx, writtenKey{}, sink)
}

// reportWritten tells ctx's sink (WithWrittenOps) what a write stored.
func reportWritten(ctx context.Context, u pricing.Usage) {
	if sink, ok := ctx.Value(writtenKey{}).(*pricing.Usage); ok && sink != nil {
		*sink = u
	}
}

// MessageOps returns the usage a queue message's JSON body carries (its
// "ops" field): its share of what its send was billed, which its sender
// (the stream router, a committer) adds (WithSendShare), and a worker's
// wake what the worker spent after its last write for the run; its
// receiver records it with the run's next write. Only the orchestration's
// parts are taken, at most maxMessagePart of each: a body cannot make a
// run record more than one handler's work. Nil when it carries none.
func MessageOps(body []byte) pricing.Usage {
	var m struct {
		Ops map[string]float64 `json:"ops"`
	}
	if json.Unmarshal(body, &m) != nil {
		return nil
	}
	var u pricing.Usage
	for part, v := range m.Ops {
		if pricing.KindOf(part) != pricing.KindOrchestration || !(v > 0) || math.IsInf(v, 0) {
			continue
		}
		if u == nil {
			u = pricing.Usage{}
		}
		u[part] = min(v, maxMessagePart)
	}
	return u
}

// maxMessagePart is the most of any part one message carries.
const maxMessagePart = 100

// WithSendShare returns a JSON object body with part's share of its send
// added to its "ops" field, first in the object (the rest of the body as
// it was); any other body is returned as it is.
func WithSendShare(body, part string, share float64) string {
	b := strings.TrimSpace(body)
	if share <= 0 || !strings.HasPrefix(b, "{") || !json.Valid([]byte(b)) {
		return body
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(b), &fields); err != nil {
		return body
	}
	if prior, ok := fields["ops"]; ok {
		// Already carrying usage (a worker's wake): add to it.
		var u pricing.Usage
		if json.Unmarshal(prior, &u) != nil {
			return body
		}
		ops, err := json.Marshal(metering.Sum(u, pricing.Usage{part: share}))
		if err != nil {
			return body
		}
		fields["ops"] = ops
		out, err := json.Marshal(fields)
		if err != nil {
			return body
		}
		return string(out)
	}
	ops, err := json.Marshal(pricing.Usage{part: share})
	if err != nil {
		return body
	}
	if len(fields) == 0 {
		return `{"ops":` + string(ops) + `}`
	}
	return `{"ops":` + string(ops) + "," + b[1:]
}
