package engine

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // system params use named zones (America/Los_Angeles, trigger zones) everywhere

	"github.com/google/uuid"
	"github.com/maestro-serverless/maestro/model"
)

// Names of the default step params (Maestro's default-step-params).
const (
	ParamWorkflowInstanceID = "workflow_instance_id"
	ParamStepInstanceUUID   = "step_instance_uuid"
	ParamStepAttemptID      = "step_attempt_id"
	ParamStepID             = "step_id"
	// ParamSleepSeconds is the Sleep step's duration param.
	ParamSleepSeconds = "sleep_seconds"
)

// Runtime fields of a step that are not params (Maestro's Constants):
// params.getFromStep(FieldStepErrorRetries) reads the current step's error
// retries so far; params.getFromStep(stepId, FieldStepStatus) and
// (stepId, FieldStepEndTime) another step's status and end time (unix ms).
const (
	FieldStepErrorRetries = "MAESTRO_STEP_ERROR_RETRIES"
	FieldStepStatus       = "MAESTRO_STEP_STATUS"
	FieldStepEndTime      = "MAESTRO_STEP_END_TIME"
)

// DefaultSleepSeconds is a Sleep step's duration when sleep_seconds is unset.
const DefaultSleepSeconds = 3

// RunPolicyFreshRun is the RUN_POLICY of a normal start.
const RunPolicyFreshRun = "START_FRESH_NEW_RUN"

const pacificZone = "America/Los_Angeles"

// systemParams computes the system default workflow params of a run started
// at now, following Maestro's default-workflow-params: the names are those of
// model.SystemParams that have a value at start (the workflow defaults and the
// instance-level RUN_POLICY, INITIATOR_TYPE, INITIATOR_TIMEZONE,
// FIRST_TIME_TRIGGER_TIMEZONE), converted to the types model.SystemParams
// declares (so TARGET_RUN_DATE is the LONG 20261122 and TARGET_RUN_HOUR the
// STRING "10"). Dates and hours are taken in WORKFLOW_CRON_TIMEZONE, which is
// the initiating trigger's timezone, else DSL_DEFAULT_TZ (the first time
// trigger's timezone, else UTC).
func systemParams(wf *model.Workflow, st *Instance, ini Initiator, now time.Time) (Values, error) {
	dslTZ := "UTC"
	var firstTZ string
	if len(wf.TimeTriggers) > 0 && wf.TimeTriggers[0].Timezone != "" {
		firstTZ = wf.TimeTriggers[0].Timezone
		dslTZ = firstTZ
	}
	cronTZ := dslTZ
	if ini.Timezone != "" {
		cronTZ = ini.Timezone
	}
	cronLoc, err := time.LoadLocation(cronTZ)
	if err != nil {
		return nil, fmt.Errorf("system params: timezone %q: %w", cronTZ, err)
	}
	pacific, err := time.LoadLocation(pacificZone)
	if err != nil {
		return nil, fmt.Errorf("system params: timezone %q: %w", pacificZone, err)
	}
	runTS := now.UnixMilli()
	if ini.ScheduledTime > 0 {
		runTS = ini.ScheduledTime // a time trigger's run is for its scheduled time
	}
	run := time.UnixMilli(runTS)
	local := run.In(cronLoc)
	derived := time.Date(local.Year(), local.Month(), local.Day(), local.Hour(), 0, 0, 0, cronLoc)
	const day, hour = "20060102", "15"
	raw := map[string]any{
		"DSL_DEFAULT_TZ":              dslTZ,
		"WORKFLOW_CRON_TIMEZONE":      cronTZ,
		"RUN_TS":                      runTS,
		"TARGET_RUN_DATE":             local.Format(day),
		"TARGET_RUN_HOUR":             local.Format(hour),
		"DERIVED_RUN_TS":              derived.UnixMilli(),
		"DERIVED_RUN_DATE_UTC":        derived.UTC().Format(day),
		"DERIVED_RUN_DATE_US_PACIFIC": derived.In(pacific).Format(day),
		"DERIVED_RUN_HOUR_UTC":        derived.UTC().Format(hour),
		"DERIVED_RUN_HOUR_US_PACIFIC": derived.In(pacific).Format(hour),
		// Maestro's minus/plus variants: calendar days in the zone, hours
		// as elapsed time.
		"DERIVED_RUN_DATE_US_PACIFIC_MINUS_ONE": derived.In(pacific).AddDate(0, 0, -1).Format(day),
		"DERIVED_RUN_DATE_UTC_MINUS_ONE":        derived.UTC().AddDate(0, 0, -1).Format(day),
		"DERIVED_RUN_DATE_UTC_PLUS_ONE":         derived.UTC().AddDate(0, 0, 1).Format(day),
		"DERIVED_RUN_DATE_UTC_MINUS_ONE_HOUR":   derived.UTC().Add(-time.Hour).Format(day),
		"DERIVED_RUN_DATE_UTC_PLUS_ONE_HOUR":    derived.UTC().Add(time.Hour).Format(day),
		"DERIVED_RUN_HOUR_UTC_MINUS_ONE_HOUR":   derived.UTC().Add(-time.Hour).Format(hour),
		"DERIVED_RUN_HOUR_UTC_PLUS_ONE_HOUR":    derived.UTC().Add(time.Hour).Format(hour),
		"RUN_DATE":                              run.UTC().Format(day),
		"LOCAL_RUN_DATE":                        local.Format(day),
		"owner":                                 st.Owner,
		"workflow_id":                           st.WorkflowID,
		"RUN_POLICY":                            runPolicy(st),
		"INITIATOR_TYPE":                        ini.Type,
	}
	if ini.Timezone != "" {
		raw["INITIATOR_TIMEZONE"] = ini.Timezone
	}
	if firstTZ != "" {
		raw["FIRST_TIME_TRIGGER_TIMEZONE"] = firstTZ
	}
	out := make(Values, len(raw))
	for name, typ := range model.SystemParams() {
		v, ok := raw[name]
		if !ok {
			continue
		}
		cv, err := convertSystem(v, typ)
		if err != nil {
			return nil, fmt.Errorf("system param %s: %w", name, err)
		}
		out[name] = cv
	}
	return out, nil
}

