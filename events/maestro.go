package events

import (
	"encoding/json"
	"fmt"
)

// MaestroType is the "type" of one of Maestro's change events
// (MaestroEvent.Type).
type MaestroType string

// Maestro's change event types this runtime emits.
const (
	MaestroWorkflowInstanceStatusChange MaestroType = "WORKFLOW_INSTANCE_STATUS_CHANGE_EVENT"
	MaestroStepInstanceStatusChange     MaestroType = "STEP_INSTANCE_STATUS_CHANGE_EVENT"
	MaestroWorkflowDefinitionChange     MaestroType = "WORKFLOW_DEFINITION_CHANGE_EVENT"
	MaestroWorkflowPropertiesChange     MaestroType = "WORKFLOW_PROPERTIES_CHANGE_EVENT"
	MaestroWorkflowActivationChange     MaestroType = "WORKFLOW_ACTIVATION_CHANGE_EVENT"
	MaestroWorkflowDeactivationChange   MaestroType = "WORKFLOW_DEACTIVATION_CHANGE_EVENT"
	MaestroWorkflowDeletionChange       MaestroType = "WORKFLOW_DELETION_CHANGE_EVENT"
)

// AttrFormat is the message attribute that marks a message in Maestro's
// shape (value FormatMaestro); the messages of this runtime's own shape do
// not carry it.
const (
	AttrFormat    = "event_format"
	FormatMaestro = "maestro"
)

// MaestroMessage is one of Maestro's change events, encoded: its type,
// its JSON and its message attributes.
type MaestroMessage struct {
	Type       MaestroType
	Body       json.RawMessage
	Attributes map[string]string
}

// maestroInstanceEvent is Maestro's WorkflowInstanceStatusChangeEvent, the
// fields this runtime's events carry, in Maestro's JSON order. Depth is 0
// for a run without a parent and left out for a child run (its depth is
// not in the event). Maestro's workflow_uuid, correlation_id,
// workflow_name and tags are not in this runtime's events either.
type maestroInstanceEvent struct {
	WorkflowID  string      `json:"workflow_id"`
	InstanceID  int64       `json:"workflow_instance_id"`
	RunID       int64       `json:"workflow_run_id"`
	Depth       *int        `json:"depth,omitempty"`
	ClusterName string      `json:"cluster_name"`
	OldStatus   string      `json:"old_status,omitempty"`
	NewStatus   string      `json:"new_status"`
	EventTime   int64       `json:"event_time"`
	SyncTime    int64       `json:"sync_time"`
	SendTime    int64       `json:"send_time"`
	Type        MaestroType `json:"type"`
}

// maestroStepEvent is Maestro's StepInstanceStatusChangeEvent with one
// status change record (this runtime sends one event a transition).
// Maestro's workflow_uuid, step_uuid, correlation_id and step_instance_id
// are not in this runtime's events.
type maestroStepEvent struct {
	WorkflowID  string                `json:"workflow_id"`
	InstanceID  int64                 `json:"workflow_instance_id"`
	RunID       int64                 `json:"workflow_run_id"`
	StepID      string                `json:"step_id"`
	Attempt     int64                 `json:"step_attempt_id"`
	ClusterName string                `json:"cluster_name"`
	Records     []maestroStatusRecord `json:"status_change_records"`
	SyncTime    int64                 `json:"sync_time"`
	SendTime    int64                 `json:"send_time"`
	Type        MaestroType           `json:"type"`
}

// maestroStatusRecord is Maestro's StatusChangeRecord.
type maestroStatusRecord struct {
	OldStatus string `json:"old_status,omitempty"`
	NewStatus string `json:"new_status"`
	EventTime int64  `json:"event_time"`
}

// maestroWorkflowEvent is Maestro's WorkflowChangeEvent family (definition,
// properties, activation, deactivation, deletion), the fields this
// runtime's events carry, in Maestro's JSON order: version_id on a
// definition change, current_active_version_id on an activation.
// Maestro's workflow_name, snapshot_id, previous_active_version_id and
// internal_id are not in this runtime's events.
type maestroWorkflowEvent struct {
	WorkflowID      string       `json:"workflow_id"`
	Author          *maestroUser `json:"author,omitempty"`
	VersionID       int64        `json:"version_id,omitempty"`
	CurrentActiveID int64        `json:"current_active_version_id,omitempty"`
	ClusterName     string       `json:"cluster_name"`
	EventTime       int64        `json:"event_time"`
	SyncTime        int64        `json:"sync_time"`
	SendTime        int64        `json:"send_time"`
	Type            MaestroType  `json:"type"`
}

