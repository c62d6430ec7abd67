package events

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files of TestEncodeMaestroGolden")

// maestroFields are the JSON field names of Maestro's event classes
// (their @JsonPropertyOrder lists, and "type"), by type.
var maestroFields = map[MaestroType][]string{
	MaestroWorkflowInstanceStatusChange: {"workflow_id", "workflow_instance_id", "workflow_run_id", "workflow_uuid", "correlation_id", "depth",
		"workflow_name", "cluster_name", "tags", "old_status", "new_status", "event_time", "sync_time", "send_time", "type"},
	MaestroStepInstanceStatusChange: {"workflow_id", "workflow_instance_id", "workflow_run_id", "step_id", "step_attempt_id", "workflow_uuid",
		"step_uuid", "correlation_id", "step_instance_id", "cluster_name", "status_change_records", "sync_time", "send_time", "type"},
	MaestroWorkflowDefinitionChange: {"workflow_id", "workflow_name", "author", "version_id", "current_active_version_id",
		"previous_active_version_id", "snapshot_id", "cluster_name", "event_time", "sync_time", "send_time", "type"},
	MaestroWorkflowPropertiesChange: {"workflow_id", "author", "snapshot_id", "cluster_name", "event_time", "sync_time", "send_time", "type"},
	MaestroWorkflowActivationChange: {"workflow_id", "author", "current_active_version_id", "previous_active_version_id", "cluster_name",
		"event_time", "sync_time", "send_time", "type"},
	MaestroWorkflowDeactivationChange: {"workflow_id", "author", "previous_active_version_id", "cluster_name", "event_time", "sync_time", "send_time", "type"},
	MaestroWorkflowDeletionChange:     {"workflow_id", "internal_id", "author", "cluster_name", "event_time", "sync_time", "send_time", "type"},
}

// TestEncodeMaestroGolden encodes one event of each kind and compares the
// Maestro messages with golden files (go test -update rewrites them): one
// message per status change, in order, with Maestro's field names and
// type values, and the attributes that tell them apart.
func TestEncodeMaestroGolden(t *testing.T) {
	parent := &Parent{WorkflowID: "top", InstanceID: 3, RunID: 1, StepID: "loop", Attempt: 1, RootWorkflowID: "top", RootInstanceID: 3}
	withParent := Transition("maestro_foreach_ab", 1, 2, 1, "", 0, "CREATED", "IN_PROGRESS", 1, 1100)
	withParent.Parent = parent
	defWith := func(t Type, version int64, principal string) Event {
		e := Definition(t, "wf", version, 5, 1000)
		e.Principal = principal
		return e
	}
	tests := []struct {
		name string
		ev   Event
	}{
		{"instance", Transitions("wf", 2, 7, 1, "", 0, []Change{
			{OldStatus: "", NewStatus: "CREATED", Sequence: 0, Time: 1000},
			{OldStatus: "CREATED", NewStatus: "IN_PROGRESS", Sequence: 1, Time: 1001},
		})},
		{"instance-child", withParent},
		{"step", Transitions("wf", 2, 7, 1, "job.1", 1, []Change{
			{OldStatus: "NOT_CREATED", NewStatus: "CREATED", Sequence: 2, Time: 1001},
			{OldStatus: "CREATED", NewStatus: "INITIALIZED", Sequence: 3, Time: 1001},
			{OldStatus: "INITIALIZED", NewStatus: "RUNNING", Sequence: 4, Time: 1002},
		})},
		{"definition", defWith(DefinitionCreated, 3, "arn:aws:iam::1:user/ann")},
		{"properties", defWith(PropertiesChanged, 0, "")},
		{"activation", defWith(VersionActivated, 3, "arn:aws:iam::1:user/ann")},
		{"deactivation", defWith(WorkflowDeactivated, 0, "")},
		{"deletion", defWith(WorkflowDeleted, 0, "arn:aws:iam::1:user/bob")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msgs, err := EncodeMaestro(tc.ev, "maestro-test", 2000)
			require.NoError(t, err)
			wantN := max(1, len(tc.ev.Transitions))
			require.Len(t, msgs, wantN, "one message per status change")
			var lines []string
			for i, m := range msgs {
				var obj map[string]any
				require.NoError(t, json.Unmarshal(m.Body, &obj))
				assert.Equal(t, string(m.Type), obj["type"])
				allowed, ok := maestroFields[m.Type]
				require.True(t, ok, "type %s is one of Maestro's", m.Type)
				for k := range obj {
					assert.True(t, slices.Contains(allowed, k), "%s: field %q is not one of Maestro's", m.Type, k)
				}
				assert.Equal(t, string(m.Type), m.Attributes[AttrType])
				assert.Equal(t, FormatMaestro, m.Attributes[AttrFormat])
				assert.Equal(t, tc.ev.WorkflowID, m.Attributes[AttrWorkflowID])
				if len(tc.ev.Transitions) > 0 {
					assert.Equal(t, tc.ev.Transitions[i].NewStatus, m.Attributes[AttrStatus])
				}
				lines = append(lines, string(m.Body))
			}
			got := strings.Join(lines, "\n") + "\n"
			path := filepath.Join("testdata", "maestro", tc.name+".jsonl")
			if *update {
				require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, string(want), got)
		})
	}
}

// TestEncodeMaestroRefusesUnknownTypes: an event of a type with no Maestro
// counterpart is an error, not a message of a made-up type.
func TestEncodeMaestroRefusesUnknownTypes(t *testing.T) {
	_, err := EncodeMaestro(Event{ID: "x", Type: "other", WorkflowID: "wf"}, "c", 1)
	assert.ErrorContains(t, err, `no Maestro change event for type "other"`)
}

// TestEncodeMaestroSkipsAccessAndTeams: a grant's or a team's change has
// no Maestro counterpart and no Maestro-shaped message, and is no error
// (the router would log one for every such change).
func TestEncodeMaestroSkipsAccessAndTeams(t *testing.T) {
	for _, e := range []Event{Definition(AccessChanged, "wf", 0, 4, 10), TeamChange("data", TeamCreated, 1, 10)} {
		msgs, err := EncodeMaestro(e, "c", 1)
		require.NoError(t, err, e.Type)
		assert.Empty(t, msgs, e.Type)
	}
}

// TestEncodeMaestroLeavesTodaysAttributes: encoding does not change the
// attributes of the runtime's own message of the same event.
func TestEncodeMaestroLeavesTodaysAttributes(t *testing.T) {
	e := Transition("wf", 1, 1, 1, "s", 1, "CREATED", "RUNNING", 3, 10)
	before := Attributes(e)
	_, err := EncodeMaestro(e, "c", 1)
	require.NoError(t, err)
	assert.Equal(t, before, Attributes(e))
	assert.NotContains(t, before, AttrFormat)
}
