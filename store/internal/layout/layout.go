// Package layout builds the keys of Maestro's one table (the layout
// store/keys.go draws): package store's DynamoDB store writes its items
// under them, and store/memstore, its in-memory stand-in, keeps its items
// under the same ones. Step ids and workflow ids cannot contain '#', so
// the delimiters are unambiguous.
package layout

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// WorkflowPK is the partition of a workflow's items.
func WorkflowPK(wf string) string { return "WF#" + wf }

// RunPK is the partition of an instance's runs, events, attempts and
// timeline.
func RunPK(wf string, inst int64) string { return fmt.Sprintf("R#%s#%d", wf, inst) }

// Sort keys of a workflow's single items.
const (
	// HeadSK is the workflow head: latest/active version, instance
	// counter, properties.
	HeadSK = "HEAD"
	// SlotSK is the workflow's run-strategy slot item: how many runs hold
	// a slot.
	SlotSK = "RS"
	// PurgeSK is the sort key of a workflow's deletion job, WF#<wf>/PURGE:
	// it exists from the moment the workflow is deleted until its last
	// item is gone, carries the outbox message that drives the next purge
	// round, and keeps the workflow id from being reused meanwhile.
	PurgeSK = "PURGE"
	// TombSK is the sort key of a deleted workflow's tombstone,
	// WF#<wf>/TOMB: it keeps the last version number and instance id, so
	// that a workflow pushed again under the same id continues both
	// sequences. (workflow, version) and (workflow, instance) therefore
	// never name two different things: caches of compiled versions stay
	// valid, and a late timer of a deleted instance can never reach a new
	// one.
	TombSK = "TOMB"
	// SigSubsSK is a workflow's set of the signal names it subscribes to.
	SigSubsSK = "SIGSUBS"
)

// DirectoryPK is the workflow directory's partition of the keys-only index
// GSI1: every head is listed in it by workflow id.
const DirectoryPK = "WORKFLOWS"

// VersionSK is a definition version, WF#<wf>/V#<version:10>.
func VersionSK(v int64) string { return fmt.Sprintf("V#%010d", v) }

// InstanceSK is an instance summary, WF#<wf>/I#<instance:12>.
func InstanceSK(i int64) string { return fmt.Sprintf("I#%012d", i) }

// RequestSK is a start request's dedup record, WF#<wf>/REQ#<id>.
func RequestSK(id string) string { return "REQ#" + id }

// QueueSK is an instance waiting for a run-strategy slot, WF#<wf>/Q#<instance:12>.
func QueueSK(i int64) string { return fmt.Sprintf("Q#%012d", i) }

// RunSK is a run's state, R#<wf>#<inst>/RUN#<run:6>.
func RunSK(run int64) string { return fmt.Sprintf("RUN#%06d", run) }

// EventPrefix begins the sort keys of run run's pending events.
func EventPrefix(run int64) string { return fmt.Sprintf("E#%06d#", run) }

// EventSK is a pending event of run run, R#<wf>#<inst>/E#<run:6>#<id>.
func EventSK(run int64, id string) string { return EventPrefix(run) + id }

// AttemptPrefix begins the sort keys of run run's step attempts.
func AttemptPrefix(run int64) string { return fmt.Sprintf("S#%06d#", run) }

// AttemptSK is a step attempt, R#<wf>#<inst>/S#<run:6>#<step>#<attempt:4>.
func AttemptSK(run int64, step string, attempt int64) string {
	return fmt.Sprintf("%s%s#%04d", AttemptPrefix(run), step, attempt)
}

// TimelinePrefix begins the sort keys of run run's instance timeline.
func TimelinePrefix(run int64) string { return fmt.Sprintf("T#%06d#", run) }

// TimelineSK is an instance timeline entry, R#<wf>#<inst>/T#<run:6>#<seq:10>.
func TimelineSK(run, seq int64) string { return fmt.Sprintf("%s%010d", TimelinePrefix(run), seq) }

// PagePrefix begins the sort keys of run run's state pages: they follow
// its run item's, outside the range of its events a read of the item and
// its inbox covers, and before the next run's.
func PagePrefix(run int64) string { return RunSK(run) + "#PG#" }

// LoopParamsSK is a foreach step attempt's evaluated loop params,
// R#<wf>#<inst>/X#<run:6>#<step>#<attempt:4>.
func LoopParamsSK(run int64, step string, attempt int64) string {
	return fmt.Sprintf("X#%06d#%s#%04d", run, step, attempt)
}

// BreakpointPrefix begins the sort keys of a step's breakpoints, or of
// every breakpoint when step is "".
func BreakpointPrefix(step string) string {
	if step == "" {
		return "BP#"
	}
	return "BP#" + step + "#"
}

// BreakpointSK is a breakpoint,
// WF#<wf>/BP#<step>#<version:10>#<instance:12>#<run:6>#<attempt:4>: the
// key holds every match field.
func BreakpointSK(step string, version, instance, run, attempt int64) string {
	return fmt.Sprintf("BP#%s#%010d#%012d#%06d#%04d", step, version, instance, run, attempt)
}

// SignalPK is the partition of a signal name's instances, requests,
// subscribers and lineage.
func SignalPK(name string) string { return "SIG#" + name }

// SigSeqSK is a signal name's sequence counter.
const SigSeqSK = "SEQ"

// SignalInstanceSK is a signal instance, SIG#<name>/I#<seq:12>.
func SignalInstanceSK(seq int64) string { return fmt.Sprintf("I#%012d", seq) }

// SignalRequestSK is an announce request's dedup record, SIG#<name>/R#<id>.
func SignalRequestSK(id string) string { return "R#" + id }

