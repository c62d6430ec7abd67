package bench

import (
	"context"
	"fmt"
	"io"
	"maps"
	"strconv"
	"strings"
	"sync"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/maestro-serverless/maestro/metering/awsmeter"
	"github.com/maestro-serverless/maestro/resources"
	"github.com/maestro-serverless/maestro/store"
)

// Billing granularities.
const (
	// writeUnitBytes is the item size one DynamoDB write request unit covers.
	writeUnitBytes = 1024
	// readUnitBytes is the data size one strongly consistent DynamoDB read
	// request unit covers.
	readUnitBytes = 4096
	// sqsChunkBytes is the payload size one billed SQS request covers.
	sqsChunkBytes = 64 * 1024
)

// Usage is what a Meter measured.
type Usage struct {
	// Requests counts SDK calls by "Service.Operation", for example
	// "DynamoDB.TransactWriteItems". A call counts once whatever its retries.
	Requests map[string]int64 `json:"requests"`
	// RequestMillis sums the calls' durations by "Service.Operation",
	// retries and backoff included.
	RequestMillis map[string]float64 `json:"request_ms"`
	// DynamoDBWriteUnits are the write request units of every write as
	// billed: as the emulator reports them (ConsumedCapacity, see
	// Meter.UseReportedCapacity) when it does, else EstimatedWriteUnits'.
	DynamoDBWriteUnits float64 `json:"dynamodb_write_units"`
	// EstimatedWriteUnits are the write request units of every write,
	// computed from the request: ceil(item bytes / 1 KB) per item, doubled
	// inside TransactWriteItems, plus the sweep index's. Puts carry the
	// whole item and are exact; an Update or Delete is sized from its key
	// and expression values, a lower bound of the stored item's size (AWS
	// bills the larger of the item before and after).
	EstimatedWriteUnits float64 `json:"dynamodb_estimated_write_units"`
	// ReportedCapacity says whether the emulator reported the capacity of
	// the successful writes (DynamoDBWriteUnits then uses its figures).
	ReportedCapacity bool `json:"dynamodb_reported_capacity"`
	// FailedWriteUnits is the part of DynamoDBWriteUnits spent by writes
	// that failed (a false condition, a cancelled transaction), estimated:
	// DynamoDB charges a failed conditional write as if it had been made.
	FailedWriteUnits float64 `json:"dynamodb_failed_write_units"`
	// WriteUnitsByKind splits EstimatedWriteUnits by the kind of item
	// written: the sort key's prefix (RUN state, S step attempt, T
	// timeline, E inbox event, I instance summary, ...), and "gsi1" for
	// the writes of the sweep index.
	WriteUnitsByKind map[string]float64 `json:"dynamodb_write_units_by_kind"`
	// RunItemWrites counts the successful writes of run items (a
	// decision's commit, a run's creation) by the item's own write units,
	// ceil(bytes / 1 KB), before a transaction doubles them: how what a
	// decision writes grows, or not, with the run's size.
	RunItemWrites map[int64]int64 `json:"run_item_writes_by_units"`
	// IndexWriteUnits is the part of EstimatedWriteUnits the sweep index
	// (gsi1, keys only: one unit per entry written or removed) costs: a
	// successful write that adds an item to it, removes one, or changes an
	// item's due time (a removal and an addition).
	IndexWriteUnits float64 `json:"dynamodb_index_write_units"`
	// DynamoDBReadUnits are the read request units of every read, computed
	// from the response: ceil(bytes returned / 4 KB), at least 1, per
	// GetItem, Query or Scan page, halved for eventually consistent reads
	// and doubled for TransactGetItems.
	DynamoDBReadUnits float64 `json:"dynamodb_read_units"`
	// SQSBilledRequests are SQS requests as billed (one per 64 KB of
	// payload), leaving out receives that returned no message.
	SQSBilledRequests int64 `json:"sqs_billed_requests"`
	// SQSFIFOBilledRequests is the part of SQSBilledRequests that went to
	// FIFO queues (billed at a higher price).
	SQSFIFOBilledRequests int64 `json:"sqs_fifo_billed_requests"`
	// SQSEmptyReceives counts receives that returned no message: idle
	// polling, whose cost depends on time, not on steps.
	SQSEmptyReceives int64 `json:"sqs_empty_receives"`
	// StreamRecords counts records returned by DynamoDB Streams GetRecords.
	StreamRecords int64 `json:"stream_records"`
	// SNSBilledMessages are SNS publish requests as billed: one per 64 KB
	// chunk of a Publish's message or of a PublishBatch's whole payload.
	SNSBilledMessages int64 `json:"sns_billed_messages"`
}

