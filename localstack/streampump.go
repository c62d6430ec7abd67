package localstack

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// StreamsAPI is the part of the DynamoDB Streams client a StreamPump uses.
type StreamsAPI interface {
	DescribeStream(context.Context, *dynamodbstreams.DescribeStreamInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error)
	GetShardIterator(context.Context, *dynamodbstreams.GetShardIteratorInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error)
	GetRecords(context.Context, *dynamodbstreams.GetRecordsInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error)
}

// StreamHandler handles a batch of stream records, as a Lambda function
// behind a DynamoDB event source mapping does.
type StreamHandler func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error)

// StreamFilter decides whether a record reaches the handler; it stands in
// for an event source mapping's filter criteria.
type StreamFilter func(events.DynamoDBEventRecord) bool

// NewImageHas returns a StreamFilter that passes records whose new image
// has the attribute attr (resources.Spec.StreamFilterAttribute).
func NewImageHas(attr string) StreamFilter {
	return func(r events.DynamoDBEventRecord) bool {
		_, ok := r.Change.NewImage[attr]
		return ok
	}
}

// Defaults of StreamPumpOptions.
const (
	// DefaultStreamInterval is how often a shard is polled, as Lambda does.
	DefaultStreamInterval = 250 * time.Millisecond
	// DefaultStreamBatchSize is the most records per handler call.
	DefaultStreamBatchSize = 100
	// DefaultRetryBackoff is the first wait before a failed batch is retried.
	DefaultRetryBackoff = 100 * time.Millisecond
	// DefaultMaxRetryBackoff caps the doubling retry wait.
	DefaultMaxRetryBackoff = 5 * time.Second
	// DefaultShardRefresh is how often the stream's shard list is re-read
	// besides when a shard ends (the only time a new one appears). Rarely:
	// DynamoDB Local answers DescribeStream by going through every stream
	// record it holds, deleted tables' included, on the one thread that
	// serves every request — 0.2 s and more after a few large tests, every
	// one of them stalling the whole emulator; at a 5 s period the stacks of
	// a test run spent most of DynamoDB Local's time there.
	DefaultShardRefresh = time.Minute
)

// StreamPumpOptions tunes a StreamPump. The zero value is ready to use.
type StreamPumpOptions struct {
	// Interval is the polling period; zero means DefaultStreamInterval.
	Interval time.Duration
	// BatchSize is the most records per handler call (1 to 1000); zero
	// means DefaultStreamBatchSize.
	BatchSize int
	// Filter drops records before the handler sees them; nil passes all.
	Filter StreamFilter
	// RetryBackoff is the first wait before retrying a failed batch; it
	// doubles per consecutive failure up to MaxRetryBackoff. Zero means
	// DefaultRetryBackoff.
	RetryBackoff time.Duration
	// MaxRetryBackoff caps the retry wait; zero means DefaultMaxRetryBackoff.
	MaxRetryBackoff time.Duration
	// MaxRetryAttempts is how often a failing batch is retried before its
	// remaining records are skipped (logged as errors). Zero retries until
	// the handler succeeds, as Lambda's default (-1) does.
	MaxRetryAttempts int
	// ShardRefresh is how often new shards are looked for; zero means
	// DefaultShardRefresh. A shard that ends triggers a refresh at once.
	ShardRefresh time.Duration
	// StartAtLatest starts the shards that exist when Run starts at their
	// newest record (LATEST) instead of their oldest (TRIM_HORIZON).
	// Shards found later always start at TRIM_HORIZON.
	StartAtLatest bool
	// Checkpoints, when set, keeps each shard's position: a shard with a
	// checkpoint resumes after it (StartAtLatest does not apply to it), and
	// the position is saved after every handled batch.
	Checkpoints Checkpoints
	// Region fills the records' awsRegion when the emulator leaves it out.
	Region string
	// Logger receives errors and retries; nil discards.
	Logger *slog.Logger
}

// StreamPump polls a DynamoDB stream and calls a handler with the records,
// playing Lambda's DynamoDB event source mapping: each shard's records are
// delivered in order, a shard's children wait until it is drained, a
// failed batch is retried (from the first failed record when the handler
// reports batch item failures), and records the filter rejects are
// dropped.
type StreamPump struct {
	client    StreamsAPI
	streamARN string
	handler   StreamHandler
	opts      StreamPumpOptions
	log       *slog.Logger

	// Owned by Run.
	shards      map[string]*shardState
	lastRefresh time.Time
	started     bool

	// rounds counts completed poll rounds; idle says whether the last one
	// read no record and left none pending (see Progress).
	rounds atomic.Uint64
	idle   atomic.Bool
}