// convertSystem converts a computed system param (a string or an int64) to
// its declared type; "" keeps it as is.
func convertSystem(v any, t model.ParamType) (any, error) {
	switch t {
	case model.TypeLong:
		if s, ok := v.(string); ok {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%q is not a LONG: %w", s, err)
			}
			return n, nil
		}
	case model.TypeString:
		if n, ok := v.(int64); ok {
			return strconv.FormatInt(n, 10), nil
		}
	}
	return v, nil
}

// stepUUID derives a step attempt's uuid from the instance uuid, so that it is
// the same every time the decision is made.
func stepUUID(instanceUUID, stepID string, attempt int64) string {
	name := instanceUUID + "\x00" + stepID + "\x00" + strconv.FormatInt(attempt, 10)
	return uuid.NewSHA1(uuid.NameSpaceOID, []byte(name)).String()
}

// defaultStepParams returns Maestro's default step params for an attempt.
func defaultStepParams(st *Instance, stepID string, attempt int64) Values {
	return Values{
		ParamWorkflowInstanceID: st.InstanceID,
		ParamStepInstanceUUID:   stepUUID(st.UUID, stepID, attempt),
		ParamStepAttemptID:      attempt,
		ParamStepID:             stepID,
	}
}

// stepFields returns what params.getFromStep(field) reads for step s: its
// default step params (from defaults) and its error retries so far.
func stepFields(s *StepState, defaults Values) map[string]any {
	f := make(map[string]any, 5)
	for _, k := range [...]string{ParamWorkflowInstanceID, ParamStepInstanceUUID, ParamStepAttemptID, ParamStepID} {
		if v, ok := defaults[k]; ok {
			f[k] = v
		}
	}
	f[FieldStepErrorRetries] = s.ErrorRetries
	return f
}

// crossStepName is the name under which expressions see a step's param.
func crossStepName(stepID, param string) string { return stepID + "__" + param }

// baseScope is the part of every expression scope that does not depend on
// the step: model.SystemParams (workflow defaults, instance-level and default
// step params), the workflow params, and every step's params (default and
// defined) as <stepid>__<param>.
func baseScope(wf *model.Workflow) map[string]model.ParamType {
	sys := model.SystemParams()
	vars := make(map[string]model.ParamType, len(sys)+len(wf.Params.Names)+8*len(wf.Steps))
	for n, t := range sys {
		vars[n] = t
	}
	for _, n := range wf.Params.Names {
		vars[n] = paramType(wf.Params.Defs[n])
	}
	for i := range wf.Steps {
		s := &wf.Steps[i]
		for _, n := range [...]string{ParamWorkflowInstanceID, ParamStepInstanceUUID, ParamStepAttemptID, ParamStepID} {
			vars[crossStepName(s.ID, n)] = sys[n]
		}
		for _, n := range s.Params.Names {
			vars[crossStepName(s.ID, n)] = paramType(s.Params.Defs[n])
		}
	}
	return vars
}

// stepScope is base plus step s's own params, which shadow workflow params:
// the scope of s's successor conditions.
func stepScope(base map[string]model.ParamType, s *model.Step) model.Scope {
	if len(s.Params.Names) == 0 {
		return model.Scope{Vars: base}
	}
	vars := make(map[string]model.ParamType, len(s.Params.Names))
	for _, n := range s.Params.Names {
		vars[n] = paramType(s.Params.Defs[n])
	}
	return model.Scope{Vars: vars, Outer: []map[string]model.ParamType{base}}
}

func paramType(d *model.ParamDefinition) model.ParamType {
	if d == nil {
		return ""
	}
	return d.Type
}

// sleepDuration reads a Sleep step's sleep_seconds param.
func sleepDuration(params Values) (time.Duration, error) {
	v, ok := params[ParamSleepSeconds]
	if !ok {
		return DefaultSleepSeconds * time.Second, nil
	}
	var secs int64
	switch x := v.(type) {
	case int64:
		secs = x
	case float64:
		secs = int64(x)
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("param %s: %q is not a whole number of seconds", ParamSleepSeconds, x)
		}
		secs = n
	default:
		return 0, fmt.Errorf("param %s: %T is not a number of seconds", ParamSleepSeconds, v)
	}
	if secs < 0 {
		return 0, fmt.Errorf("param %s: %d is negative", ParamSleepSeconds, secs)
	}
	const maxSleep = 120 * 24 * 60 * 60 // Maestro's longest timeout, 120 days
	if secs > maxSleep {
		return 0, fmt.Errorf("param %s: %d exceeds %d seconds (120 days)", ParamSleepSeconds, secs, maxSleep)
	}
	return time.Duration(secs) * time.Second, nil
}

// templateVersion is the job template version a step uses: its
// sub_type_version, else the workflow param job_template_version, else
// "default" (Maestro's JobTemplateManager).
func templateVersion(subTypeVersion string, workflowParams Values) string {
	if subTypeVersion != "" {
		return subTypeVersion
	}
	if v, ok := workflowParams[model.JobTemplateVersionParam].(string); ok && v != "" {
		return v
	}
	return model.DefaultJobTemplateVersion
}
