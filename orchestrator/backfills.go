package orchestrator

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/maestro-serverless/maestro/caller"
	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/pricing"
	"github.com/maestro-serverless/maestro/store"
	"github.com/maestro-serverless/maestro/triggers"
)

// A backfill starts, late, the instances a workflow's time triggers would
// have started over an interval: one per firing of the active version's
// triggers in [from, to), each with the request id of the real firing
// (triggers.FiringRequestID), so a firing both backfilled and scheduled
// starts one instance, and with the time params the real firing would
// give it (its initiator is BACKFILL with the scheduled time and the
// trigger's time zone, and names the backfill).
//
// Its state is one store item (store.Backfills), changed by conditional
// puts: a cursor (how many firings were admitted, in time order) and the
// firings in flight (admitted, not yet ended: at most its concurrency).
// The pump (Backfills.pump) settles the in-flight firings whose instances
// ended, admits the next ones while fewer than concurrency are in flight,
// and only then starts their instances, so a crash between the admission
// and the start loses nothing: the next pump finds the admitted firing
// without an instance and starts it (the request id makes a second start
// find the first). The pump runs when the backfill is created or changed,
// when one of its instances ends (the end's commit carries a backfill
// message), and on a tick every backfillTick while the backfill is not
// done (its creation's outbox starts the tick; each tick re-queues itself).
//
// Backfill instances take no run-strategy slot and never enter the
// workflow's run queue: the backfill's concurrency is what bounds them, so
// a live run (manual, time, signal) never waits behind them. A low
// priority backfill admits nothing while the workflow has a live run in
// progress or queued; a normal one admits regardless.

// Backfill limits.
const (
	// MaxBackfillFirings is the most firings one backfill may cover.
	MaxBackfillFirings = 10000
	// MaxBackfillConcurrency is the highest concurrency of a backfill.
	MaxBackfillConcurrency = 100
	// backfillTick is how often a backfill that is not done is pumped
	// without being woken (the backstop of a lost wake).
	backfillTick = time.Minute
	// durationSample is how many recent succeeded runs a dry run's
	// duration estimate reads.
	durationSample = 50
)

// Backfill priorities.
const (
	BackfillPriorityNormal = "normal"
	BackfillPriorityLow    = "low"
)

// Backfill statuses.
const (
	BackfillRunning   = "RUNNING"
	BackfillPaused    = "PAUSED"
	BackfillCancelled = "CANCELLED"
	// BackfillCompleted is a backfill whose every firing's instance ended
	// (in any status).
	BackfillCompleted = "COMPLETED"
)

// BackfillRequest creates a backfill (or, with DryRun, estimates one).
type BackfillRequest struct {
	// From and To bound the firings, [From, To), in RFC 3339.
	From string `json:"from"`
	To   string `json:"to"`
	// Concurrency is how many of its instances may run at once,
	// 1..MaxBackfillConcurrency.
	Concurrency int `json:"concurrency"`
	// Priority is "normal" (default) or "low".
	Priority string `json:"priority,omitempty"`
	// DryRun estimates without creating anything.
	DryRun bool `json:"dry_run,omitempty"`
}

// BackfillView is a backfill and its progress.
type BackfillView struct {
	WorkflowID        string `json:"workflow_id"`
	BackfillID        string `json:"backfill_id"`
	WorkflowVersionID int64  `json:"workflow_version_id"`
	From              string `json:"from"`
	To                string `json:"to"`
	Concurrency       int    `json:"concurrency"`
	Priority          string `json:"priority"`
	Status            string `json:"status"`
	// Total is how many firings the backfill covers; Admitted how many it
	// has started (or found started); Running how many of those have not
	// ended; Pending how many are not admitted yet.
	Total    int `json:"total"`
	Admitted int `json:"admitted"`
	Running  int `json:"running"`
	Pending  int `json:"pending"`
	// Counts are the ended instances by status.
	Counts map[string]int `json:"counts"`
	// NextFiring is the scheduled time of the next firing to admit.
	NextFiring string `json:"next_firing,omitempty"`
	// ETASeconds is the expected time to finish: the mean duration of its
	// ended instances times the waves left at its concurrency; absent
	// until one ended or once it is done.
	ETASeconds *int64 `json:"eta_seconds,omitempty"`
	CreateTime int64  `json:"create_time"`
	EndTime    int64  `json:"end_time,omitempty"`
	Principal  string `json:"principal,omitempty"`
}

