package orchestrator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"github.com/maestro-serverless/maestro/caller"
	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/jobtemplate"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/store"
)

// Job templates (Maestro's /api/v3/job-templates): a step whose sub_type
// has a template gets the template's params merged into its own when it
// starts (see package jobtemplate and Worker.templated).

// JobTemplateDeleted answers DELETE /api/v3/job-templates/{type}.
type JobTemplateDeleted struct {
	JobType string `json:"job_type"`
	// Version is the version deleted; empty: every version.
	Version string `json:"version,omitempty"`
	Removed int    `json:"removed"`
	Message string `json:"message"`
}

// PutJobTemplate creates or replaces a job template version (Maestro's
// upsert) from a JSON or YAML create request and returns it as stored:
// {"metadata": {...}, "definition": {...}}. A template past DynamoDB's item
// size is refused (400) and nothing is stored.
func (o *Definitions) PutJobTemplate(ctx context.Context, body []byte, f Format) (json.RawMessage, error) {
	if o.store.Templates == nil {
		return nil, Internal(errors.New("no job template store"))
	}
	if f == FormatYAML {
		j, err := model.YAMLToJSON(body)
		if err != nil {
			return nil, Invalid("invalid job template", err.Error())
		}
		body = j
	}
	jt, err := model.ParseJobTemplate(body)
	if err != nil {
		return nil, Invalid("invalid job template", fieldErrors(err)...)
	}
	if err := jobtemplate.CheckLiterals(jt.Definition); err != nil {
		return nil, Invalid("invalid job template", err.Error())
	}
	def := jt.Definition
	// The request keeps what it says of the template (owner, status,
	// support, git_info, extra members); meta adds what the service knows.
	now := o.now().UnixMilli()
	meta := map[string]any{"create_time": now}
	if who := caller.From(ctx); who != "" {
		meta["version_author"] = who
	}
	metaJSON, err := json.Marshal(meta)
	if err != nil {
		return nil, Internal(fmt.Errorf("encode job template metadata: %w", err))
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, body); err != nil {
		return nil, Invalid("invalid job template", err.Error())
	}
	rec := store.JobTemplate{JobType: def.JobType, Version: def.Version, Request: compact.Bytes(), Meta: metaJSON, CreateTime: now}
	if err := o.store.Templates.PutJobTemplate(ctx, rec); err != nil {
		return nil, refusedIfTooLarge(err, "job template cannot be stored", "definition")
	}
	return jobTemplateView(rec)
}

// GetJobTemplate returns a job template version ("" is "default"), or a
// 404.
func (o *Definitions) GetJobTemplate(ctx context.Context, jobType, version string) (json.RawMessage, error) {
	if version == "" {
		version = model.DefaultJobTemplateVersion
	}
	rec, err := o.store.Templates.GetJobTemplate(ctx, jobType, version)
	if errors.Is(err, store.ErrNotFound) {
		return nil, NotFound("no job template found for job_type [%s] and version [%s]", jobType, version)
	}
	if err != nil {
		return nil, Internal(err)
	}
	return jobTemplateView(*rec)
}

