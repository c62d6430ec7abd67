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

// checkDocument checks a pushed document: checkErr holds its problems, err
// a failed registry read. For YAML it resolves the DSL job types that are
// not built-in step types through the job template registry, as Maestro's
// WorkflowParser does with JobTemplateManager.loadStepType: a first pass
// records the (type, version) pairs the document asks for — when it asks
// for none, that pass is the check —, each pair is read once, and the
// document is checked again with what was found. A job whose template is
// not registered is refused with the YAML line that names it.
func (o *Definitions) checkDocument(ctx context.Context, body []byte, f Format) (def *model.Definition, checkErr, err error) {
	if f != FormatYAML || o.store.Templates == nil {
		def, checkErr = o.checker.Check(body, f.definitionFormat())
		return def, checkErr, nil
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
	def, checkErr = o.checker.With(definition.WithJobTypes(record)).Check(body, f.definitionFormat())
	if len(asked) == 0 {
		return def, checkErr, nil // every job type is built in
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
			return nil, nil, Internal(fmt.Errorf("look up job template %s (version %s): %w", k.jobType, k.version, err))
		}
		jt, err := model.ParseJobTemplate(rec.Request)
		if err != nil {
			return nil, nil, Internal(fmt.Errorf("decode job template %s (version %s): %w", k.jobType, k.version, err))
		}
		found[k] = jt.Definition.StepType
	}
	resolve := func(jobType, version string) (model.StepType, bool) {
		st, ok := found[jobTypeKey{jobType, version}]
		return st, ok
	}
	def, checkErr = o.checker.With(definition.WithJobTypes(resolve)).Check(body, f.definitionFormat())
	return def, checkErr, nil
}
