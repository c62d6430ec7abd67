// Package events defines the change events Maestro publishes to its events
// SNS topic: every definition change and every instance and step status
// change, as JSON with message attributes for SNS filter policies.
//
// Events travel from a commit to the topic through the transactional
// outbox: a commit stores its events in the outbox of the item it writes,
// and the stream router publishes them. A batch is encoded compactly
// (gzip above 1 KiB) so that a decision's events cost little item size.
// The package is pure: no AWS.
package events

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Type names a kind of change.
type Type string

// Event types.
const (
	// InstanceStatusChanged: a workflow instance (run) changed status.
	InstanceStatusChanged Type = "instance_status_changed"
	// StepStatusChanged: a step attempt changed status.
	StepStatusChanged Type = "step_status_changed"
	// DefinitionCreated: a new version was pushed.
	DefinitionCreated Type = "definition_created"
	// VersionActivated: a version became the active one.
	VersionActivated Type = "version_activated"
	// WorkflowDeactivated: the workflow has no active version any more.
	WorkflowDeactivated Type = "workflow_deactivated"
	// PropertiesChanged: the workflow's properties changed.
	PropertiesChanged Type = "properties_changed"
	// WorkflowDeleted: the workflow was deleted.
	WorkflowDeleted Type = "workflow_deleted"
	// AccessChanged: the workflow's grant (its owners, operators and
	// readers) was replaced.
	AccessChanged Type = "access_changed"
	// TeamChanged: a team was created, replaced or deleted (NewStatus
	// says which). Its event names the team, not a workflow.
	TeamChanged Type = "team_changed"
)

// Types lists every event type.
func Types() []Type {
	return []Type{InstanceStatusChanged, StepStatusChanged, DefinitionCreated, VersionActivated,
		WorkflowDeactivated, PropertiesChanged, WorkflowDeleted, AccessChanged, TeamChanged}
}

// Event is one published message. A definition event is one change. An
// instance or step event carries the status changes one decision made to
// that instance (run) or step attempt, in order, in Transitions; its
// top-level old_status, new_status, sequence and time summarise them (the
// first old status, the last new status, the first sequence, the last
// time). Every status change appears in exactly one event: one message per
// entity and decision rather than per change costs a seventh of the SNS
// publishes (a NoOp step passes seven statuses in one decision).
//
// Sequence numbers: an instance's grow by one with every status change of
// the instance or any of its steps, across runs, without gaps; a
// workflow's definition sequence grows with every definition change; the
// teams' sequence (one for all teams) with every team change.
// Subscribers order by (workflow_id, workflow_instance_id, sequence), team
// events by sequence, and dedupe by event_id: delivery is at least once.
type Event struct {
	ID         string `json:"event_id"`
	Type       Type   `json:"type"`
	WorkflowID string `json:"workflow_id"`
	// Version is the instance's version, or the version a definition
	// event is about.
	Version    int64  `json:"workflow_version_id,omitempty"`
	InstanceID int64  `json:"workflow_instance_id,omitempty"`
	RunID      int64  `json:"workflow_run_id,omitempty"`
	StepID     string `json:"step_id,omitempty"`
	Attempt    int64  `json:"step_attempt_id,omitempty"`
	OldStatus  string `json:"old_status,omitempty"`
	NewStatus  string `json:"new_status,omitempty"`
	Sequence   int64  `json:"sequence"`
	// LastSequence is the sequence of the last change of Transitions.
	LastSequence int64 `json:"last_sequence,omitempty"`
	// Time is when the (last) change happened (unix ms).
	Time int64 `json:"time"`
	// Transitions are the status changes of an instance or step event, in
	// order.
	Transitions []Change `json:"transitions,omitempty"`
	// Principal is the IAM principal whose API request made the change (a
	// push, an activation, a start, an action...); empty for changes the
	// system made on its own (a step finishing, a timer, a signal trigger).
	Principal string `json:"principal,omitempty"`
	// Team is the team a team event is about; its WorkflowID is empty.
	Team string `json:"team,omitempty"`
	// Parent is set on the events of a child run — a foreach or while
	// iteration, an instance a subworkflow step started: the step attempt
	// that started it and the root of its tree.
	Parent *Parent `json:"parent,omitempty"`
}