// maestroUser is Maestro's User.
type maestroUser struct {
	Name string `json:"name"`
}

// maestroWorkflowType is Maestro's type of a definition event of type t;
// false for a type that is not a definition event's.
func maestroWorkflowType(t Type) (MaestroType, bool) {
	switch t {
	case DefinitionCreated:
		return MaestroWorkflowDefinitionChange, true
	case PropertiesChanged:
		return MaestroWorkflowPropertiesChange, true
	case VersionActivated:
		return MaestroWorkflowActivationChange, true
	case WorkflowDeactivated:
		return MaestroWorkflowDeactivationChange, true
	case WorkflowDeleted:
		return MaestroWorkflowDeletionChange, true
	}
	return "", false
}

// EncodeMaestro returns e as Maestro's change events: one
// WORKFLOW_INSTANCE_STATUS_CHANGE_EVENT or STEP_INSTANCE_STATUS_CHANGE_EVENT
// per status change of e, in order, or one workflow change event for a
// definition event. cluster is the cluster_name they carry; sendTime
// (unix ms) is their send_time. Their attributes are e's (Attributes) with
// the Maestro type as event_type, the change's new status as status, and
// event_format "maestro". Changes Maestro has no event for (a workflow's
// grant, a team) have none: no messages and no error.
func EncodeMaestro(e Event, cluster string, sendTime int64) ([]MaestroMessage, error) {
	if e.Type == AccessChanged || e.Type == TeamChanged {
		return nil, nil
	}
	base := Attributes(e)
	base[AttrFormat] = FormatMaestro
	msg := func(t MaestroType, status string, body any) (MaestroMessage, error) {
		raw, err := json.Marshal(body)
		if err != nil {
			return MaestroMessage{}, fmt.Errorf("events: encode %s of %s: %w", t, e.ID, err)
		}
		attrs := make(map[string]string, len(base))
		for k, v := range base {
			attrs[k] = v
		}
		attrs[AttrType] = string(t)
		if status != "" {
			attrs[AttrStatus] = status
		}
		return MaestroMessage{Type: t, Body: raw, Attributes: attrs}, nil
	}
	var out []MaestroMessage
	switch e.Type {
	case InstanceStatusChanged, StepStatusChanged:
		var depth *int
		if e.Parent == nil {
			depth = new(int)
		}
		changes := e.Transitions
		if len(changes) == 0 && e.NewStatus != "" { // a summary alone: one change
			changes = []Change{{OldStatus: e.OldStatus, NewStatus: e.NewStatus, Sequence: e.Sequence, Time: e.Time}}
		}
		for _, c := range changes {
			var body any
			t := MaestroWorkflowInstanceStatusChange
			if e.Type == StepStatusChanged {
				t = MaestroStepInstanceStatusChange
				body = maestroStepEvent{
					WorkflowID: e.WorkflowID, InstanceID: e.InstanceID, RunID: e.RunID, StepID: e.StepID, Attempt: e.Attempt,
					ClusterName: cluster, Records: []maestroStatusRecord{{OldStatus: c.OldStatus, NewStatus: c.NewStatus, EventTime: c.Time}},
					SyncTime: e.Time, SendTime: sendTime, Type: t,
				}
			} else {
				body = maestroInstanceEvent{
					WorkflowID: e.WorkflowID, InstanceID: e.InstanceID, RunID: e.RunID, Depth: depth, ClusterName: cluster,
					OldStatus: c.OldStatus, NewStatus: c.NewStatus, EventTime: c.Time, SyncTime: e.Time, SendTime: sendTime, Type: t,
				}
			}
			m, err := msg(t, c.NewStatus, body)
			if err != nil {
				return nil, err
			}
			out = append(out, m)
		}
	default:
		t, ok := maestroWorkflowType(e.Type)
		if !ok {
			return nil, fmt.Errorf("events: %s: no Maestro change event for type %q", e.ID, e.Type)
		}
		body := maestroWorkflowEvent{WorkflowID: e.WorkflowID, ClusterName: cluster, EventTime: e.Time, SyncTime: e.Time, SendTime: sendTime, Type: t}
		if e.Principal != "" {
			body.Author = &maestroUser{Name: e.Principal}
		}
		switch e.Type {
		case DefinitionCreated:
			body.VersionID = e.Version
		case VersionActivated:
			body.CurrentActiveID = e.Version
		}
		m, err := msg(t, "", body)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}
