// Package jobtemplate merges job templates into the params of the steps
// they apply to, as Maestro's JobTemplateManager and ParamsMergeHelper do.
//
// A step with a sub_type uses the template of its (type, sub_type) in the
// version its sub_type_version names, else the workflow param
// job_template_version, else "default"; the template's inherit_from
// templates first, the template's own params over theirs. The merge
// happens when the step starts (Maestro's runtime param injection), over
// the step's evaluated params:
//
//   - a param the step does not set gets the template's value; one with no
//     value is left out when OPTIONAL and is an error otherwise (REQUIRED,
//     PROVIDED or no internal mode: Maestro's "is a required parameter");
//   - a param the step sets wins, except a RESERVED one, which the step may
//     not set (Maestro: "Cannot modify param with system mode [RESERVED]");
//   - MAP params merge field by field, the same rules at each level;
//   - a step value of another type than the template's is an error.
//
// The package is pure: the templates are passed in.
package jobtemplate

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/engine/expression"
	"github.com/maestro-serverless/maestro/model"
)

// MaxInheritDepth bounds a chain of inherit_from templates.
const MaxInheritDepth = 8

// Lookup returns the template of a job type in a version, or nil when
// there is none.
type Lookup func(jobType, version string) (*model.JobTemplateDefinition, error)

// Chain returns the templates a step of type stepType and sub_type jobType
// uses in version, ancestors (inherit_from) first; none when the job type
// has no template in that version. A template of another step type, an
// inheritance cycle or a chain deeper than MaxInheritDepth is an error.
func Chain(stepType model.StepType, jobType, version string, get Lookup) ([]*model.JobTemplateDefinition, error) {
	var out []*model.JobTemplateDefinition
	visiting := map[string]bool{}
	var walk func(jobType, version string, depth int) error
	walk = func(jobType, version string, depth int) error {
		if depth > MaxInheritDepth {
			return fmt.Errorf("job template %s@%s: inherit_from chain deeper than %d", jobType, version, MaxInheritDepth)
		}
		k := jobType + "@" + version
		if visiting[k] {
			return fmt.Errorf("job template %s: inherit_from cycle", k)
		}
		t, err := get(jobType, version)
		if err != nil || t == nil {
			return err
		}
		if t.StepType != stepType {
			return fmt.Errorf("job template %s is for %s steps, not %s", k, t.StepType, stepType)
		}
		visiting[k] = true
		for _, parent := range slices.Sorted(maps.Keys(t.InheritFrom)) {
			pv := t.InheritFrom[parent]
			if pv == "" {
				pv = model.DefaultJobTemplateVersion
			}
			if err := walk(parent, pv, depth+1); err != nil {
				return err
			}
		}
		delete(visiting, k)
		out = append(out, t)
		return nil
	}
	if err := walk(jobType, version, 0); err != nil {
		return nil, err
	}
	return out, nil
}

// Merge returns the step's params with the templates' (ancestors first)
// merged in. The step's params are not modified. An error names the param
// (its path, "notebook.input_path") and the rule.
func Merge(chain []*model.JobTemplateDefinition, step engine.Values) (engine.Values, error) {
	if len(chain) == 0 {
		return step, nil
	}
	// The templates' params by name, a later template's over an earlier's
	// (Maestro: the last definition of a name wins).
	defs := map[string]*model.ParamDefinition{}
	var names []string
	for _, t := range chain {
		for _, name := range t.Params.OrderedNames() {
			if _, ok := defs[name]; !ok {
				names = append(names, name)
			}
			defs[name] = t.Params.Defs[name]
		}
	}
	out := maps.Clone(step)
	if out == nil {
		out = engine.Values{}
	}
	for _, name := range names {
		v, keep, err := mergeParam(name, defs[name], step[name], hasKey(step, name))
		if err != nil {
			return nil, err
		}
		if keep {
			out[name] = v
		} else {
			delete(out, name)
		}
	}
	return out, nil
}

func hasKey[V any](m map[string]V, k string) bool {
	_, ok := m[k]
	return ok
}