// BackfillList is a workflow's newest backfills.
type BackfillList struct {
	Backfills []BackfillView `json:"backfills"`
}

// BackfillEstimate is a dry run's answer: what the backfill would start
// and how long it would take.
type BackfillEstimate struct {
	WorkflowID        string `json:"workflow_id"`
	WorkflowVersionID int64  `json:"workflow_version_id"`
	DryRun            bool   `json:"dry_run"`
	// Instances is how many instances it would start (its firings),
	// Steps how many top-level steps they hold (a foreach's iterations
	// and a subworkflow's steps are not counted), Waves how many rounds
	// of Concurrency instances they make.
	Instances   int    `json:"instances"`
	Steps       int    `json:"steps"`
	Concurrency int    `json:"concurrency"`
	Waves       int    `json:"waves"`
	FirstFiring string `json:"first_firing,omitempty"`
	LastFiring  string `json:"last_firing,omitempty"`
	// Duration is the expected duration; null, with DurationReason, when
	// the workflow has no succeeded run to estimate from.
	Duration       *DurationEstimate `json:"duration"`
	DurationReason string            `json:"duration_reason,omitempty"`
	// Cost is the expected cost from the recent succeeded runs' recorded
	// costs, or, when there is none, the step-type model's (Cost.Model).
	Cost *CostEstimate `json:"cost"`
}

// CostEstimate is a backfill's expected cost: the p50 and p90 of what the
// workflow's recent succeeded runs recorded, times the instances. It
// covers what runs record (Covers: their steps' compute), not the
// orchestration's own requests.
type CostEstimate struct {
	Sample   int      `json:"sample"`
	RunP50   float64  `json:"run_p50_usd"`
	RunP90   float64  `json:"run_p90_usd"`
	P50      float64  `json:"p50_usd"`
	P90      float64  `json:"p90_usd"`
	Covers   []string `json:"covers"`
	PricesOf string   `json:"prices_of"`
	// Model, set when the workflow had no run to estimate from, says the
	// cost is the step-type model's (pricing.StepModel): its orchestration
	// only; Sample is then 0.
	Model string `json:"model,omitempty"`
}

// DurationEstimate is a backfill's expected duration from the workflow's
// recent succeeded runs: their p50 and p90 duration times the waves.
type DurationEstimate struct {
	// Sample is how many recent runs it was taken from.
	Sample       int   `json:"sample"`
	RunP50Millis int64 `json:"run_p50_ms"`
	RunP90Millis int64 `json:"run_p90_ms"`
	P50Millis    int64 `json:"p50_ms"`
	P90Millis    int64 `json:"p90_ms"`
}

// backfillDoc is a backfill's stored document.
type backfillDoc struct {
	From        time.Time `json:"from"`
	To          time.Time `json:"to"`
	Version     int64     `json:"version"`
	Concurrency int       `json:"concurrency"`
	Priority    string    `json:"priority"`
	Status      string    `json:"status"`
	Total       int       `json:"total"`
	// Cursor is how many firings (in time order) were admitted.
	Cursor int `json:"cursor"`
	// Inflight are the admitted firings whose instances have not ended.
	Inflight []backfillFiring `json:"inflight,omitempty"`
	// Counts are the ended instances by status.
	Counts map[string]int `json:"counts,omitempty"`
	// DurationMillis sums the durations of the Timed ended instances.
	DurationMillis int64  `json:"duration_ms,omitempty"`
	Timed          int    `json:"timed,omitempty"`
	EndTime        int64  `json:"end_time,omitempty"`
	Principal      string `json:"principal,omitempty"`
}

// backfillFiring is an admitted firing: its trigger and scheduled time.
type backfillFiring struct {
	Trigger int   `json:"t"`
	At      int64 `json:"at"`
}

func (d *backfillDoc) done() bool {
	return (d.Status == BackfillCompleted || d.Status == BackfillCancelled) && len(d.Inflight) == 0
}

// firing returns f as a triggers.Firing of workflow wf.
func (f backfillFiring) firing(wf string) triggers.Firing {
	return triggers.Firing{WorkflowID: wf, TriggerIndex: f.Trigger, ScheduledTime: time.UnixMilli(f.At).UTC()}
}

// backfillPlan is a checked backfill request: the version and its firings.
type backfillPlan struct {
	version     int64
	def         *model.Definition
	from, to    time.Time
	concurrency int
	priority    string
	firings     []triggers.Firing
}