// Parent names the step attempt that started a child run, and the run at
// the top of its tree.
type Parent struct {
	WorkflowID     string `json:"workflow_id"`
	InstanceID     int64  `json:"workflow_instance_id"`
	RunID          int64  `json:"workflow_run_id"`
	StepID         string `json:"step_id"`
	Attempt        int64  `json:"step_attempt_id"`
	RootWorkflowID string `json:"root_workflow_id"`
	RootInstanceID int64  `json:"root_workflow_instance_id"`
}

// Change is one status change.
type Change struct {
	OldStatus string `json:"old_status,omitempty"`
	NewStatus string `json:"new_status"`
	Sequence  int64  `json:"sequence"`
	Time      int64  `json:"time"`
}

// InstanceEventID is the id of the instance event with sequence seq.
func InstanceEventID(wf string, inst, seq int64) string {
	return fmt.Sprintf("%s/%d/%d", wf, inst, seq)
}

// DefinitionEventID is the id of the definition event with sequence seq.
func DefinitionEventID(wf string, seq int64) string {
	return fmt.Sprintf("%s/definition/%d", wf, seq)
}

// Transition builds the event of one status change of a run (stepID empty)
// or of one of its step attempts.
func Transition(wf string, version, inst, run int64, stepID string, attempt int64, from, to string, seq, at int64) Event {
	return Transitions(wf, version, inst, run, stepID, attempt, []Change{{OldStatus: from, NewStatus: to, Sequence: seq, Time: at}})
}

// Transitions builds the event of the status changes (at least one, in
// order) one decision made to a run (stepID empty) or a step attempt.
func Transitions(wf string, version, inst, run int64, stepID string, attempt int64, changes []Change) Event {
	first, last := changes[0], changes[len(changes)-1]
	e := Event{
		ID: InstanceEventID(wf, inst, first.Sequence), Type: InstanceStatusChanged, WorkflowID: wf, Version: version,
		InstanceID: inst, RunID: run, OldStatus: first.OldStatus, NewStatus: last.NewStatus,
		Sequence: first.Sequence, LastSequence: last.Sequence, Time: last.Time, Transitions: changes,
	}
	if stepID != "" {
		e.Type, e.StepID, e.Attempt = StepStatusChanged, stepID, attempt
	}
	return e
}

// Team event statuses: what a change did to its team (NewStatus).
const (
	TeamCreated  = "CREATED"
	TeamReplaced = "REPLACED"
	TeamDeleted  = "DELETED"
)

// TeamEventID is the id of the team event with sequence seq: teams share
// one sequence, which every change of any team advances.
func TeamEventID(seq int64) string { return fmt.Sprintf("teams/%d", seq) }

// TeamChange builds the event of a change of team: status is TeamCreated,
// TeamReplaced or TeamDeleted, seq the teams' sequence after it.
func TeamChange(team, status string, seq, at int64) Event {
	return Event{ID: TeamEventID(seq), Type: TeamChanged, Team: team, NewStatus: status, Sequence: seq, Time: at}
}

// Definition builds a definition event; version is the version concerned
// (0 for a deactivation or deletion).
func Definition(t Type, wf string, version, seq, at int64) Event {
	return Event{ID: DefinitionEventID(wf, seq), Type: t, WorkflowID: wf, Version: version, Sequence: seq, Time: at}
}

// Attribute names of published messages, for SNS filter policies.
const (
	AttrType       = "event_type"
	AttrWorkflowID = "workflow_id"
	AttrStatus     = "status"
	// AttrRootWorkflowID is the workflow at the top of the tree: the
	// event's own for a run without a parent.
	AttrRootWorkflowID = "root_workflow_id"
	// AttrTeam is a team event's team.
	AttrTeam = "team"
)