// ListJobTemplates returns the job templates of a version ("" is
// "default").
func (o *Definitions) ListJobTemplates(ctx context.Context, version string) ([]json.RawMessage, error) {
	if version == "" {
		version = model.DefaultJobTemplateVersion
	}
	recs, err := o.store.Templates.ListJobTemplates(ctx, version)
	if err != nil {
		return nil, Internal(err)
	}
	out := make([]json.RawMessage, 0, len(recs))
	for _, r := range recs {
		v, err := jobTemplateView(r)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// DeleteJobTemplate deletes a version of a job template, or every version
// when version is "" (Maestro's). Steps already running keep the params
// they were started with; steps that start later run without the template
// (and fail if a param it gave is one they need).
func (o *Definitions) DeleteJobTemplate(ctx context.Context, jobType, version string) (*JobTemplateDeleted, error) {
	if problems := model.NameProblems(jobType, "job type"); len(problems) > 0 {
		return nil, Invalid("invalid job type", problems...)
	}
	n, err := o.store.Templates.DeleteJobTemplate(ctx, jobType, version)
	if err != nil {
		return nil, Internal(err)
	}
	return &JobTemplateDeleted{JobType: jobType, Version: version, Removed: n,
		Message: fmt.Sprintf("Removed [%d] job template versions for job type: [%s][%s]", n, jobType, version)}, nil
}

// jobTemplateView is Maestro's JobTemplate JSON of a stored version: its
// metadata the request's members other than its definition, with the
// service's (create_time, version_author); its definition the request's,
// with its version.
func jobTemplateView(r store.JobTemplate) (json.RawMessage, error) {
	var req map[string]json.RawMessage
	var meta map[string]json.RawMessage
	if err := json.Unmarshal(r.Request, &req); err != nil {
		return nil, Internal(fmt.Errorf("stored job template %s@%s: %w", r.JobType, r.Version, err))
	}
	if err := json.Unmarshal(r.Meta, &meta); err != nil {
		return nil, Internal(fmt.Errorf("stored job template %s@%s metadata: %w", r.JobType, r.Version, err))
	}
	var def map[string]json.RawMessage
	if err := json.Unmarshal(req["definition"], &def); err != nil {
		return nil, Internal(fmt.Errorf("stored job template %s@%s definition: %w", r.JobType, r.Version, err))
	}
	if _, ok := def["version"]; !ok {
		def["version"], _ = json.Marshal(r.Version)
	}
	var stepType string
	if json.Unmarshal(def["step_type"], &stepType) == nil {
		if t, ok := model.ParseStepType(stepType); ok {
			def["step_type"], _ = json.Marshal(t) // Maestro's spelling ("notebook" -> "Notebook")
		}
	}
	delete(req, "definition")
	maps.Copy(req, meta)
	out, err := json.Marshal(map[string]any{"metadata": req, "definition": def})
	if err != nil {
		return nil, Internal(err)
	}
	return out, nil
}

// templated returns m with its job template's params merged into its own,
// as the step starts (Maestro merges a template's params at step start,
// so a changed template applies to the steps that start after it); a
// step without a sub_type, or whose sub_type has no template in its
// version, is m unchanged. A merge that fails is the step's fatal error,
// naming the step, the template and the param.
func (o *Worker) templated(ctx context.Context, m StepWork) (StepWork, *engine.StepFinished, error) {
	if m.SubType == "" || m.StepKind != model.KindStep || o.store.Templates == nil {
		return m, nil, nil
	}
	version := m.TemplateVersion
	if version == "" {
		version = model.DefaultJobTemplateVersion
	}
	var readErr error
	get := func(jobType, version string) (*model.JobTemplateDefinition, error) {
		rec, err := o.store.Templates.GetJobTemplate(ctx, jobType, version)
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			readErr = err
			return nil, err
		}
		jt, err := model.ParseJobTemplate(rec.Request)
		if err != nil {
			return nil, fmt.Errorf("stored job template %s@%s: %w", jobType, version, err)
		}
		return jt.Definition, nil
	}
	chain, err := jobtemplate.Chain(m.StepType, m.SubType, version, get)
	if readErr != nil {
		return m, nil, readErr // a platform error: retried
	}
	if err == nil {
		m.Params, err = jobtemplate.Merge(chain, m.Params)
	}
	if err != nil {
		return m, &engine.StepFinished{StepID: m.StepID, Attempt: m.Attempt, Outcome: engine.OutcomeFatalError,
			Message: fmt.Sprintf("step %s: job template %s@%s: %v", m.StepID, m.SubType, version, err)}, nil
	}
	return m, nil, nil
}

// fieldErrors lists a model error's problems, each "path: rule".
func fieldErrors(err error) []string {
	var list model.Errors
	if !errors.As(err, &list) {
		return []string{err.Error()}
	}
	out := make([]string, len(list))
	for i, e := range list {
		out[i] = e.Error()
	}
	return out
}