// planBackfill checks a backfill request against the workflow's active
// version and lists its firings.
func (o *Backfills) planBackfill(ctx context.Context, wf string, req BackfillRequest) (*backfillPlan, error) {
	head, err := o.head(ctx, wf)
	if err != nil {
		return nil, err
	}
	var problems []string
	from, err := time.Parse(time.RFC3339, req.From)
	if err != nil {
		problems = append(problems, fmt.Sprintf("from: %q is not an RFC 3339 time", req.From))
	}
	to, err := time.Parse(time.RFC3339, req.To)
	if err != nil {
		problems = append(problems, fmt.Sprintf("to: %q is not an RFC 3339 time", req.To))
	}
	if len(problems) == 0 && !to.After(from) {
		problems = append(problems, "to: must be after from")
	}
	if req.Concurrency < 1 || req.Concurrency > MaxBackfillConcurrency {
		problems = append(problems, fmt.Sprintf("concurrency: %d is out of range, 1 to %d", req.Concurrency, MaxBackfillConcurrency))
	}
	priority := req.Priority
	if priority == "" {
		priority = BackfillPriorityNormal
	}
	if priority != BackfillPriorityNormal && priority != BackfillPriorityLow {
		problems = append(problems, fmt.Sprintf("priority: %q is not low or normal", req.Priority))
	}
	if len(problems) > 0 {
		return nil, Invalid("invalid backfill", problems...)
	}
	if head.Active == 0 {
		return nil, Conflict("workflow %s has no active version to backfill", wf)
	}
	_, def, err := o.graph(ctx, wf, head.Active)
	if err != nil {
		return nil, Internal(err)
	}
	if len(def.Workflow.TimeTriggers) == 0 {
		return nil, Invalid("invalid backfill", fmt.Sprintf("workflow %s version %d has no time triggers to backfill", wf, head.Active))
	}
	fs, err := triggers.Firings(wf, def.Workflow.TimeTriggers, from, to, MaxBackfillFirings)
	switch {
	case errors.Is(err, triggers.ErrTooManyFirings):
		return nil, Invalid("invalid backfill", fmt.Sprintf("from, to: the interval holds more than %d firings, the limit of one backfill", MaxBackfillFirings))
	case err != nil:
		return nil, Invalid("invalid backfill", fmt.Sprintf("time_triggers: %v", err))
	}
	return &backfillPlan{version: head.Active, def: def, from: from, to: to, concurrency: req.Concurrency, priority: priority, firings: fs}, nil
}

// EstimateBackfill answers a dry run: the instances and steps the backfill
// would start and its expected duration; it writes nothing.
func (o *Backfills) EstimateBackfill(ctx context.Context, wf string, req BackfillRequest) (*BackfillEstimate, error) {
	p, err := o.planBackfill(ctx, wf, req)
	if err != nil {
		return nil, err
	}
	n := len(p.firings)
	waves := (n + p.concurrency - 1) / p.concurrency
	est := &BackfillEstimate{
		WorkflowID: wf, WorkflowVersionID: p.version, DryRun: true, Instances: n, Steps: n * len(p.def.Workflow.Steps),
		Concurrency: p.concurrency, Waves: waves,
	}
	if n > 0 {
		est.FirstFiring = p.firings[0].ScheduledTime.Format(time.RFC3339)
		est.LastFiring = p.firings[n-1].ScheduledTime.Format(time.RFC3339)
	}
	recent, _, err := o.store.Instances.ListInstances(ctx, wf, string(model.WorkflowSucceeded), "", durationSample)
	if err != nil {
		return nil, Internal(err)
	}
	if est.Duration = durationEstimate(recent, int64(waves)); est.Duration == nil {
		est.DurationReason = "the workflow has no succeeded run to estimate from"
	}
	if est.Cost, err = o.costEstimate(ctx, recent, int64(n)); err != nil {
		return nil, err
	}
	if est.Cost == nil {
		est.Cost = modelledCost(p.def.Workflow.Steps, int64(n))
	}
	return est, nil
}

// modelledCost is the step-type model's cost of n runs of steps (a loop or
// subworkflow counted as one step, its body not known): what runs record
// for their orchestration, without their steps' compute.
func modelledCost(steps []model.Step, n int64) *CostEstimate {
	run := pricing.RunModel()
	for _, s := range steps {
		// A plain step of a type a worker runs has work; NoOp and Join
		// steps, and loops and subworkflows, are decided in commits.
		run = run.Add(pricing.StepModel(s.Kind == model.KindStep && s.Type != model.StepNoOp && s.Type != model.StepJoin))
	}
	usd := pricing.Price(run).TotalUSD
	return &CostEstimate{RunP50: usd, RunP90: usd, P50: usd * float64(n), P90: usd * float64(n),
		Covers: []string{pricing.KindOrchestration}, PricesOf: pricing.Date,
		Model: "the steps' types (maestro bench of " + pricing.ModelDate + "): the orchestration's requests, not the steps' compute"}
}

