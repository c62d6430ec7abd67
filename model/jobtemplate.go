package model

import (
	"encoding/json"
	"fmt"
	"strings"
)

// DefaultJobTemplateVersion is the version of a job template that names
// none, and the one a step uses when neither its sub_type_version nor the
// workflow's job_template_version param names another (Maestro's).
const DefaultJobTemplateVersion = "default"

// JobTemplateVersionParam is the workflow param that selects the version
// of the job templates its steps use (Maestro's job_template_version).
const JobTemplateVersionParam = "job_template_version"

// Internal param modes: how a job template's param merges with a step's
// (Maestro's InternalParamMode). REQUIRED, OPTIONAL and PROVIDED params
// may be set by the step; a RESERVED one may not. After the merge a
// non-OPTIONAL param must have a value; an OPTIONAL one without a value is
// left out.
const (
	InternalRequired = "REQUIRED"
	InternalOptional = "OPTIONAL"
	InternalProvided = "PROVIDED"
	InternalReserved = "RESERVED"
)

// InternalModeKey is the param definition member that holds an internal
// param mode (kept in ParamDefinition.Meta).
const InternalModeKey = "internal_mode"

// JobTemplate is a job template create request (Maestro's
// JobTemplateCreateRequest): who owns the template and its definition.
type JobTemplate struct {
	Owner         *User
	Status        string
	Support       string
	TestWorkflows []string
	GitInfo       RawJSON
	Definition    *JobTemplateDefinition
	// Extra holds the request's other members (Maestro's extra_info).
	Extra map[string]RawJSON
}

// JobTemplateDefinition is what a job template gives the steps of its
// (step type, job type): its params and tags.
type JobTemplateDefinition struct {
	// JobType is the sub_type of the steps the template applies to.
	JobType  string
	StepType StepType
	// Version is the template's version tag; DefaultJobTemplateVersion
	// when the request names none.
	Version     string
	Description string
	Tags        TagList
	// InheritFrom names templates (job type -> version) whose params this
	// one's extend.
	InheritFrom map[string]string
	Params      Params
}

// JobTemplateLimits bound a job template.
const (
	// MaxJobTemplateDescription is the longest description (Maestro's
	// FIELD_SIZE_LIMIT).
	MaxJobTemplateDescription = 16384
	// MaxJobTemplateDepth bounds MAP params nested in MAP params.
	MaxJobTemplateDepth = 8
)

// ParseJobTemplate decodes and checks a job template create request. Its
// errors carry JSON paths ("definition.params.script.internal_mode").
//
// A template's params are literals: a template merges into a step when
// the step starts, after the step's own params were evaluated, so an
// expression in a template is refused (the step's own params may hold
// one).
func ParseJobTemplate(data []byte) (*JobTemplate, error) {
	var jt *JobTemplate
	var verrs Errors
	err := decodeInto(data, func(d *decoder, n *node, root loc) {
		jt = d.jobTemplate(n, root)
		if jt != nil && len(d.errs.errs) == 0 {
			v := &validator{ids: map[string]loc{}}
			v.jobTemplate(jt, root)
			verrs = v.errs.errs
		}
	})
	if err != nil {
		return nil, err
	}
	if err := verrs.Err(); err != nil {
		return nil, err
	}
	return jt, nil
}

func (d *decoder) jobTemplate(n *node, p loc) *JobTemplate {
	if !d.object(n, p) {
		return nil
	}
	jt := &JobTemplate{}
	p = p.fix()
	seen := map[string]bool{}
	for _, m := range n.members {
		mp := p.key(m.key)
		seen[m.key] = true
		switch m.key {
		case "owner":
			jt.Owner = d.user(m.val, mp)
		case "status":
			jt.Status = d.str(m.val, mp)
		case "support":
			jt.Support = d.str(m.val, mp)
		case "test_workflows":
			jt.TestWorkflows = d.strList(m.val, mp)
		case "git_info":
			if !isNull(m.val) && d.object(m.val, mp) {
				jt.GitInfo = m.val.raw()
			}
		case "definition":
			jt.Definition = d.jobTemplateDefinition(m.val, mp)
		case "extra_info":
			d.fail(mp, "reserved: extra members go at the top level of the request")
		default:
			setExtra(&jt.Extra, m)
		}
	}
	for _, k := range []string{"owner", "status", "support", "definition"} {
		if !seen[k] {
			d.fail(p.key(k), "required")
		}
	}
	return jt
}

