package memstore

import (
	"bytes"
	"encoding/json"

	"github.com/maestro-serverless/maestro/store"
	"github.com/maestro-serverless/maestro/store/internal/layout"
)

// The kinds of items, one Go type each, holding what the DynamoDB item's
// attributes hold: strings where it stores strings (so that what reads
// them back converts them as package store does), nil for an absent
// binary attribute.

// Keys are package store's own (store/internal/layout).

// refKey is the key of attempt ref's item.
func refKey(r store.AttemptRef) (pk, sk string) {
	return layout.RunPK(r.WorkflowID, r.InstanceID), layout.AttemptSK(r.RunID, r.StepID, r.Attempt)
}

// clone copies b, keeping nil nil and empty empty.
func clone(b []byte) []byte { return bytes.Clone(b) }

// headItem is WF#<wf>/HEAD. Every head is in the workflow directory.
type headItem struct {
	latest, active, next, createTime, modifyTime, v int64
	// props is the properties body; nil when the item has none.
	props []byte
	// acl is the grant's JSON; nil when the item has none.
	acl []byte
}

// versionItem is WF#<wf>/V#<version>.
type versionItem struct {
	def        []byte
	createTime int64
	principal  string
}

// instanceItem is WF#<wf>/I#<instance>: the summary's attributes.
type instanceItem struct {
	version, run, createTime, startTime, endTime, modifyTime int64
	uuid, status, requestID, initiator                       string
}

func instanceOf(r *store.InstanceRecord) *instanceItem {
	return &instanceItem{version: r.Version, run: r.RunID, createTime: r.CreateTime, startTime: r.StartTime,
		endTime: r.EndTime, modifyTime: r.ModifyTime, uuid: r.UUID, status: r.Status, requestID: r.RequestID,
		initiator: string(r.Initiator)}
}

func (it *instanceItem) record(wf string, inst int64) *store.InstanceRecord {
	return &store.InstanceRecord{WorkflowID: wf, InstanceID: inst, Version: it.version, RunID: it.run, UUID: it.uuid,
		Status: it.status, RequestID: it.requestID, Initiator: []byte(it.initiator), CreateTime: it.createTime,
		StartTime: it.startTime, EndTime: it.endTime, ModifyTime: it.modifyTime}
}

// requestItem is WF#<wf>/REQ#<id>: a start request's instance.
type requestItem struct{ instance int64 }

// slotItem is WF#<wf>/RS: the run-strategy slots.
type slotItem struct {
	running, qv       int64
	hasRunning, hasQV bool
	// holders is a string set (never empty: DynamoDB drops an empty set).
	holders []string
}

// queueItem is WF#<wf>/Q#<instance>.
type queueItem struct{ run int64 }

// purgeItem is WF#<wf>/PURGE.
type purgeItem struct{ round, createTime int64 }

// tombItem is WF#<wf>/TOMB.
type tombItem struct{ latest, next, deleteTime int64 }

// sigSubsItem is WF#<wf>/SIGSUBS: a non-empty string set.
type sigSubsItem struct{ names []string }

// breakpointItem is WF#<wf>/BP#...
type breakpointItem struct{ b store.Breakpoint }

// eventItem is an inbox event, R#<wf>#<inst>/E#<run>#<id>.
type eventItem struct {
	body []byte
	// due (unix ms) is when the sweep index has it due; swept says it is
	// in the index.
	due   int64
	swept bool
	// work says its wake goes through the work queue (WakeAfter), which
	// only its size tells.
	work bool
}

// runItem is R#<wf>#<inst>/RUN#<run>.
type runItem struct {
	v      int64
	status string
	// state is the state the item holds: the whole state, or a paged run's
	// header and overlay.
	state []byte
	// outbox is the outbox's JSON (for the item's size); nil when none.
	outbox []byte
	// sweepAt (unix ms) > 0 puts the run in the sweep index.
	sweepAt int64
	// timeline holds the run's first instance timeline entries as read
	// back (nil: no attribute).
	timeline []store.TimelineItem
	// pages are the sort keys of its page items, in order.
	pages []string
}