// durationEstimate is the expected duration of waves of runs like recent
// (succeeded instance records, newest first): their p50 and p90 duration
// times the waves; nil when none has one.
func durationEstimate(recent []*store.InstanceRecord, waves int64) *DurationEstimate {
	var durations []int64
	for _, r := range recent {
		if r.StartTime > 0 && r.EndTime >= r.StartTime {
			durations = append(durations, r.EndTime-r.StartTime)
		}
	}
	if len(durations) == 0 {
		return nil
	}
	slices.Sort(durations)
	p50, p90 := percentile(durations, 50), percentile(durations, 90)
	return &DurationEstimate{Sample: len(durations), RunP50Millis: p50, RunP90Millis: p90,
		P50Millis: p50 * waves, P90Millis: p90 * waves}
}

// costEstimate is the expected cost of n instances from what the recent
// runs recorded (their latest runs' costs, read in one batch); nil when
// there are none.
func (o *core) costEstimate(ctx context.Context, recent []*store.InstanceRecord, n int64) (*CostEstimate, error) {
	if len(recent) == 0 {
		return nil, nil
	}
	keys := make([]store.RunKey, len(recent))
	for i, r := range recent {
		keys[i] = store.RunKey{WorkflowID: r.WorkflowID, InstanceID: r.InstanceID, RunID: r.RunID}
	}
	runs, err := o.store.Runs.GetRuns(ctx, keys)
	if err != nil {
		return nil, Internal(err)
	}
	var costs []float64
	for _, k := range keys {
		rec := runs[k]
		if rec == nil {
			continue
		}
		st, err := decodeState(rec)
		if err != nil {
			return nil, Internal(err)
		}
		costs = append(costs, pricing.Price(runUsage(st, rec.Ops)).TotalUSD)
	}
	if len(costs) == 0 {
		return nil, nil
	}
	slices.Sort(costs)
	p50, p90 := percentile(costs, 50), percentile(costs, 90)
	return &CostEstimate{Sample: len(costs), RunP50: p50, RunP90: p90, P50: p50 * float64(n), P90: p90 * float64(n),
		Covers: pricing.Recorded(), PricesOf: pricing.Date}, nil
}