// Progress reports how many poll rounds have completed and whether the last
// one found nothing to do: it read no record of any shard and none waits for
// a retry. A round that starts after a write reads it, so two rounds that
// complete after a moment, the last idle, show everything written before
// that moment was delivered.
func (p *StreamPump) Progress() (rounds uint64, idle bool) {
	return p.rounds.Load(), p.idle.Load()
}

// shardState is what the pump knows of one shard. During a poll only the
// goroutine polling the shard touches it.
type shardState struct {
	id       string
	parent   string
	iterator string // the next GetRecords iterator; "" means acquire one
	lastSeq  string // sequence number of the last record read
	// delivered, after GetRecords said the shard's data was trimmed, is
	// the sequence number of the last record read before: the shard is
	// read again from its oldest record and records up to it are passed
	// over (see read).
	delivered string
	latest    bool // acquire the first iterator at LATEST
	pending   []events.DynamoDBEventRecord
	saved     string // sequence number last saved as the checkpoint
	closed    bool   // GetRecords returned no next iterator
	done      bool   // closed and every record handled
	failures  int    // consecutive failed handler calls
	active    bool   // this round read a record (filtered or not)
	retryAt   time.Time
	requested bool // set when the shard asks for a shard-list refresh
}

// NewStreamPump returns a pump for the stream streamARN that calls handler.
func NewStreamPump(client StreamsAPI, streamARN string, handler StreamHandler, opts StreamPumpOptions) *StreamPump {
	opts.Interval = positiveOr(opts.Interval, DefaultStreamInterval)
	opts.BatchSize = min(positiveOr(opts.BatchSize, DefaultStreamBatchSize), 1000) // GetRecords' limit
	opts.RetryBackoff = positiveOr(opts.RetryBackoff, DefaultRetryBackoff)
	opts.MaxRetryBackoff = positiveOr(opts.MaxRetryBackoff, DefaultMaxRetryBackoff)
	opts.ShardRefresh = positiveOr(opts.ShardRefresh, DefaultShardRefresh)
	return &StreamPump{
		client:    client,
		streamARN: streamARN,
		handler:   handler,
		opts:      opts,
		log:       pumpLogger(opts.Logger, "pump", "stream", "stream", streamARN),
		shards:    map[string]*shardState{},
	}
}

// Prime lists the stream's shards and, with StartAtLatest, positions their
// iterators at the newest record, so that every record written after Prime
// returns is delivered once Run runs. Calling it is optional (Run primes
// itself); it must not be called concurrently with Run.
func (p *StreamPump) Prime(ctx context.Context) error {
	if err := p.refreshShards(ctx); err != nil {
		return err
	}
	for _, s := range p.shards {
		if s.latest && s.iterator == "" && !s.closed {
			if err := p.acquireIterator(ctx, s); err != nil {
				return fmt.Errorf("prime shard %s: %w", s.id, err)
			}
		}
	}
	return nil
}

