package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// ErrNotFound is returned when an item does not exist.
var ErrNotFound = errors.New("store: not found")

// ErrBadCursor is returned for a page cursor the store did not hand out.
var ErrBadCursor = errors.New("store: bad cursor")

// ErrNoSlot is returned by CommitRun when its admission found every run
// slot of the workflow taken: nothing was written.
var ErrNoSlot = errors.New("store: no free run slot")

// ErrRequestTaken is returned by a creating commit (Commit.Create) whose
// start request id another start used first: nothing was written.
var ErrRequestTaken = errors.New("store: start request id already used")

// ErrConflict is returned when a conditional write lost a race: the caller
// must reload and decide again.
var ErrConflict = errors.New("store: version conflict")

// ErrLimit is returned (wrapped, in an error naming the limit) by a write
// that would make more items of a kind exist than the store keeps, such
// as a team past MaxTeams; nothing is written.
var ErrLimit = errors.New("store: limit reached")

// ErrTooManyItems is returned (wrapped) by a commit that would need more
// than MaxTransactItems writes; nothing is written. The caller commits less
// at once. A refused run commit's error is a *TooManyItemsError, which says
// how many.
var ErrTooManyItems = errors.New("store: more items than one transaction holds")

// TooManyItemsError is a run commit refused for its count of writes: Items,
// more than MaxTransactItems. It is ErrTooManyItems.
type TooManyItemsError struct{ Items int }

func (e *TooManyItemsError) Error() string {
	return fmt.Sprintf("%d items, more than DynamoDB's %d per transaction", e.Items, MaxTransactItems)
}

// Is reports whether target is ErrTooManyItems.
func (e *TooManyItemsError) Is(target error) bool { return target == ErrTooManyItems }

// ErrItemTooLarge is wrapped by the *ItemTooLargeError of a write past
// DynamoDB's item size limit.
var ErrItemTooLarge = errors.New("store: item too large")

// ItemTooLargeError names a write that exceeds MaxItemBytes. Nothing was
// written: the limit is checked before the transaction is sent.
type ItemTooLargeError struct {
	// Item says which item: "run state", "step attempt <id>/<n>", or
	// another item's key ("<pk> <sk>", see sizedDB).
	Item  string
	Bytes int
}

func (e *ItemTooLargeError) Error() string {
	return fmt.Sprintf("the %s item would be %d bytes, more than DynamoDB's item size limit of %d bytes", e.Item, e.Bytes, MaxItemBytes)
}

// Unwrap returns ErrItemTooLarge.
func (e *ItemTooLargeError) Unwrap() error { return ErrItemTooLarge }

// DynamoDB is the subset of the DynamoDB client the store uses.
type DynamoDB interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
	BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
	BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
}

// Store reads and writes the orchestrator's items in one table, an
// aggregate at a time: each field is the operations on one kind of item,
// so a caller depends on the aggregates it uses.
type Store struct {
	// Definitions: workflow heads, versions, properties, deletion.
	Definitions *Definitions
	// Instances: instance ids, start request ids, the run-strategy queue.
	Instances *Instances
	// Runs: run items, their inboxes and commits.
	Runs *Runs
	// Attempts: step attempt items, claims and ends.
	Attempts *Attempts
	// Signals: signal instances, subscriptions, lineage.
	Signals *Signals
	// Gates: breakpoints, tag permits, job queues.
	Gates *Gates
	// Tasks: task tokens and external jobs.
	Tasks *Tasks
	// Sweeps: the recovery sweeper's index.
	Sweeps *Sweeps
	// Templates: job templates.
	Templates *Templates
	// Teams: the teams authorization names.
	Teams *Teams
	// Backfills: workflows' backfills.
	Backfills *Backfills

	b *base
}

// base is what every aggregate shares: the table and the item encodings
// several of them write.
type base struct {
	db    DynamoDB
	table string
	// codec compresses bodies and outboxes (codec.go).
	codec codec
	// now is the clock the sweep index's due times are set by.
	now func() time.Time
	// eventSweepAfter is how long an inbox event may wait to be applied
	// before the sweeper wakes its run.
	eventSweepAfter time.Duration
	// store is the whole, for the operations that span aggregates.
	store *Store
}

