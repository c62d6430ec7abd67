package model

// SystemParams returns the params Maestro defines for every workflow and step
// (its default params plus the instance-level ones), which expressions may
// name without defining them. A type of "" means the type is only known at
// run time. Each call returns a new map.
func SystemParams() map[string]ParamType {
	return map[string]ParamType{
		// Workflow default params.
		"RUN_TS":                      TypeLong,
		"TARGET_RUN_DATE":             TypeLong,
		"TARGET_RUN_HOUR":             TypeString,
		"DSL_DEFAULT_TZ":              TypeString,
		"WORKFLOW_CRON_TIMEZONE":      TypeString,
		"DERIVED_RUN_TS":              TypeLong,
		"DERIVED_RUN_DATE_UTC":        TypeLong,
		"DERIVED_RUN_DATE_US_PACIFIC": TypeLong,
		"DERIVED_RUN_HOUR_UTC":        "",
		"DERIVED_RUN_HOUR_US_PACIFIC": "",
		// The minus/plus variants, as Maestro's default params.
		"DERIVED_RUN_DATE_US_PACIFIC_MINUS_ONE": TypeLong,
		"DERIVED_RUN_DATE_UTC_MINUS_ONE":        TypeLong,
		"DERIVED_RUN_DATE_UTC_PLUS_ONE":         TypeLong,
		"DERIVED_RUN_DATE_UTC_MINUS_ONE_HOUR":   TypeLong,
		"DERIVED_RUN_DATE_UTC_PLUS_ONE_HOUR":    TypeLong,
		"DERIVED_RUN_HOUR_UTC_MINUS_ONE_HOUR":   "",
		"DERIVED_RUN_HOUR_UTC_PLUS_ONE_HOUR":    "",
		"RUN_DATE":                              TypeLong,
		"LOCAL_RUN_DATE":                        TypeLong,
		"owner":                                 TypeString,
		"workflow_id":                           TypeString,
		"job_template_version":                  TypeString,
		// Instance-level params.
		"RUN_POLICY":                  TypeString,
		"INITIATOR_TYPE":              TypeString,
		"INITIATOR_TIMEZONE":          TypeString,
		"FIRST_TIME_TRIGGER_TIMEZONE": TypeString,
		"INITIATOR_RUNNER_NAME":       TypeString,
		// Step default params.
		"workflow_instance_id": TypeLong,
		"step_instance_uuid":   TypeString,
		"step_attempt_id":      TypeLong,
		"step_id":              TypeString,
	}
}

// kindParams returns the params Maestro adds to every step of a kind.
func kindParams(k StepKind) map[string]ParamType {
	switch k {
	case KindForeach:
		return map[string]ParamType{"loop_params": TypeMap, "loop_index": TypeLong}
	case KindWhile:
		return map[string]ParamType{"loop_params": TypeMap, "loop_index": TypeLong, "condition": TypeBoolean}
	case KindSubworkflow:
		return map[string]ParamType{"subworkflow_id": TypeString, "subworkflow_version": TypeString}
	}
	return nil
}

// elementType returns the element type of an array type, or "" when t is
// not an array type.
func elementType(t ParamType) ParamType {
	switch t {
	case TypeStringArray:
		return TypeString
	case TypeLongArray:
		return TypeLong
	case TypeDoubleArray:
		return TypeDouble
	case TypeBooleanArray:
		return TypeBoolean
	}
	return ""
}

// newScope returns a scope holding every variable of the given maps; later
// maps win on name clashes.
func newScope(parts ...map[string]ParamType) Scope {
	return Scope{Outer: parts}
}

// flatten merges maps into one; later maps win.
func flatten(parts ...map[string]ParamType) map[string]ParamType {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	vars := make(map[string]ParamType, n)
	for _, p := range parts {
		for k, t := range p {
			vars[k] = t
		}
	}
	return vars
}

// paramTypes returns name -> type for a param set.
func paramTypes(ps *Params) map[string]ParamType {
	out := make(map[string]ParamType, len(ps.Defs))
	for name, def := range ps.Defs {
		if def != nil {
			out[name] = def.Type
		}
	}
	return out
}