// Run polls the stream every Interval until ctx is done, then returns nil
// once the handler calls in progress have returned. Errors of single polls
// are logged and retried; Run itself fails only when ctx is not done and the
// stream cannot be described at all on the first poll.
func (p *StreamPump) Run(ctx context.Context) error {
	if !p.started {
		if err := p.refreshShards(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
	ticker := time.NewTicker(p.opts.Interval)
	defer ticker.Stop()
	for {
		p.poll(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// poll runs one round: refresh the shard list when due, then read and
// handle records of every shard that may run, concurrently across shards.
func (p *StreamPump) poll(ctx context.Context) {
	refresh := time.Since(p.lastRefresh) >= p.opts.ShardRefresh
	for _, s := range p.shards {
		if s.requested {
			refresh = true
			s.requested = false
		}
	}
	if refresh {
		if err := p.refreshShards(ctx); err != nil && ctx.Err() == nil {
			p.log.Error("describe stream", "err", err)
		}
	}
	// Choose the shards before starting any: a parent's pollShard sets
	// its done flag, which a child's check would otherwise read at once.
	var ready []*shardState
	for _, s := range p.shards {
		if s.done {
			continue
		}
		if parent, ok := p.shards[s.parent]; ok && !parent.done {
			continue // a child waits until its parent is drained
		}
		ready = append(ready, s)
	}
	var wg sync.WaitGroup
	for _, s := range ready {
		s.active = false
		wg.Go(func() { p.pollShard(ctx, s) })
	}
	wg.Wait()
	idle := true
	for _, s := range p.shards {
		if s.active || len(s.pending) > 0 {
			idle = false
		}
	}
	p.idle.Store(idle)
	p.rounds.Add(1)
}

// refreshShards reads the stream's shard list and starts tracking new
// shards. Shards the stream no longer lists are forgotten once done.
func (p *StreamPump) refreshShards(ctx context.Context) error {
	listed := map[string]bool{}
	in := &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(p.streamARN)}
	for {
		out, err := p.client.DescribeStream(ctx, in)
		if err != nil {
			return fmt.Errorf("describe stream %s: %w", p.streamARN, err)
		}
		if out.StreamDescription == nil {
			return fmt.Errorf("describe stream %s: no description", p.streamARN)
		}
		for _, sh := range out.StreamDescription.Shards {
			id := aws.ToString(sh.ShardId)
			listed[id] = true
			if _, ok := p.shards[id]; ok {
				continue
			}
			s := &shardState{
				id:     id,
				parent: aws.ToString(sh.ParentShardId),
				latest: p.opts.StartAtLatest && !p.started,
			}
			if p.opts.Checkpoints != nil {
				if seq, ok := p.opts.Checkpoints.Load(p.streamARN, id); ok {
					s.lastSeq, s.saved, s.latest = seq, seq, false
				}
			}
			p.shards[id] = s
		}
		last := out.StreamDescription.LastEvaluatedShardId
		if last == nil {
			break
		}
		in.ExclusiveStartShardId = last
	}
	for id, s := range p.shards {
		if !listed[id] && s.done {
			delete(p.shards, id)
		}
	}
	p.started = true
	p.lastRefresh = time.Now()
	return nil
}

// pollShard reads and handles the shard's records until it has nothing
// more to deliver now, a batch fails, or ctx ends.
func (p *StreamPump) pollShard(ctx context.Context, s *shardState) {
	for ctx.Err() == nil {
		if time.Now().Before(s.retryAt) {
			return
		}
		full := false
		if len(s.pending) == 0 {
			if s.closed {
				s.done = true
				s.requested = true
				return
			}
			n, err := p.read(ctx, s)
			if n > 0 {
				s.active = true
			}
			if err != nil {
				if ctx.Err() == nil {
					p.log.Error("read shard", "shard", s.id, "err", err)
				}
				return
			}
			full = n >= p.opts.BatchSize
			if len(s.pending) == 0 {
				p.checkpoint(s) // everything read was filtered out
				if full || s.closed {
					continue // filtered out a full batch, or drain a closed shard
				}
				return
			}
		}
		if !p.deliver(ctx, s) {
			return
		}
		p.checkpoint(s)
		if !full && !s.closed {
			return // caught up: wait for the next tick
		}
	}
}

// read fetches the next records of the shard into s.pending, keeping the
// ones the filter passes. It returns how many records it read.
func (p *StreamPump) read(ctx context.Context, s *shardState) (int, error) {
	if s.iterator == "" {
		if err := p.acquireIterator(ctx, s); err != nil {
			return 0, err
		}
		if s.iterator == "" {
			return 0, nil // the shard is gone or closed
		}
	}
	out, err := p.client.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{
		ShardIterator: aws.String(s.iterator),
		Limit:         aws.Int32(int32(p.opts.BatchSize)),
	})
	if err != nil {
		var expired *types.ExpiredIteratorException
		var trimmed *types.TrimmedDataAccessException
		switch {
		case errors.As(err, &expired):
			// Iterators live 15 minutes; take a new one after lastSeq.
			p.log.Debug("shard iterator expired", "shard", s.id)
			s.iterator = ""
			return 0, nil
		case errors.As(err, &trimmed):
			// On AWS the records after lastSeq aged out (24 hours): the
			// shard goes on from the oldest kept, which comes after every
			// record read. DynamoDB Local says so of shards seconds old
			// and still holding the records read (a known bug of
			// DynamoDB Local, aws/aws-sdk-java#2923): read from the oldest
			// again, passing over what was read, which on AWS is none.
			// Read again without passing over, a whole shard's outbox
			// reached the router twice.
			p.log.Warn("shard data trimmed: reading it again from its oldest record", "shard", s.id, "after", s.lastSeq)
			s.iterator, s.delivered, s.lastSeq = "", cmp.Or(s.lastSeq, s.delivered), ""
			return 0, nil
		}
		return 0, fmt.Errorf("get records: %w", err)
	}
	s.iterator = aws.ToString(out.NextShardIterator)
	if s.iterator == "" {
		s.closed = true
	}
	for _, r := range out.Records {
		rec, err := lambdaStreamRecord(r, p.streamARN, p.opts.Region)
		if err != nil {
			p.log.Error("skip unconvertible record", "shard", s.id, "err", err)
			continue
		}
		seq := rec.Change.SequenceNumber
		if seq != "" {
			s.lastSeq = seq
		}
		if s.delivered != "" {
			if seq != "" && !seqAfter(seq, s.delivered) {
				continue // read before the shard said it was trimmed
			}
			s.delivered = ""
		}
		if p.opts.Filter == nil || p.opts.Filter(rec) {
			s.pending = append(s.pending, rec)
		}
	}
	return len(out.Records), nil
}

// acquireIterator gets the shard's next iterator: after the last record
// read, else at LATEST or TRIM_HORIZON. A shard without one is closed.
func (p *StreamPump) acquireIterator(ctx context.Context, s *shardState) error {
	in := &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(p.streamARN), ShardId: aws.String(s.id)}
	switch {
	case s.lastSeq != "":
		in.ShardIteratorType = types.ShardIteratorTypeAfterSequenceNumber
		in.SequenceNumber = aws.String(s.lastSeq)
	case s.latest:
		in.ShardIteratorType = types.ShardIteratorTypeLatest
	default:
		in.ShardIteratorType = types.ShardIteratorTypeTrimHorizon
	}
	out, err := p.client.GetShardIterator(ctx, in)
	if err != nil {
		var gone *types.ResourceNotFoundException
		if errors.As(err, &gone) {
			s.closed = true // trimmed away: nothing left to read
			return nil
		}
		return fmt.Errorf("get %s iterator: %w", in.ShardIteratorType, err)
	}
	s.iterator = aws.ToString(out.ShardIterator)
	s.latest = false
	if s.iterator == "" {
		s.closed = true
	}
	return nil
}

// checkpoint saves the shard's position once nothing read is pending. A
// failed save is logged: the pump goes on, and a restart would deliver some
// records again (handlers are idempotent).
func (p *StreamPump) checkpoint(s *shardState) {
	if p.opts.Checkpoints == nil || len(s.pending) > 0 || s.lastSeq == "" || s.lastSeq == s.saved {
		return
	}
	if err := p.opts.Checkpoints.Save(p.streamARN, s.id, s.lastSeq); err != nil {
		p.log.Error("save stream checkpoint", "shard", s.id, "err", err)
		return
	}
	s.saved = s.lastSeq
}

// deliver calls the handler with the shard's pending records and applies
// the response. It reports whether every record was handled.
func (p *StreamPump) deliver(ctx context.Context, s *shardState) bool {
	batch := s.pending
	resp, err := callHandler(ctx, p.handler, events.DynamoDBEvent{Records: batch})
	if err == nil && len(resp.BatchItemFailures) == 0 {
		s.pending = nil
		s.failures = 0
		return true
	}
	if ctx.Err() != nil {
		return false // shutting down: the records stay pending
	}
	from := 0 // retry the whole batch
	if err == nil {
		from = firstFailed(batch, resp.BatchItemFailures)
		err = fmt.Errorf("handler reported %d failed records; retrying from record %d of %d", len(resp.BatchItemFailures), from+1, len(batch))
	}
	s.pending = batch[from:]
	s.failures++
	if p.opts.MaxRetryAttempts > 0 && s.failures > p.opts.MaxRetryAttempts {
		p.log.Error("skip records after retries", "shard", s.id, "records", len(s.pending),
			"first", s.pending[0].Change.SequenceNumber, "attempts", s.failures, "err", err)
		s.pending = nil
		s.failures = 0
		return true
	}
	wait := min(p.opts.RetryBackoff<<min(s.failures-1, 30), p.opts.MaxRetryBackoff)
	s.retryAt = time.Now().Add(wait)
	p.log.Warn("stream batch failed", "shard", s.id, "records", len(s.pending), "attempt", s.failures, "retryIn", wait, "err", err)
	return false
}

// firstFailed returns the index of the earliest batch record named by a
// failure, or 0 (the whole batch) when a failure names no record of the
// batch, as Lambda treats an invalid item identifier.
func firstFailed(batch []events.DynamoDBEventRecord, failures []events.DynamoDBBatchItemFailure) int {
	index := make(map[string]int, len(batch))
	for i, r := range batch {
		index[r.Change.SequenceNumber] = i
	}
	first := len(batch)
	for _, f := range failures {
		i, ok := index[f.ItemIdentifier]
		if !ok || f.ItemIdentifier == "" {
			return 0
		}
		first = min(first, i)
	}
	return first
}

// seqAfter reports whether stream sequence number a comes after b: both
// are decimal numbers, up to 40 digits, too long for an integer type.
func seqAfter(a, b string) bool {
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if len(a) != len(b) {
		return len(a) > len(b)
	}
	return a > b
}