// Meter is an AWS SDK middleware that counts the requests a system makes
// and the billing units they consume. It is safe for concurrent use. Calls
// made with a context from withoutMetering (the benchmark's own reads) are
// not counted.
type Meter struct {
	mu    sync.Mutex
	u     Usage
	trace io.Writer
	// indexed holds the sweep-index sort key of every item the metered
	// writes left in the index, by table key.
	indexed map[string]string
	// reported asks DynamoDB for the capacity writes consume and uses it.
	reported bool
}

// UseReportedCapacity has the meter ask for the capacity each write
// consumes (ReturnConsumedCapacity) and count what DynamoDB reports instead
// of its estimate: DynamoDB Local bills an update or a delete by the whole
// item, as AWS does, which the request alone cannot tell, and doubles
// transactional writes, as AWS does (see reportedWriteUnits for where it
// reports too little). Call it before the calls to count, for an emulator
// that reports capacity as DynamoDB Local does.
func (m *Meter) UseReportedCapacity() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reported = true
	m.u.ReportedCapacity = true
}

// NewMeter returns a meter at zero.
func NewMeter() *Meter {
	return &Meter{u: newUsage(), indexed: map[string]string{}}
}

// NewTracingMeter returns a meter at zero that also writes one line per
// metered call to trace: when it ended, how long it took, the operation,
// the items a transaction held and its write units.
func NewTracingMeter(trace io.Writer) *Meter {
	return &Meter{u: newUsage(), trace: trace, indexed: map[string]string{}}
}

// meterID names the meter's middleware in a client's stack.
const meterID = "maestro.bench.Meter"

// Middleware returns an API option that adds the meter to a client's
// stack; pass it with config.WithAPIOptions or in aws.Config.APIOptions.
// The meter sits in the initialize step, so it sees each call once, with
// its typed input and output.
func (m *Meter) Middleware() func(*middleware.Stack) error {
	return func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc(meterID,
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				m.mu.Lock()
				reported := m.reported
				m.mu.Unlock()
				if reported && !unmetered(ctx) {
					awsmeter.AskCapacity(in.Parameters)
				}
				start := time.Now()
				clock := callClockFrom(ctx)
				if clock != nil {
					clock.begin(start)
				}
				out, md, err := next.HandleInitialize(ctx, in)
				if clock != nil {
					clock.end(time.Now(), awsmiddleware.GetServiceID(ctx))
				}
				if !unmetered(ctx) {
					m.record(awsmiddleware.GetServiceID(ctx), awsmiddleware.GetOperationName(ctx), time.Since(start), in.Parameters, out.Result, err)
				}
				return out, md, err
			}), middleware.After)
	}
}

// Usage returns a copy of what was measured since the last Reset.
func (m *Meter) Usage() Usage {
	m.mu.Lock()
	defer m.mu.Unlock()
	u := m.u
	u.Requests = maps.Clone(m.u.Requests)
	u.RequestMillis = maps.Clone(m.u.RequestMillis)
	u.WriteUnitsByKind = maps.Clone(m.u.WriteUnitsByKind)
	u.RunItemWrites = maps.Clone(m.u.RunItemWrites)
	return u
}

// Reset sets every figure back to zero.
func (m *Meter) Reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.u = newUsage()
	m.u.ReportedCapacity = m.reported
}

func newUsage() Usage {
	return Usage{Requests: map[string]int64{}, RequestMillis: map[string]float64{}, WriteUnitsByKind: map[string]float64{},
		RunItemWrites: map[int64]int64{}}
}