// pageItem is R#<wf>#<inst>/RUN#<run>#PG#<page>#<tag>: step entries.
type pageItem struct{ entries []json.RawMessage }

// attemptItem is R#<wf>#<inst>/S#<run>#<step>#<attempt>.
type attemptItem struct {
	status string
	// body is nil when the item has none.
	body []byte
	// tl holds the timeline entries as stored (strings).
	tl []string
	// claim, lease: a worker's claim; outcome (nil: none) a recorded
	// outcome; wait a task token's hash; wn the count of a worker's end's
	// entries; ob the worker end's wake ("end") or "".
	claim, wait       string
	hasClaim, hasWait bool
	lease, wn         int64
	hasLease, hasWN   bool
	outcome           []byte
	ob                string
}

func (a *attemptItem) copy() *attemptItem {
	n := *a
	return &n
}

// attempt returns the store.Attempt the item reads as.
func (a *attemptItem) attempt(step string, n int64) store.Attempt {
	out := store.Attempt{StepID: step, Attempt: n, Status: a.status, Body: clone(a.body)}
	for _, e := range a.tl {
		out.Timeline = append(out.Timeline, []byte(e))
	}
	return out
}

// timelineItem is R#<wf>#<inst>/T#<run>#<seq>.
type timelineItem struct{ body []byte }

// loopParamsItem is R#<wf>#<inst>/X#<run>#<step>#<attempt>.
type loopParamsItem struct{ body []byte }

// sigSeqItem is SIG#<name>/SEQ.
type sigSeqItem struct{ n int64 }

// signalItem is SIG#<name>/I#<seq>.
type signalItem struct {
	name, params, payload, requestID, source string
	seq, createTime                          int64
	// outbox is the delivery's JSON (for the size); due and swept as for
	// events.
	outbox []byte
	due    int64
	swept  bool
}

func (s *signalItem) record() *store.SignalRecord {
	return &store.SignalRecord{Name: s.name, Seq: s.seq, Params: json.RawMessage(s.params), Payload: json.RawMessage(s.payload),
		RequestID: s.requestID, Source: json.RawMessage(s.source), CreateTime: s.createTime}
}

// sigRequestItem is SIG#<name>/R#<id>.
type sigRequestItem struct{ seq int64 }

// subscriptionItem is SIG#<name>/T#<wf>.
type subscriptionItem struct {
	workflow string
	since    int64
}

// waiterItem is SIG#<name>/D#...
type waiterItem struct{ name string }

// lineageItem is SIG#<name>/L#<seq>#<id>.
type lineageItem struct{ body string }

// indexItem is SIGX#<hex param>#<name>/<value>#<seq>; params "" when too
// large to ride in it.
type indexItem struct {
	seq    int64
	params string
}

// jobItem is JOB#<job>/JOB.
type jobItem struct{ hash string }

// taskItem is TASK#<hash>/TASK.
type taskItem struct {
	ref           store.AttemptRef
	created, used int64
	hasUsed       bool
	result        string
}

// permitItem is TAG#<tag>/PERMIT, or (queue set) a job queue, JQ/Q#<name>.
type permitItem struct {
	maxAllowed, v, createTime, modifyTime int64
	holders, waiters                      map[string]int64
	queue                                 *store.QueueCapacity
	extraInfo                             []byte
}

func (p *permitItem) permit(tag string) *store.TagPermit {
	out := &store.TagPermit{Tag: tag, MaxAllowed: p.maxAllowed, Holders: copyMap(p.holders), Waiters: copyMap(p.waiters),
		V: p.v, CreateTime: p.createTime, ModifyTime: p.modifyTime, ExtraInfo: p.extraInfo}
	if p.queue != nil {
		q := *p.queue
		out.Queue = &q
	}
	return out
}

func copyMap(m map[string]int64) map[string]int64 {
	out := make(map[string]int64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