// SubscriberSK is a workflow's subscription to a signal name, SIG#<name>/T#<wf>.
func SubscriberSK(wf string) string { return "T#" + wf }

// LineagePrefix begins the sort keys of a signal instance's lineage links.
func LineagePrefix(seq int64) string { return fmt.Sprintf("L#%012d#", seq) }

// SignalIndexPK is the index partition of one param of a signal name; the
// hex param name cannot contain '#', so the key is unambiguous.
func SignalIndexPK(name, param string) string {
	return "SIGX#" + hex.EncodeToString([]byte(param)) + "#" + name
}

// IndexedStringBytes is how much of a STRING param value its index key
// holds exactly; longer values are indexed by this prefix.
const IndexedStringBytes = 375

// IndexValue encodes a LONG or STRING value as its index key prefix;
// exact is false when a long string was cut to IndexedStringBytes.
func IndexValue(v any) (enc string, exact bool, err error) {
	switch x := v.(type) {
	case int64:
		return fmt.Sprintf("L%016x", uint64(x)^(1<<63)), true, nil
	case string:
		if len(x) > IndexedStringBytes {
			return "S" + hex.EncodeToString([]byte(x[:IndexedStringBytes])), false, nil
		}
		return "S" + hex.EncodeToString([]byte(x)), true, nil
	}
	return "", false, fmt.Errorf("store: signal param value of type %T cannot be indexed (LONG or STRING only)", v)
}

// SignalIndexSK is the index sort key of value v of signal instance seq.
func SignalIndexSK(v any, seq int64) (string, error) {
	enc, exact, err := IndexValue(v)
	if err != nil {
		return "", err
	}
	sep := "#"
	if !exact {
		sep = "$"
	}
	return fmt.Sprintf("%s%s%012d", enc, sep, seq), nil
}

// TaskPK is a task token's item, TASK#<sha256 hex>/TASK.
func TaskPK(hash string) string { return "TASK#" + hash }

// TaskSK is the sort key of a task token's item.
const TaskSK = "TASK"

// JobPK is an external job's item, JOB#<job>/JOB.
func JobPK(job string) string { return "JOB#" + job }

// JobSK is the sort key of an external job's item.
const JobSK = "JOB"

// PermitPK is a tag's permit item, TAG#<tag>/PERMIT.
func PermitPK(tag string) string { return "TAG#" + tag }

// PermitSK is the sort key of a tag's permit item.
const PermitSK = "PERMIT"

// JobQueuePK is the partition of every job queue.
const JobQueuePK = "JQ"

// JobQueueSK is a job queue, JQ/Q#<name>.
func JobQueueSK(name string) string { return "Q#" + name }

// JobTemplatePK is the partition of every job template.
const JobTemplatePK = "JT"

// JobTemplateSK is a job template version, JT/T#<job type>#<version> (job
// types and versions are ids: no '#').
func JobTemplateSK(jobType, version string) string { return "T#" + jobType + "#" + version }

// ParseRunPK reads the workflow and instance ids out of a run partition
// key (R#<wf>#<instance>; workflow ids cannot contain '#').
func ParseRunPK(pk string) (string, int64, error) {
	rest, ok := strings.CutPrefix(pk, "R#")
	i := strings.LastIndexByte(rest, '#')
	if !ok || i < 0 {
		return "", 0, fmt.Errorf("store: not a run partition key: %q", pk)
	}
	inst, err := strconv.ParseInt(rest[i+1:], 10, 64)
	if err != nil {
		return "", 0, fmt.Errorf("store: run partition key %q: %w", pk, err)
	}
	return rest[:i], inst, nil
}

// ParseInstanceSK reads the instance id out of an I# sort key.
func ParseInstanceSK(sk string) (int64, error) {
	if len(sk) < 3 || sk[:2] != "I#" {
		return 0, fmt.Errorf("store: not an instance key: %q", sk)
	}
	return strconv.ParseInt(sk[2:], 10, 64)
}

// ParseAttemptSK parses a step attempt's sort key, S#<run:6>#<step>#<attempt>.
func ParseAttemptSK(sk string) (run int64, step string, attempt int64, err error) {
	if len(sk) < len("S#000000#") || !strings.HasPrefix(sk, "S#") {
		return 0, "", 0, fmt.Errorf("store: not an attempt key: %q", sk)
	}
	if run, err = strconv.ParseInt(sk[2:8], 10, 64); err != nil {
		return 0, "", 0, fmt.Errorf("store: attempt key %q: %w", sk, err)
	}
	rest := sk[len("S#000000#"):]
	i := strings.LastIndexByte(rest, '#')
	if i < 0 {
		return 0, "", 0, fmt.Errorf("store: attempt key %q has no attempt", sk)
	}
	if attempt, err = strconv.ParseInt(rest[i+1:], 10, 64); err != nil {
		return 0, "", 0, fmt.Errorf("store: attempt key %q: %w", sk, err)
	}
	return run, rest[:i], attempt, nil
}

// TeamsPK is the partition of every team and of the teams' counter.
const TeamsPK = "TEAMS"

// TeamPrefix begins the sort keys of the teams.
const TeamPrefix = "T#"

// TeamSK is a team, TEAMS/T#<name>.
func TeamSK(name string) string { return TeamPrefix + name }

// TeamsCountSK is the teams' counter, TEAMS/COUNT: how many teams exist
// and the sequence of their changes.
const TeamsCountSK = "COUNT"

// BackfillPrefix begins the sort keys of a workflow's backfills.
const BackfillPrefix = "BF#"

// BackfillSK is a backfill, WF#<wf>/BF#<id>: ids are ordered by creation
// (see orchestrator's backfill ids), so the partition lists them in order.
func BackfillSK(id string) string { return BackfillPrefix + id }