// record adds one call. Writes are charged whether or not they succeed, as
// DynamoDB charges failed conditional writes and cancelled transactions.
func (m *Meter) record(service, op string, took time.Duration, params, result any, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.u.Requests[service+"."+op]++
	m.u.RequestMillis[service+"."+op] += float64(took.Microseconds()) / 1000
	var items, units int64
	var kinds []string
	eachWrite(params, func(kind string, n int64) {
		items++
		units += n
		if m.trace != nil {
			kinds = append(kinds, kind+":"+strconv.FormatInt(n, 10))
		}
		m.u.WriteUnitsByKind[kind] += float64(n)
	})
	estimate := float64(units)
	if err == nil {
		eachRunItem(params, func(size int) { m.u.RunItemWrites[itemWriteUnits(size)]++ })
		if n := m.indexWrites(params); n > 0 {
			m.u.IndexWriteUnits += n
			m.u.WriteUnitsByKind["gsi1"] += n
			estimate += n
		}
	} else {
		m.u.FailedWriteUnits += estimate
	}
	billed := estimate
	if m.reported && err == nil {
		if r, ok := reportedWriteUnits(result, estimate); ok {
			billed = r
		}
	}
	m.u.EstimatedWriteUnits += estimate
	m.u.DynamoDBWriteUnits += billed
	if m.trace != nil {
		errText := ""
		if err != nil {
			errText = " error=" + strconv.Quote(err.Error())
		}
		detail := ""
		if len(kinds) > 0 {
			detail = " [" + strings.Join(kinds, " ") + "]"
		}
		if billed != estimate {
			detail += fmt.Sprintf(" billed=%g", billed)
		}
		if err == nil {
			if r := readUnits(params, result); r > 0 {
				detail += fmt.Sprintf(" rru=%g", r)
			}
		}
		fmt.Fprintf(m.trace, "%s %8.1fms %s.%s items=%d wru=%d%s%s\n",
			time.Now().Format("15:04:05.000"), float64(took.Microseconds())/1000, service, op, items, units, detail, errText)
	}
	if err == nil {
		m.u.DynamoDBReadUnits += readUnits(params, result)
	}
	switch in := params.(type) {
	case *sqs.ReceiveMessageInput:
		out, _ := result.(*sqs.ReceiveMessageOutput)
		if err == nil && (out == nil || len(out.Messages) == 0) {
			m.u.SQSEmptyReceives++
			return
		}
		var payload int
		if out != nil {
			for _, msg := range out.Messages {
				payload += messageBytes(msg)
			}
		}
		m.addSQS(in.QueueUrl, chunks(payload))
	case *sqs.SendMessageInput:
		m.addSQS(in.QueueUrl, chunks(len(deref(in.MessageBody))+attributeBytes(in.MessageAttributes)))
	case *sqs.SendMessageBatchInput:
		var payload int
		for _, e := range in.Entries {
			payload += len(deref(e.MessageBody)) + attributeBytes(e.MessageAttributes)
		}
		m.addSQS(in.QueueUrl, chunks(payload))
	case *sqs.DeleteMessageInput:
		m.addSQS(in.QueueUrl, 1)
	case *sqs.DeleteMessageBatchInput:
		m.addSQS(in.QueueUrl, 1)
	case *sqs.ChangeMessageVisibilityInput:
		m.addSQS(in.QueueUrl, 1)
	case *sqs.ChangeMessageVisibilityBatchInput:
		m.addSQS(in.QueueUrl, 1)
	case *sns.PublishInput:
		m.u.SNSBilledMessages += chunks(len(deref(in.Message)))
	case *sns.PublishBatchInput:
		// A batch of up to 10 is one request, billed per 64 KB of its
		// whole payload: "up to 10x" cheaper, as AWS documents
		// (docs.aws.amazon.com/sns/latest/dg/sns-batch-api-actions.html).
		payload := 0
		for _, e := range in.PublishBatchRequestEntries {
			payload += len(deref(e.Message))
		}
		m.u.SNSBilledMessages += chunks(payload)
	case *dynamodbstreams.GetRecordsInput:
		if out, ok := result.(*dynamodbstreams.GetRecordsOutput); ok && out != nil {
			m.u.StreamRecords += int64(len(out.Records))
		}
	}
}

// indexWrites returns the sweep-index writes of a successful write
// request: keys-only entries of under 1 KB, one unit each.
func (m *Meter) indexWrites(params any) float64 {
	var n float64
	put := func(item map[string]ddbtypes.AttributeValue) {
		k := tableKey(item)
		now := stringAttr(item, resources.AttrGSI1SK)
		if was := m.indexed[k]; was != now {
			if was != "" {
				n++
			}
			if now != "" {
				n++
			}
		}
		if now == "" {
			delete(m.indexed, k)
		} else {
			m.indexed[k] = now
		}
	}
	del := func(key map[string]ddbtypes.AttributeValue) {
		k := tableKey(key)
		if m.indexed[k] != "" {
			n++
			delete(m.indexed, k)
		}
	}
	switch in := params.(type) {
	case *dynamodb.PutItemInput:
		put(in.Item)
	case *dynamodb.DeleteItemInput:
		del(in.Key)
	case *dynamodb.BatchWriteItemInput:
		for _, reqs := range in.RequestItems {
			for _, r := range reqs {
				switch {
				case r.PutRequest != nil:
					put(r.PutRequest.Item)
				case r.DeleteRequest != nil:
					del(r.DeleteRequest.Key)
				}
			}
		}
	case *dynamodb.TransactWriteItemsInput:
		for _, it := range in.TransactItems {
			switch {
			case it.Put != nil:
				put(it.Put.Item)
			case it.Delete != nil:
				del(it.Delete.Key)
			}
		}
	}
	return n
}