// The aggregates.
type (
	// Definitions reads and writes workflow heads and versions.
	Definitions struct{ *base }
	// Instances reads and writes instance ids, start request ids and the
	// run-strategy queue.
	Instances struct{ *base }
	// Runs reads and writes run items, their inbox events and commits.
	Runs struct{ *base }
	// Attempts reads and writes step attempt items.
	Attempts struct{ *base }
	// Signals reads and writes signal instances, subscriptions and lineage.
	Signals struct{ *base }
	// Gates reads and writes breakpoints, tag permits and job queues.
	Gates struct{ *base }
	// Tasks reads and writes task tokens and external jobs.
	Tasks struct{ *base }
	// Sweeps reads and clears the recovery sweeper's index.
	Sweeps struct{ *base }
	// Templates reads and writes job templates.
	Templates struct{ *base }
	// Teams reads and writes teams.
	Teams struct{ *base }
	// Backfills reads and writes backfills.
	Backfills struct{ *base }
)

// Options tune a Store; the zero value is the default.
type Options struct {
	// Now is the clock (default time.Now).
	Now func() time.Time
	// EventSweepAfter is how long an inbox event may wait before the
	// recovery sweeper wakes its run (default DefaultEventSweepAfter).
	EventSweepAfter time.Duration
}

// DefaultEventSweepAfter is the default Options.EventSweepAfter: an event
// is applied within milliseconds of its wake, so one still there after 30
// seconds lost its wake.
const DefaultEventSweepAfter = 30 * time.Second

// New returns a Store over table.
func New(db DynamoDB, table string, opts Options) *Store {
	b := &base{db: sizedDB{db}, table: table, now: opts.Now, eventSweepAfter: opts.EventSweepAfter}
	if b.now == nil {
		b.now = time.Now
	}
	if b.eventSweepAfter <= 0 {
		b.eventSweepAfter = DefaultEventSweepAfter
	}
	s := &Store{
		Definitions: &Definitions{b}, Instances: &Instances{b}, Runs: &Runs{b}, Attempts: &Attempts{b},
		Signals: &Signals{b}, Gates: &Gates{b}, Tasks: &Tasks{b}, Sweeps: &Sweeps{b}, Templates: &Templates{b}, Teams: &Teams{b}, Backfills: &Backfills{b}, b: b,
	}
	b.store = s
	return s
}

// Table returns the table name.
func (s *Store) Table() string { return s.b.table }

// MaxTransactItems is DynamoDB's limit on items in one TransactWriteItems.
const MaxTransactItems = 100

// --- attribute helpers ---

func str(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func num(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}
func bin(v []byte) types.AttributeValue { return &types.AttributeValueMemberB{Value: v} }
func key(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrPK: str(pk), attrSK: str(sk)}
}

func getS(item map[string]types.AttributeValue, name string) string {
	if v, ok := item[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

func getN(item map[string]types.AttributeValue, name string) int64 {
	if v, ok := item[name].(*types.AttributeValueMemberN); ok {
		n, _ := strconv.ParseInt(v.Value, 10, 64)
		return n
	}
	return 0
}

// encodeBody stores b as a binary attribute, compressed (codec.go), and
// returns the attributes to merge into an item.
func (s *base) encodeBody(b []byte) (map[string]types.AttributeValue, error) {
	z, enc, err := s.codec.compress(b)
	if err != nil {
		return nil, err
	}
	return map[string]types.AttributeValue{attrBody: bin(z), attrEnc: str(enc)}, nil
}

// decodeBody returns an item's body as it was encoded (nil when it has none).
func decodeBody(item map[string]types.AttributeValue) ([]byte, error) {
	v, ok := item[attrBody].(*types.AttributeValueMemberB)
	if !ok {
		return nil, nil
	}
	return decode(getS(item, attrEnc), v.Value)
}

func merge(dst map[string]types.AttributeValue, src map[string]types.AttributeValue) map[string]types.AttributeValue {
	for k, v := range src {
		dst[k] = v
	}
	return dst
}

// isConflict reports whether err is a lost conditional write or a
// transaction conflict, either of which means "reload and retry".
func isConflict(err error) bool {
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return true
	}
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) {
		for _, r := range tce.CancellationReasons {
			if c := aws.ToString(r.Code); c == "ConditionalCheckFailed" || c == "TransactionConflict" {
				return true
			}
		}
	}
	var tc *types.TransactionConflictException
	return errors.As(err, &tc)
}

// cancelReasons returns the per-item cancellation codes of a cancelled transaction.
func cancelReasons(err error) []string {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		return nil
	}
	out := make([]string, len(tce.CancellationReasons))
	for i, r := range tce.CancellationReasons {
		out[i] = aws.ToString(r.Code)
	}
	return out
}