// percentile is the nearest-rank p-th percentile of sorted (not empty).
func percentile[T cmp.Ordered](sorted []T, p int) T {
	i := (p*len(sorted)+99)/100 - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// CreateBackfill creates a backfill of the workflow's active version and
// admits its first firings.
func (o *Backfills) CreateBackfill(ctx context.Context, wf string, req BackfillRequest) (*BackfillView, error) {
	if o.store.Backfills == nil {
		return nil, Internal(errors.New("backfills: no backfill store is configured"))
	}
	p, err := o.planBackfill(ctx, wf, req)
	if err != nil {
		return nil, err
	}
	if len(p.firings) == 0 {
		return nil, Invalid("invalid backfill", "from, to: no time trigger fires in the interval")
	}
	now := o.now()
	id := backfillID(now, o.newUUID())
	doc := backfillDoc{
		From: p.from.UTC(), To: p.to.UTC(), Version: p.version, Concurrency: p.concurrency, Priority: p.priority,
		Status: BackfillRunning, Total: len(p.firings), Principal: caller.From(ctx),
	}
	rec := store.Backfill{WorkflowID: wf, ID: id, Body: mustJSON(doc), CreateTime: now.UnixMilli()}
	tick := store.Message{Queue: store.QueueWork, Body: EncodeWork(BackfillWork{WorkflowID: wf, BackfillID: id, Tick: true})}
	if err := o.store.Backfills.CreateBackfill(ctx, rec, []store.Message{tick}); err != nil {
		return nil, Internal(err)
	}
	if _, err := o.pump(ctx, wf, id, false); err != nil {
		o.log.WarnContext(ctx, "backfill's first admission failed; its tick will retry", "workflow_id", wf, "backfill_id", id, "error", err)
	}
	return o.GetBackfill(ctx, wf, id)
}

// backfillID is a new backfill's id: "bf-", the creation time (unix ms, so
// ids sort by creation) and 8 characters of a random uuid.
func backfillID(now time.Time, uuid string) string {
	tail := strings.ReplaceAll(uuid, "-", "")
	if len(tail) > 8 {
		tail = tail[:8]
	}
	return fmt.Sprintf("bf-%013d-%s", now.UnixMilli(), tail)
}

// load reads a backfill and its document.
func (o *Backfills) load(ctx context.Context, wf, id string) (*store.Backfill, *backfillDoc, error) {
	if o.store.Backfills == nil {
		return nil, nil, Internal(errors.New("backfills: no backfill store is configured"))
	}
	rec, err := o.store.Backfills.GetBackfill(ctx, wf, id)
	if err != nil {
		return nil, nil, err
	}
	var doc backfillDoc
	if err := json.Unmarshal(rec.Body, &doc); err != nil {
		return nil, nil, fmt.Errorf("backfill %s/%s: decode: %w", wf, id, err)
	}
	return rec, &doc, nil
}

// GetBackfill returns a backfill and its progress.
func (o *Backfills) GetBackfill(ctx context.Context, wf, id string) (*BackfillView, error) {
	rec, doc, err := o.load(ctx, wf, id)
	if err != nil {
		return nil, notFoundOr(err, "backfill %s of workflow %s not found", id, wf)
	}
	return o.view(ctx, rec, doc)
}

// ListBackfills returns a workflow's newest backfills (at most
// store.MaxBackfillsListed), newest first.
func (o *Backfills) ListBackfills(ctx context.Context, wf string) (*BackfillList, error) {
	if _, err := o.head(ctx, wf); err != nil {
		return nil, err
	}
	if o.store.Backfills == nil {
		return nil, Internal(errors.New("backfills: no backfill store is configured"))
	}
	recs, err := o.store.Backfills.ListBackfills(ctx, wf)
	if err != nil {
		return nil, Internal(err)
	}
	out := &BackfillList{Backfills: make([]BackfillView, 0, len(recs))}
	for _, rec := range recs {
		var doc backfillDoc
		if err := json.Unmarshal(rec.Body, &doc); err != nil {
			return nil, Internal(fmt.Errorf("backfill %s/%s: decode: %w", wf, rec.ID, err))
		}
		v, err := o.view(ctx, rec, &doc)
		if err != nil {
			return nil, err
		}
		out.Backfills = append(out.Backfills, *v)
	}
	return out, nil
}

// view is the API's view of a backfill.
func (o *Backfills) view(ctx context.Context, rec *store.Backfill, doc *backfillDoc) (*BackfillView, error) {
	v := &BackfillView{
		WorkflowID: rec.WorkflowID, BackfillID: rec.ID, WorkflowVersionID: doc.Version,
		From: doc.From.Format(time.RFC3339), To: doc.To.Format(time.RFC3339), Concurrency: doc.Concurrency,
		Priority: doc.Priority, Status: doc.Status, Total: doc.Total, Admitted: doc.Cursor, Running: len(doc.Inflight),
		Pending: doc.Total - doc.Cursor, Counts: map[string]int{}, CreateTime: rec.CreateTime, EndTime: doc.EndTime,
		Principal: doc.Principal,
	}
	for k, n := range doc.Counts {
		v.Counts[k] = n
	}
	if doc.Cursor < doc.Total && doc.Status != BackfillCancelled {
		fs, err := o.firings(ctx, rec.WorkflowID, doc)
		if err != nil {
			return nil, Internal(err)
		}
		v.NextFiring = fs[doc.Cursor].ScheduledTime.Format(time.RFC3339)
	}
	if doc.Timed > 0 && !doc.done() && doc.Status != BackfillCancelled {
		left := doc.Total - doc.Cursor + len(doc.Inflight)
		waves := int64((left + doc.Concurrency - 1) / doc.Concurrency)
		eta := doc.DurationMillis / int64(doc.Timed) * waves / 1000
		v.ETASeconds = &eta
	}
	return v, nil
}

// firings lists a backfill's firings (of its version's time triggers).
func (o *Backfills) firings(ctx context.Context, wf string, doc *backfillDoc) ([]triggers.Firing, error) {
	_, def, err := o.graph(ctx, wf, doc.Version)
	if err != nil {
		return nil, err
	}
	fs, err := triggers.Firings(wf, def.Workflow.TimeTriggers, doc.From, doc.To, MaxBackfillFirings)
	if err != nil {
		return nil, err
	}
	if len(fs) != doc.Total {
		return nil, fmt.Errorf("backfill of %s: version %d has %d firings in its interval, the backfill %d", wf, doc.Version, len(fs), doc.Total)
	}
	return fs, nil
}

// ActOnBackfill pauses, resumes or cancels a backfill and returns it. A
// paused backfill admits no firing (its running instances go on); a
// resumed one admits again; a cancelled one admits no more firings and
// stops the running instances it started (an instance the real firing
// started first goes on).
func (o *Backfills) ActOnBackfill(ctx context.Context, wf, id, action string) (*BackfillView, error) {
	var next string
	switch action {
	case "pause":
		next = BackfillPaused
	case "resume":
		next = BackfillRunning
	case "cancel":
		next = BackfillCancelled
	default:
		return nil, Invalid("bad action", fmt.Sprintf("action: %q is not a backfill action (pause, resume, cancel)", action))
	}
	err := o.update(ctx, wf, id, func(doc *backfillDoc) error {
		switch {
		case doc.Status == BackfillCompleted || doc.Status == BackfillCancelled:
			return Conflict("backfill %s is %s", id, doc.Status)
		case next == BackfillCancelled && doc.Status != BackfillCancelled:
			doc.Status = next
			if len(doc.Inflight) == 0 {
				doc.EndTime = o.now().UnixMilli()
			}
		default:
			doc.Status = next
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if _, err := o.pump(ctx, wf, id, false); err != nil {
		o.log.WarnContext(ctx, "backfill pump after an action failed; its tick will retry", "workflow_id", wf, "backfill_id", id, "error", err)
	}
	return o.GetBackfill(ctx, wf, id)
}

// SetBackfillPriority changes a backfill's priority ("low" or "normal").
func (o *Backfills) SetBackfillPriority(ctx context.Context, wf, id, priority string) (*BackfillView, error) {
	if priority != BackfillPriorityNormal && priority != BackfillPriorityLow {
		return nil, Invalid("invalid backfill update", fmt.Sprintf("priority: %q is not low or normal", priority))
	}
	err := o.update(ctx, wf, id, func(doc *backfillDoc) error {
		if doc.done() {
			return Conflict("backfill %s is %s", id, doc.Status)
		}
		doc.Priority = priority
		return nil
	})
	if err != nil {
		return nil, err
	}
	if _, err := o.pump(ctx, wf, id, false); err != nil {
		o.log.WarnContext(ctx, "backfill pump after a priority change failed; its tick will retry", "workflow_id", wf, "backfill_id", id, "error", err)
	}
	return o.GetBackfill(ctx, wf, id)
}

// update applies change to a backfill's document and writes it,
// conditioned on the version read, retrying on conflicts.
func (o *Backfills) update(ctx context.Context, wf, id string, change func(*backfillDoc) error) error {
	for range o.retries {
		rec, doc, err := o.load(ctx, wf, id)
		if err != nil {
			return notFoundOr(err, "backfill %s of workflow %s not found", id, wf)
		}
		if err := change(doc); err != nil {
			return err
		}
		rec.Body = mustJSON(doc)
		err = o.store.Backfills.PutBackfill(ctx, *rec)
		if errors.Is(err, store.ErrConflict) {
			continue
		}
		if err != nil {
			return Internal(err)
		}
		return nil
	}
	return Conflict("backfill %s changed too often while it was being updated; try again", id)
}

// pump settles a backfill's in-flight firings whose instances ended,
// admits the next firings while fewer than its concurrency are in flight
// (and, at low priority, while the workflow has no live run), and starts
// the instances of the admitted firings that have none. A tick (tick)
// returns when to tick again: backfillTick, or 0 once the backfill is
// done. Every step is idempotent.
func (o *Backfills) pump(ctx context.Context, wf, id string, tick bool) (time.Duration, error) {
	if o.store.Backfills == nil {
		return 0, errors.New("backfills: no backfill store is configured")
	}
	for round, conflicts := 0, 0; ; round++ {
		rec, doc, err := o.load(ctx, wf, id)
		if errors.Is(err, store.ErrNotFound) {
			o.log.InfoContext(ctx, "pump of a backfill that is gone ignored", "workflow_id", wf, "backfill_id", id)
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
		if doc.done() {
			return 0, nil
		}
		fs, err := o.firings(ctx, wf, doc)
		if err != nil {
			return 0, err
		}
		changed, toStart, err := o.advance(ctx, wf, id, doc, fs)
		if err != nil {
			return 0, err
		}
		if changed {
			rec.Body = mustJSON(doc)
			err := o.store.Backfills.PutBackfill(ctx, *rec)
			if errors.Is(err, store.ErrConflict) {
				if conflicts++; conflicts >= o.retries {
					return 0, fmt.Errorf("backfill %s/%s: %w", wf, id, err)
				}
				continue
			}
			if err != nil {
				return 0, err
			}
		}
		again := false
		var refused []backfillFiring
		for _, f := range toStart {
			resp, err := o.startFiring(ctx, id, doc, f.firing(wf))
			if err != nil {
				return 0, err
			}
			if resp == nil {
				refused = append(refused, f)
				continue
			}
			// An instance that ended already (a fast run, or the real
			// firing's) is settled by another round at once.
			again = again || model.WorkflowStatus(resp.Status).IsTerminal()
		}
		if len(refused) > 0 {
			if err := o.settleRefused(ctx, wf, id, refused); err != nil {
				return 0, err
			}
			again = true
		}
		if !again || round >= 2*MaxBackfillConcurrency {
			if tick && !doc.done() {
				return backfillTick, nil
			}
			return 0, nil
		}
	}
}

// BackfillStartRefused counts, in a backfill's Counts, the firings whose
// start the workflow refused for good (as it would the real firing's).
const BackfillStartRefused = "START_REFUSED"

// settleRefused takes firings whose start was refused for good out of a
// backfill's in-flight firings and counts them.
func (o *Backfills) settleRefused(ctx context.Context, wf, id string, refused []backfillFiring) error {
	return o.update(ctx, wf, id, func(doc *backfillDoc) error {
		doc.Inflight = slices.DeleteFunc(doc.Inflight, func(f backfillFiring) bool {
			if !slices.Contains(refused, f) {
				return false
			}
			if doc.Counts == nil {
				doc.Counts = map[string]int{}
			}
			doc.Counts[BackfillStartRefused]++
			return true
		})
		return nil
	})
}

// advance changes doc as the pump does (see pump) and returns whether it
// changed and the admitted firings whose instances are to be started
// (started again: a start with the firing's request id finds the first).
func (o *Backfills) advance(ctx context.Context, wf, id string, doc *backfillDoc, fs []triggers.Firing) (bool, []backfillFiring, error) {
	changed := false
	var toStart, kept []backfillFiring
	for _, f := range doc.Inflight {
		r, err := o.store.Instances.InstanceForRequest(ctx, wf, f.firing(wf).RequestID())
		switch {
		case errors.Is(err, store.ErrNotFound):
			if doc.Status == BackfillCancelled {
				changed = true // never started: a cancelled backfill drops it
				continue
			}
			kept, toStart = append(kept, f), append(toStart, f)
			continue
		case err != nil:
			return false, nil, err
		}
		if !model.WorkflowStatus(r.Status).IsTerminal() {
			if doc.Status == BackfillCancelled && startedBy(r, id) {
				stop := store.Event{ID: backfillStopEventID(id), Body: mustJSON(engine.Action{Action: string(model.WorkflowActionStop), Principal: caller.From(ctx)})}
				if err := o.store.Runs.PutEvent(ctx, wf, r.InstanceID, r.RunID, stop); err != nil {
					return false, nil, err
				}
			}
			kept = append(kept, f)
			continue
		}
		changed = true
		if doc.Counts == nil {
			doc.Counts = map[string]int{}
		}
		doc.Counts[r.Status]++
		if r.StartTime > 0 && r.EndTime >= r.StartTime {
			doc.DurationMillis += r.EndTime - r.StartTime
			doc.Timed++
		}
	}
	doc.Inflight = kept
	if doc.Status == BackfillRunning && doc.Cursor < doc.Total && len(doc.Inflight) < doc.Concurrency {
		yield, err := o.yields(ctx, wf, doc)
		if err != nil {
			return false, nil, err
		}
		for !yield && doc.Cursor < doc.Total && len(doc.Inflight) < doc.Concurrency {
			f := fs[doc.Cursor]
			bf := backfillFiring{Trigger: f.TriggerIndex, At: f.ScheduledTime.UnixMilli()}
			doc.Inflight, toStart = append(doc.Inflight, bf), append(toStart, bf)
			doc.Cursor++
			changed = true
		}
	}
	if len(doc.Inflight) == 0 && doc.EndTime == 0 &&
		(doc.Status == BackfillCancelled || (doc.Status == BackfillRunning && doc.Cursor == doc.Total)) {
		if doc.Status == BackfillRunning {
			doc.Status = BackfillCompleted
		}
		doc.EndTime = o.now().UnixMilli()
		changed = true
	}
	return changed, toStart, nil
}

// startedBy reports whether backfill id started instance r (not the real
// firing, nor another backfill: a cancel stops only its own runs).
func startedBy(r *store.InstanceRecord, id string) bool {
	var ini engine.Initiator
	return json.Unmarshal(r.Initiator, &ini) == nil && ini.Backfill == id
}

// yields reports whether a low priority backfill gives way: the workflow
// has a live run holding a run-strategy slot or queued for one.
func (o *Backfills) yields(ctx context.Context, wf string, doc *backfillDoc) (bool, error) {
	if doc.Priority != BackfillPriorityLow {
		return false, nil
	}
	holding, queued, err := o.store.Instances.ActiveRuns(ctx, wf, 0)
	if err != nil {
		return false, err
	}
	return len(holding)+len(queued) > 0, nil
}

// startFiring starts the instance of a backfilled firing of the
// backfill's version: the real firing's request id, and its time params
// (the initiator's scheduled time and the trigger's time zone). A start
// the workflow refuses for good answers nil.
func (o *Backfills) startFiring(ctx context.Context, id string, doc *backfillDoc, f triggers.Firing) (*StartResponse, error) {
	_, def, err := o.graph(ctx, f.WorkflowID, doc.Version)
	if err != nil {
		return nil, err
	}
	tz := "UTC"
	if f.TriggerIndex < len(def.Workflow.TimeTriggers) {
		tz = triggers.Timezone(&def.Workflow.TimeTriggers[f.TriggerIndex])
	}
	ini := engine.Initiator{Type: engine.InitiatorBackfill, Timezone: tz, ScheduledTime: f.ScheduledTime.UnixMilli(), Backfill: id}
	resp, err := o.runs.start(ctx, f.WorkflowID, fmt.Sprint(doc.Version), StartRequest{RequestID: f.RequestID()}, ini, model.Params{}, nil)
	if err != nil {
		var e *Error
		if errors.As(err, &e) && e.Status < 500 {
			// Refused for good (a run param the version rejects, the
			// version deleted): a real firing would start nothing either.
			o.log.ErrorContext(ctx, "backfill start refused", "workflow_id", f.WorkflowID, "backfill_id", id,
				"trigger", f.TriggerIndex, "scheduled_time", f.ScheduledTime, "error", err)
			return nil, nil
		}
		return nil, err
	}
	return resp, nil
}

// backfillEnded is the message a backfill run's end sends its backfill:
// the pump settles it and admits the next firing.
func backfillEnded(before, after *engine.Instance) []store.Message {
	if after.Initiator.Backfill == "" || before.Status.IsTerminal() || !after.Status.IsTerminal() {
		return nil
	}
	return []store.Message{{Queue: store.QueueWork, Direct: true,
		Body: EncodeWork(BackfillWork{WorkflowID: after.WorkflowID, BackfillID: after.Initiator.Backfill})}}
}

// activeBackfill returns the id of one of the workflow's newest backfills
// (store.MaxBackfillsListed) that is not done, or "".
func (o *core) activeBackfill(ctx context.Context, wf string) (string, error) {
	if o.store.Backfills == nil {
		return "", nil
	}
	recs, err := o.store.Backfills.ListBackfills(ctx, wf)
	if err != nil {
		return "", err
	}
	for _, rec := range recs {
		var doc backfillDoc
		if err := json.Unmarshal(rec.Body, &doc); err != nil {
			return "", fmt.Errorf("backfill %s/%s: decode: %w", wf, rec.ID, err)
		}
		if !doc.done() {
			return rec.ID, nil
		}
	}
	return "", nil
}

// CheckBackfillID refuses what cannot be a backfill id (see backfillID):
// "bf-" then at most 60 letters, digits and dashes.
func CheckBackfillID(id string) error {
	rest, ok := strings.CutPrefix(id, "bf-")
	if !ok || rest == "" || len(rest) > 60 {
		return fmt.Errorf("%q is not a backfill id (bf- and up to 60 letters, digits and dashes)", id)
	}
	for _, c := range rest {
		if !(c == '-' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
			return fmt.Errorf("%q is not a backfill id (bf- and up to 60 letters, digits and dashes)", id)
		}
	}
	return nil
}