// Attributes returns the message attributes of e: its type, workflow id
// (a team event's team instead), the root of its tree for a status
// change, and, for status changes, the last new status (a run or step
// event's status is where the decision left it: FAILED, SUCCEEDED,
// RUNNING...; a team event's what became of the team). An attribute is
// left out rather than empty: SNS refuses an empty value.
func Attributes(e Event) map[string]string {
	a := map[string]string{AttrType: string(e.Type)}
	if e.WorkflowID != "" {
		a[AttrWorkflowID] = e.WorkflowID
	}
	if e.Team != "" {
		a[AttrTeam] = e.Team
	}
	if e.NewStatus != "" {
		a[AttrStatus] = e.NewStatus
	}
	switch {
	case e.Parent != nil:
		a[AttrRootWorkflowID] = e.Parent.RootWorkflowID
	case e.Type == InstanceStatusChanged || e.Type == StepStatusChanged:
		a[AttrRootWorkflowID] = e.WorkflowID
	}
	return a
}

// compressAbove is the encoded size above which a batch is gzipped.
const compressAbove = 1024

// gzipPrefix marks a gzipped, base64-encoded batch.
const gzipPrefix = "z:"

// EncodeBatch encodes events for an outbox message: a JSON array, gzipped
// and base64-encoded (with a "z:" prefix) when larger than 1 KiB.
func EncodeBatch(evs []Event) (string, error) {
	raw, err := EncodePlainBatch(evs)
	if err != nil || len(raw) <= compressAbove {
		return raw, err
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		return "", fmt.Errorf("events: encode batch: %w", err)
	}
	if _, err := io.WriteString(zw, raw); err != nil {
		return "", fmt.Errorf("events: encode batch: %w", err)
	}
	if err := zw.Close(); err != nil {
		return "", fmt.Errorf("events: encode batch: %w", err)
	}
	return gzipPrefix + base64.StdEncoding.EncodeToString(buf.Bytes()), nil
}

// EncodePlainBatch encodes events for an outbox that is itself compressed
// as a whole (the store's run items): a JSON array, never gzipped here — a
// batch gzipped and base64-encoded inside a gzipped outbox compresses again
// only to about three quarters, where plain JSON shrinks several times.
func EncodePlainBatch(evs []Event) (string, error) {
	raw, err := json.Marshal(evs)
	if err != nil {
		return "", fmt.Errorf("events: encode batch: %w", err)
	}
	return string(raw), nil
}

// maxBatchBytes bounds a decoded batch, so a corrupt message cannot make
// the router allocate without limit.
const maxBatchBytes = 16 << 20

// DecodeBatch decodes what EncodeBatch or EncodePlainBatch made.
func DecodeBatch(s string) ([]Event, error) {
	raw := []byte(s)
	if b64, ok := strings.CutPrefix(s, gzipPrefix); ok {
		z, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return nil, fmt.Errorf("events: decode batch: %w", err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(z))
		if err != nil {
			return nil, fmt.Errorf("events: decode batch: %w", err)
		}
		raw, err = io.ReadAll(io.LimitReader(zr, maxBatchBytes+1))
		if err != nil {
			return nil, fmt.Errorf("events: decode batch: %w", err)
		}
		if len(raw) > maxBatchBytes {
			return nil, errors.New("events: decode batch: larger than 16 MiB")
		}
	}
	var evs []Event
	if err := json.Unmarshal(raw, &evs); err != nil {
		return nil, fmt.Errorf("events: decode batch: %w", err)
	}
	for i, e := range evs {
		if e.ID == "" || e.Type == "" || e.WorkflowID == "" && e.Team == "" {
			return nil, fmt.Errorf("events: decode batch: event %d lacks an id, type, or workflow id or team", i)
		}
	}
	return evs, nil
}
