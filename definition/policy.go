package definition

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/maestro-serverless/maestro/engine/expression"
	"github.com/maestro-serverless/maestro/images"
	"github.com/maestro-serverless/maestro/model"
)

// policy checks a valid definition against a deployment's rules; Check
// applies a Checker's policies after validation.
type policy func(def *model.Definition) Errors

// applyPolicies returns every problem c's policies find in def.
func (c *Checker) applyPolicies(def *model.Definition) Errors {
	var errs Errors
	for _, p := range c.policies {
		errs = append(errs, p(def)...)
	}
	return errs
}

// Step params that name the image of an Ecs or a Kubernetes step (see
// steps/ecsstep): the "image" field of the step's "ecs" or "kubernetes" MAP.
const (
	imageParamECS        = "ecs"
	imageParamKubernetes = "kubernetes"
	imageField           = "image"
)

// WithImagePolicy makes Check refuse a definition with an Ecs or Kubernetes
// step whose image allow does not admit; a nil allow admits none. Each
// problem names the JSON path of the image and the image.
//
// Only an image written as a literal is known at push: one given by an
// expression, or a literal that interpolates a param ("${image}"), is
// evaluated when the step runs and is checked then, by the worker, against
// the same list. A literal's "$$" is read as the "$" it becomes.
func WithImagePolicy(allow *images.AllowList) Option {
	return func(c *Checker) {
		c.policies = append(c.policies, func(def *model.Definition) Errors {
			if def.Workflow == nil {
				return nil
			}
			return checkImages(def.Workflow.Steps, "workflow.steps", allow, nil)
		})
	}
}

// checkImages appends to errs the steps (and loop bodies) of list at path
// whose literal image allow does not admit.
func checkImages(list []model.Step, path string, allow *images.AllowList, errs Errors) Errors {
	for i := range list {
		s := &list[i]
		at := path + "[" + strconv.Itoa(i) + "]." + string(s.Kind)
		errs = checkImages(s.Steps, at+".steps", allow, errs)
		if s.Kind != model.KindStep || (s.Type != model.StepECS && s.Type != model.StepKubernetes && s.Type != model.StepNotebook) {
			continue
		}
		param := imageParamECS
		if s.Type == model.StepKubernetes || s.Type == model.StepNotebook {
			param = imageParamKubernetes
		}
		image, ok := literalImage(s.Params.Defs[param])
		if !ok {
			continue
		}
		if err := allow.Check(image); err != nil {
			errs = append(errs, &model.FieldError{
				Path: at + ".params." + param + ".value." + imageField + ".value",
				Msg:  fmt.Sprintf("%v: %s steps run only images on the stack's ECS image allow-list (its ecsImages setting)", err, s.Type),
			})
		}
	}
	return errs
}

// literalImage returns the image a step's MAP param names when it is known
// before the step runs (LiteralMapField). An empty one names no image (an
// Ecs step may name a task definition instead).
func literalImage(p *model.ParamDefinition) (string, bool) {
	return LiteralMapField(p, imageField)
}

// LiteralMapField returns field of a step's MAP param when it is known
// before the step runs: a literal MAP whose field is a literal STRING that
// interpolates nothing (its "$$" read as the "$" it becomes), trimmed as
// the worker trims what it reads. ok is false otherwise, and for an empty
// value.
func LiteralMapField(p *model.ParamDefinition, field string) (string, bool) {
	if p == nil || !p.HasValue {
		return "", false
	}
	fields, ok := p.Value.(map[string]*model.ParamDefinition)
	if !ok {
		return "", false
	}
	f := fields[field]
	if f == nil || !f.HasValue {
		return "", false
	}
	s, ok := f.Value.(string)
	if !ok || len(expression.InterpolationRefs(s)) > 0 {
		return "", false
	}
	s, err := expression.Interpolate(s, func(string) (any, bool) { return nil, false })
	if err != nil {
		return "", false
	}
	s = strings.TrimSpace(s)
	return s, s != ""
}
