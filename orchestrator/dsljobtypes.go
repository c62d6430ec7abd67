package orchestrator

import (
	"context"
	"errors"
	"fmt"

	"github.com/maestro-serverless/maestro/definition"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/store"
)

// maxDSLJobTypeLookups bounds the registry reads one YAML document causes:
// at most this many distinct (job type, version) pairs are looked up; the
// jobs of any further pairs are refused as unknown types.
const maxDSLJobTypeLookups = 100

type jobTypeKey struct{ jobType, version string }

// checkerFor returns the checker for a pushed document. For YAML it
// resolves the DSL job types that are not built-in step types through the
// job template registry, as Maestro's WorkflowParser does with
// JobTemplateManager.loadStepType: a first, pure pass records the (type,
// version) pairs the document asks for, each pair is read once, and the
// document is checked with what was found. A job whose template is not
// registered is refused with the YAML line that names it.
func (o *Definitions) checkerFor(ctx context.Context, body []byte, f Format) (*definition.Checker, error) {
	if f != FormatYAML || o.store.Templates == nil {
		return o.checker, nil
	}
	var asked []jobTypeKey
	seen := map[jobTypeKey]bool{}
	record := func(jobType, version string) (model.StepType, bool) {
		k := jobTypeKey{jobType, version}
		if !seen[k] {
			seen[k] = true
			asked = append(asked, k)
		}
		return "", false
	}
	if _, err := o.checker.With(definition.WithJobTypes(record)).Check(body, f.definitionFormat()); err == nil || len(asked) == 0 {
		return o.checker, nil // every job type is built in
	}
	found := map[jobTypeKey]model.StepType{}
	for i, k := range asked {
		if i == maxDSLJobTypeLookups {
			break
		}
		rec, err := o.store.Templates.GetJobTemplate(ctx, k.jobType, k.version)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, Internal(fmt.Errorf("look up job template %s (version %s): %w", k.jobType, k.version, err))
		}
		jt, err := model.ParseJobTemplate(rec.Request)
		if err != nil {
			return nil, Internal(fmt.Errorf("decode job template %s (version %s): %w", k.jobType, k.version, err))
		}
		found[k] = jt.Definition.StepType
	}
	resolve := func(jobType, version string) (model.StepType, bool) {
		st, ok := found[jobTypeKey{jobType, version}]
		return st, ok
	}
	return o.checker.With(definition.WithJobTypes(resolve)), nil
}