// prefixQuery is the query of the items of partition pk whose sort keys
// begin with prefix, in key order, eventually consistent; callers set what
// else they need (order, limit, consistency, filter).
func (s *base) prefixQuery(pk, prefix string) *dynamodb.QueryInput {
	return &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String("pk = :pk AND begins_with(sk, :p)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(pk), ":p": str(prefix)},
	}
}

// queryAll runs query in to its end, a page at a time, handing each item
// to each; an error from either stops it and is returned. It sets
// in.ExclusiveStartKey as it pages.
func (s *base) queryAll(ctx context.Context, in *dynamodb.QueryInput, each func(item map[string]types.AttributeValue) error) error {
	return s.queryPages(ctx, in, func(items []map[string]types.AttributeValue) (bool, error) {
		for _, item := range items {
			if err := each(item); err != nil {
				return false, err
			}
		}
		return true, nil
	})
}

// queryPages runs query in a page at a time, handing each page's items to
// page, until the last page or page answers false (it has read enough);
// an error from either stops it and is returned. It sets
// in.ExclusiveStartKey as it pages.
func (s *base) queryPages(ctx context.Context, in *dynamodb.QueryInput, page func(items []map[string]types.AttributeValue) (more bool, err error)) error {
	for {
		out, err := s.db.Query(ctx, in)
		if err != nil {
			return err
		}
		more, err := page(out.Items)
		if err != nil || !more || len(out.LastEvaluatedKey) == 0 {
			return err
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// getItem reads the item at k with a strongly consistent read: ErrNotFound
// when there is none. A failed read's error says "store:", what was read
// (format and args) and the cause.
func (s *base) getItem(ctx context.Context, k map[string]types.AttributeValue, format string, args ...any) (map[string]types.AttributeValue, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: k, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", fmt.Sprintf(format, args...), err)
	}
	if out.Item == nil {
		return nil, ErrNotFound
	}
	return out.Item, nil
}

// batchGet reads items by key with strongly consistent reads, 100 keys per
// request, retrying unprocessed keys; missing items are absent from the
// result, whose order is unspecified.
func (s *base) batchGet(ctx context.Context, keys []map[string]types.AttributeValue) ([]map[string]types.AttributeValue, error) {
	return s.batchRead(ctx, keys, types.KeysAndAttributes{ConsistentRead: aws.Bool(true)})
}

// batchRead is batchGet with the reads shaped by shape (its consistency and
// projection; its Keys are ignored).
func (s *base) batchRead(ctx context.Context, keys []map[string]types.AttributeValue, shape types.KeysAndAttributes) ([]map[string]types.AttributeValue, error) {
	var items []map[string]types.AttributeValue
	for len(keys) > 0 {
		n := min(len(keys), 100)
		chunk := shape
		chunk.Keys = keys[:n]
		req := map[string]types.KeysAndAttributes{s.table: chunk}
		keys = keys[n:]
		for attempt := 0; len(req) > 0; attempt++ {
			res, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
			if err != nil {
				return nil, err
			}
			items = append(items, res.Responses[s.table]...)
			req = res.UnprocessedKeys
			if len(req) > 0 {
				if err := backoff(ctx, attempt); err != nil {
					return nil, err
				}
			}
		}
	}
	return items, nil
}

func millis(t time.Time) int64 { return t.UnixMilli() }

// conditionalAttempts bounds the attempts of a read-then-conditional-write
// (see retryConditional).
const conditionalAttempts = 20

// retryConditional runs try, a read and a write conditioned on what it
// read, until the write succeeds. try returns write, the conditional
// write's error, apart from err, any other (returned as it is, as is a nil
// write). A write that lost to a concurrent one (isConflict) is tried
// again after a backoff, up to conditionalAttempts times; its other errors
// are "store: what: ...".
func retryConditional(ctx context.Context, what string, try func() (write, err error)) error {
	for attempt := 0; attempt < conditionalAttempts; attempt++ {
		write, err := try()
		switch {
		case err != nil:
			return err
		case write == nil:
			return nil
		case !isConflict(write):
			return fmt.Errorf("store: %s: %w", what, write)
		}
		if err := backoff(ctx, attempt); err != nil {
			return err
		}
	}
	return fmt.Errorf("store: %s: %w after %d attempts", what, ErrConflict, conditionalAttempts)
}

// backoff waits a jittered, growing pause before retry attempt+1.
func backoff(ctx context.Context, attempt int) error {
	d := time.Duration(1+rand.IntN(4<<min(attempt, 6))) * time.Millisecond
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