func (d *decoder) jobTemplateDefinition(n *node, p loc) *JobTemplateDefinition {
	if !d.object(n, p) {
		return nil
	}
	def := &JobTemplateDefinition{}
	p = p.fix()
	sawStepType := false
	for _, m := range n.members {
		mp := p.key(m.key)
		switch m.key {
		case "job_type":
			def.JobType = d.str(m.val, mp)
		case "step_type":
			name := d.str(m.val, mp)
			sawStepType = name != ""
			var ok bool
			if def.StepType, ok = ParseStepType(name); !ok && name != "" {
				d.failf(mp, "unknown step type %q (want one of NoOp, Sleep, Notebook, Kubernetes, Http, Lambda, Callback, Ecs, Batch)", name)
			}
		case "version":
			def.Version = d.str(m.val, mp)
		case "description":
			def.Description = d.str(m.val, mp)
		case "tags":
			def.Tags = d.tags(m.val, mp)
		case "inherit_from":
			if isNull(m.val) || !d.object(m.val, mp) {
				continue
			}
			def.InheritFrom = map[string]string{}
			for _, e := range m.val.members {
				def.InheritFrom[e.key] = d.str(e.val, mp.key(e.key))
			}
		case "params":
			def.Params = d.params(m.val, mp)
		default:
			d.failf(mp, "unknown field of a job template definition (want job_type, step_type, version, description, tags, inherit_from, params)")
		}
	}
	if !sawStepType {
		d.fail(p.key("step_type"), "required")
	}
	if def.Version == "" {
		def.Version = DefaultJobTemplateVersion
	}
	return def
}

// jobTemplate checks a decoded job template.
func (v *validator) jobTemplate(jt *JobTemplate, p loc) {
	p = p.fix()
	if jt.Owner == nil || jt.Owner.Name == "" {
		v.fail(p.key("owner"), "required: the template's owner")
	}
	if jt.Status == "" {
		v.fail(p.key("status"), "required")
	}
	if jt.Support == "" {
		v.fail(p.key("support"), "required")
	}
	def := jt.Definition
	if def == nil {
		return
	}
	dp := p.key("definition").fix()
	if def.JobType == "" {
		v.fail(dp.key("job_type"), "required: the sub_type of the steps the template applies to")
	} else {
		v.name(def.JobType, dp.key("job_type"), "job type")
	}
	v.name(def.Version, dp.key("version"), "job template version")
	if def.StepType == StepJoin {
		v.fail(dp.key("step_type"), "a Join step runs no job: no template applies to it")
	}
	v.maxLen(def.Description, MaxJobTemplateDescription, dp.key("description"), "description")
	v.tags(def.Tags, dp.key("tags"))
	for jobType, version := range def.InheritFrom {
		ip := dp.key("inherit_from").key(jobType)
		v.name(jobType, ip, "job type")
		if version != "" {
			v.name(version, ip, "job template version")
		}
		if jobType == def.JobType && (version == def.Version || version == "") {
			v.fail(ip, "a job template cannot inherit from itself")
		}
	}
	pp := dp.key("params").fix()
	for _, name := range def.Params.OrderedNames() {
		v.paramName(name, pp.key(name))
		v.templateParam(def.Params.Defs[name], pp.key(name), 1)
	}
}

// templateParam checks one param of a job template: a known type and
// internal mode, a literal value (or none), no expression.
func (v *validator) templateParam(def *ParamDefinition, p loc, depth int) {
	p = p.fix()
	if depth > MaxJobTemplateDepth {
		v.failf(p, "MAP params nest more than %d deep", MaxJobTemplateDepth)
		return
	}
	if !def.Type.Valid() {
		v.failf(p.key("type"), "unknown param type %q", def.Type)
		return
	}
	if def.Mode != "" && !oneOf(def.Mode, ModeConstant, ModeImmutable, ModeMutable, ModeMutableOnStart, ModeMutableOnStartRestart) {
		v.failf(p.key("mode"), "unknown param mode %q (want CONSTANT, IMMUTABLE, MUTABLE, MUTABLE_ON_START or MUTABLE_ON_START_RESTART)", def.Mode)
	}
	if _, err := ParamInternalMode(def); err != nil {
		v.fail(p.key(InternalModeKey), err.Error())
	}
	if def.Expression != "" {
		v.fail(p.key("expression"), "a job template's params are literals: it merges into a step after the step's params were evaluated (put the expression in the step's own params)")
	}
	if !def.HasValue {
		return
	}
	if def.Type != TypeMap {
		v.literal(def, p.key("value"), Scope{})
		return
	}
	m, ok := def.Value.(map[string]*ParamDefinition)
	if !ok {
		v.failf(p.key("value"), "MAP value must be an object of param definitions, got %s", describe(def.Value))
		return
	}
	vp := p.key("value").fix()
	for _, k := range MapKeys(def.Keys, m) {
		if m[k] == nil {
			v.fail(vp.key(k), "must be a param definition, got null")
			continue
		}
		v.templateParam(m[k], vp.key(k), depth+1)
	}
}

// ParamInternalMode returns the internal mode of a param definition
// (upper case; "" when it has none), or an error naming the modes when its
// internal_mode is not one.
func ParamInternalMode(def *ParamDefinition) (string, error) {
	raw, ok := def.Meta[InternalModeKey]
	if !ok {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("must be a string: one of REQUIRED, OPTIONAL, PROVIDED, RESERVED")
	}
	mode := strings.ToUpper(s)
	switch mode {
	case InternalRequired, InternalOptional, InternalProvided, InternalReserved:
		return mode, nil
	}
	return "", fmt.Errorf("unknown internal mode %q (want REQUIRED, OPTIONAL, PROVIDED or RESERVED)", s)
}