func tableKey(item map[string]ddbtypes.AttributeValue) string {
	return stringAttr(item, resources.AttrPK) + "\x00" + stringAttr(item, resources.AttrSK)
}

func stringAttr(item map[string]ddbtypes.AttributeValue, name string) string {
	if v, ok := item[name].(*ddbtypes.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

func (m *Meter) addSQS(queueURL *string, n int64) {
	m.u.SQSBilledRequests += n
	if strings.HasSuffix(deref(queueURL), ".fifo") {
		m.u.SQSFIFOBilledRequests += n
	}
}

// chunks is the number of 64 KB chunks a payload is billed as, at least 1.
func chunks(payload int) int64 {
	return max(1, int64((payload+sqsChunkBytes-1)/sqsChunkBytes))
}

func messageBytes(msg sqstypes.Message) int {
	return len(deref(msg.Body)) + attributeBytes(msg.MessageAttributes)
}

// attributeBytes sizes SQS message attributes as SQS counts them towards
// the payload: name, type and value.
func attributeBytes(attrs map[string]sqstypes.MessageAttributeValue) int {
	n := 0
	for name, v := range attrs {
		n += len(name) + len(deref(v.DataType)) + len(deref(v.StringValue)) + len(v.BinaryValue)
	}
	return n
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// writeUnits returns the DynamoDB write request units of a request, or 0
// for anything that is not a DynamoDB write.
func writeUnits(params any) float64 {
	var n int64
	eachWrite(params, func(_ string, units int64) { n += units })
	return float64(n)
}

// eachWrite calls add with the kind (see itemKind) and write units of
// every item a DynamoDB write request writes.
func eachWrite(params any, add func(kind string, units int64)) {
	one := func(key map[string]ddbtypes.AttributeValue, size int, factor int64) {
		add(itemKind(key), factor*itemWriteUnits(size))
	}
	switch in := params.(type) {
	case *dynamodb.PutItemInput:
		one(in.Item, store.ItemSize(in.Item), 1)
	case *dynamodb.UpdateItemInput:
		one(in.Key, updateSize(in.Key, in.ExpressionAttributeNames, in.ExpressionAttributeValues), 1)
	case *dynamodb.DeleteItemInput:
		one(in.Key, store.ItemSize(in.Key), 1)
	case *dynamodb.BatchWriteItemInput:
		for _, reqs := range in.RequestItems {
			for _, r := range reqs {
				switch {
				case r.PutRequest != nil:
					one(r.PutRequest.Item, store.ItemSize(r.PutRequest.Item), 1)
				case r.DeleteRequest != nil:
					one(r.DeleteRequest.Key, store.ItemSize(r.DeleteRequest.Key), 1)
				}
			}
		}
	case *dynamodb.TransactWriteItemsInput:
		for _, it := range in.TransactItems {
			key, size := transactItem(it)
			one(key, size, 2)
		}
	}
}

// eachRunItem calls f with the size of every run item a write request
// puts.
func eachRunItem(params any, f func(size int)) {
	put := func(item map[string]ddbtypes.AttributeValue) {
		if itemKind(item) == "RUN" {
			f(store.ItemSize(item))
		}
	}
	switch in := params.(type) {
	case *dynamodb.PutItemInput:
		put(in.Item)
	case *dynamodb.TransactWriteItemsInput:
		for _, it := range in.TransactItems {
			if it.Put != nil {
				put(it.Put.Item)
			}
		}
	}
}

// sortKeyAttribute is the sort key of the orchestrator's table; its value's
// prefix up to the first '#' names the kind of item (RUN, S, T, E, I, ...).
const sortKeyAttribute = "sk"

// itemKind returns the kind of item a key or item belongs to, from its sort
// key's prefix, or "other".
func itemKind(item map[string]ddbtypes.AttributeValue) string {
	sk, ok := item[sortKeyAttribute].(*ddbtypes.AttributeValueMemberS)
	if !ok || sk.Value == "" {
		return "other"
	}
	if strings.Contains(sk.Value, "#PG#") {
		return "PG" // a page of a run's state
	}
	kind, _, _ := strings.Cut(sk.Value, "#")
	return kind
}

// transactItem returns the key (or item) and the size of one action of a
// transaction, sized as eachWrite does.
func transactItem(it ddbtypes.TransactWriteItem) (map[string]ddbtypes.AttributeValue, int) {
	switch {
	case it.Put != nil:
		return it.Put.Item, store.ItemSize(it.Put.Item)
	case it.Update != nil:
		return it.Update.Key, updateSize(it.Update.Key, it.Update.ExpressionAttributeNames, it.Update.ExpressionAttributeValues)
	case it.Delete != nil:
		return it.Delete.Key, store.ItemSize(it.Delete.Key)
	case it.ConditionCheck != nil:
		return it.ConditionCheck.Key, store.ItemSize(it.ConditionCheck.Key)
	}
	return nil, 0
}

// updateSize is what an update request says about the item's size: its
// key, the attribute names it sets and the values it uses.
func updateSize(key map[string]ddbtypes.AttributeValue, names map[string]string, values map[string]ddbtypes.AttributeValue) int {
	n := store.ItemSize(key)
	for _, name := range names {
		n += len(name)
	}
	for _, v := range values {
		n += store.AttributeValueSize(v)
	}
	return n
}

// itemWriteUnits is ceil(size / 1 KB), at least 1.
func itemWriteUnits(size int) int64 {
	return max(1, int64((size+writeUnitBytes-1)/writeUnitBytes))
}

// readUnits returns the DynamoDB read request units a successful read
// consumed, from the items it returned, or 0 for anything else.
func readUnits(params, result any) float64 {
	scale := func(consistent *bool) float64 {
		if consistent != nil && *consistent {
			return 1
		}
		return 0.5
	}
	switch in := params.(type) {
	case *dynamodb.GetItemInput:
		out, _ := result.(*dynamodb.GetItemOutput)
		size := 0
		if out != nil {
			size = store.ItemSize(out.Item)
		}
		return float64(readUnitsFor(size)) * scale(in.ConsistentRead)
	case *dynamodb.QueryInput:
		out, _ := result.(*dynamodb.QueryOutput)
		return float64(readUnitsFor(itemsSize(out))) * scale(in.ConsistentRead)
	case *dynamodb.ScanInput:
		out, _ := result.(*dynamodb.ScanOutput)
		size := 0
		if out != nil {
			for _, it := range out.Items {
				size += store.ItemSize(it)
			}
		}
		return float64(readUnitsFor(size)) * scale(in.ConsistentRead)
	case *dynamodb.BatchGetItemInput:
		out, _ := result.(*dynamodb.BatchGetItemOutput)
		var units float64
		if out != nil {
			for table, items := range out.Responses {
				ka := in.RequestItems[table]
				for _, it := range items {
					units += float64(readUnitsFor(store.ItemSize(it))) * scale(ka.ConsistentRead)
				}
			}
		}
		return units
	case *dynamodb.TransactGetItemsInput:
		out, _ := result.(*dynamodb.TransactGetItemsOutput)
		var units float64
		if out != nil {
			for _, r := range out.Responses {
				units += 2 * float64(readUnitsFor(store.ItemSize(r.Item)))
			}
		}
		return units
	}
	return 0
}

func itemsSize(out *dynamodb.QueryOutput) int {
	if out == nil {
		return 0
	}
	n := 0
	for _, it := range out.Items {
		n += store.ItemSize(it)
	}
	return n
}

// readUnitsFor is ceil(size / 4 KB), at least 1.
func readUnitsFor(size int) int64 {
	return max(1, int64((size+readUnitBytes-1)/readUnitBytes))
}

// unmeteredKey marks a context whose AWS calls the meter ignores.
type unmeteredKey struct{}

// withoutMetering returns a context whose AWS calls are not metered: the
// benchmark's own observation reads are not work of the system under test.
func withoutMetering(ctx context.Context) context.Context {
	return context.WithValue(ctx, unmeteredKey{}, true)
}

func unmetered(ctx context.Context) bool {
	v, _ := ctx.Value(unmeteredKey{}).(bool)
	return v
}