// mergeParam merges a template param (def) at path with the step's value
// (set says the step has one); keep is false when the param is left out.
func mergeParam(path string, def *model.ParamDefinition, stepValue any, set bool) (any, bool, error) {
	mode, err := model.ParamInternalMode(def)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", path, err)
	}
	if set && mode == model.InternalReserved {
		return nil, false, fmt.Errorf("%s: RESERVED by the job template: the step may not set it", path)
	}
	if set && def.Type == model.TypeMap {
		sm, ok := stepValue.(map[string]any)
		if !ok {
			return nil, false, fmt.Errorf("%s: the job template makes it a MAP; the step's is %s", path, typeName(stepValue))
		}
		tm, _ := def.Value.(map[string]*model.ParamDefinition)
		out := maps.Clone(sm)
		for _, k := range model.MapKeys(def.Keys, tm) {
			v, keep, err := mergeParam(path+"."+k, tm[k], sm[k], hasKey(sm, k))
			if err != nil {
				return nil, false, err
			}
			if keep {
				out[k] = v
			} else {
				delete(out, k)
			}
		}
		return out, true, nil
	}
	if set {
		if t, err := engine.TypeOf(stepValue); err == nil && t != def.Type && !compatible(def.Type, t) {
			return nil, false, fmt.Errorf("%s: the job template makes it %s; the step's is %s", path, def.Type, t)
		}
		return stepValue, true, nil
	}
	if !def.HasValue {
		if mode == model.InternalOptional {
			return nil, false, nil
		}
		what := mode
		if what == "" {
			what = "without an internal mode, so required"
		}
		return nil, false, fmt.Errorf("%s: a required parameter (job template: %s) has no value: set it in the step's params", path, what)
	}
	v, err := literal(path, def)
	return v, err == nil, err
}

// compatible reports whether a step value of type got may stand for a
// template param of type want (a whole number for a DOUBLE).
func compatible(want, got model.ParamType) bool {
	return want == model.TypeDouble && got == model.TypeLong
}

func typeName(v any) string {
	if t, err := engine.TypeOf(v); err == nil {
		return string(t)
	}
	return fmt.Sprintf("%T", v)
}

// literal returns a template param's value in the form of evaluated
// params: a MAP's fields evaluated the same way (OPTIONAL fields without a
// value left out, others required), "$$" read as "$".
func literal(path string, def *model.ParamDefinition) (any, error) {
	switch def.Type {
	case model.TypeMap:
		m, _ := def.Value.(map[string]*model.ParamDefinition)
		out := make(map[string]any, len(m))
		for _, k := range model.MapKeys(def.Keys, m) {
			v, keep, err := mergeParam(path+"."+k, m[k], nil, false)
			if err != nil {
				return nil, err
			}
			if keep {
				out[k] = v
			}
		}
		return out, nil
	case model.TypeString:
		s, _ := def.Value.(string)
		return Interpolate(path, s)
	}
	return engine.Normalize(def.Value)
}

// Interpolate reads a template's string literal: "$$" is a "$"; a
// reference to a param ("$name", "${name}") is an error, since a
// template's literal is not evaluated against the step's params.
func Interpolate(path, s string) (string, error) {
	if refs := expression.InterpolationRefs(s); len(refs) > 0 {
		return "", fmt.Errorf("%s: a job template's literal cannot reference params (%s); write $$ for a literal $", path, strings.Join(refs, ", "))
	}
	return expression.Interpolate(s, func(string) (any, bool) { return nil, false })
}

// CheckLiterals reports the first string literal of a template that
// references a param (see Interpolate).
func CheckLiterals(def *model.JobTemplateDefinition) error {
	var walk func(path string, d *model.ParamDefinition) error
	walk = func(path string, d *model.ParamDefinition) error {
		switch v := d.Value.(type) {
		case string:
			_, err := Interpolate(path, v)
			return err
		case map[string]*model.ParamDefinition:
			for _, k := range model.MapKeys(d.Keys, v) {
				if err := walk(path+".value."+k, v[k]); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for _, name := range def.Params.OrderedNames() {
		if err := walk("definition.params."+name, def.Params.Defs[name]); err != nil {
			return err
		}
	}
	return nil
}
