package model

// UnmarshalJSON methods for the parts of a definition. Each decodes like the
// corresponding part of ParseDefinition and reports shape errors as Errors
// with paths relative to the value. JSON null leaves the receiver unchanged.

// unmarshalPart decodes data with fn unless it is JSON null.
func unmarshalPart(data []byte, fn func(d *decoder, n *node, root loc)) error {
	return decodeInto(data, func(d *decoder, n *node, root loc) {
		if n.kind != kindNull {
			fn(d, n, root)
		}
	})
}

// UnmarshalJSON decodes the properties object.
func (p *Properties) UnmarshalJSON(data []byte) error {
	return unmarshalPart(data, func(d *decoder, n *node, root loc) {
		if v := d.properties(n, root); v != nil {
			*p = *v
		}
	})
}

// UnmarshalJSON decodes an owner name or object.
func (u *User) UnmarshalJSON(data []byte) error {
	return unmarshalPart(data, func(d *decoder, n *node, root loc) {
		if v := d.user(n, root); v != nil {
			*u = *v
		}
	})
}

// UnmarshalJSON decodes any of the three run strategy forms.
func (r *RunStrategy) UnmarshalJSON(data []byte) error {
	return unmarshalPart(data, func(d *decoder, n *node, root loc) {
		if v := d.runStrategy(n, root); v != nil {
			*r = *v
		}
	})
}

// UnmarshalJSON decodes a tag name or tag object.
func (t *Tag) UnmarshalJSON(data []byte) error {
	return unmarshalPart(data, func(d *decoder, n *node, root loc) {
		if v, ok := d.tag(n, root); ok {
			*t = v
		}
	})
}

// UnmarshalJSON decodes the workflow object.
func (w *Workflow) UnmarshalJSON(data []byte) error {
	return unmarshalPart(data, func(d *decoder, n *node, root loc) {
		if v := d.workflow(n, root); v != nil {
			*w = *v
		}
	})
}

// UnmarshalJSON decodes a name -> param definition object, keeping its order.
func (ps *Params) UnmarshalJSON(data []byte) error {
	return unmarshalPart(data, func(d *decoder, n *node, root loc) {
		*ps = d.params(n, root)
	})
}

// UnmarshalJSON decodes one parameter definition.
func (p *ParamDefinition) UnmarshalJSON(data []byte) error {
	return unmarshalPart(data, func(d *decoder, n *node, root loc) {
		if v := d.paramDef(n, root); v != nil {
			*p = *v
		}
	})
}

// UnmarshalJSON decodes seconds, a duration string or a "$param" string.
func (p *ParsableDuration) UnmarshalJSON(data []byte) error {
	return unmarshalPart(data, func(d *decoder, n *node, root loc) {
		if v := d.duration(n, root); v != nil {
			*p = *v
		}
	})
}

// UnmarshalJSON decodes a number, a numeric or duration string, or a "$param" string.
func (p *ParsableLong) UnmarshalJSON(data []byte) error {
	return unmarshalPart(data, func(d *decoder, n *node, root loc) {
		if v := d.long(n, root); v != nil {
			*p = *v
		}
	})
}

// UnmarshalJSON decodes a time trigger.
func (t *TimeTrigger) UnmarshalJSON(data []byte) error {
	return unmarshalPart(data, func(d *decoder, n *node, root loc) {
		if v, ok := d.timeTrigger(n, root); ok {
			*t = v
		}
	})
}

// UnmarshalJSON decodes a signal trigger.
func (t *SignalTrigger) UnmarshalJSON(data []byte) error {
	return unmarshalPart(data, func(d *decoder, n *node, root loc) {
		if v, ok := d.signalTrigger(n, root); ok {
			*t = v
		}
	})
}

// UnmarshalJSON decodes a step wrapper {"<kind>": {...}}.
func (s *Step) UnmarshalJSON(data []byte) error {
	return unmarshalPart(data, func(d *decoder, n *node, root loc) {
		if v, ok := d.stepWrapper(n, root); ok {
			*s = v
		}
	})
}

// UnmarshalJSON decodes a transition object.
func (t *Transition) UnmarshalJSON(data []byte) error {
	return unmarshalPart(data, func(d *decoder, n *node, root loc) {
		*t = d.transition(n, root)
	})
}

// UnmarshalJSON decodes a retry policy.
func (r *RetryPolicy) UnmarshalJSON(data []byte) error {
	return unmarshalPart(data, func(d *decoder, n *node, root loc) {
		if v := d.retryPolicy(n, root); v != nil {
			*r = *v
		}
	})
}

// UnmarshalJSON decodes a retry backoff.
func (b *Backoff) UnmarshalJSON(data []byte) error {
	return unmarshalPart(data, func(d *decoder, n *node, root loc) {
		if v := d.backoff(n, root); v != nil {
			*b = *v
		}
	})
}

// UnmarshalJSON decodes a step's signal dependency.
func (s *SignalDependency) UnmarshalJSON(data []byte) error {
	return unmarshalPart(data, func(d *decoder, n *node, root loc) {
		if v, ok := d.signalDependency(n, root); ok {
			*s = v
		}
	})
}

// UnmarshalJSON decodes a step's signal output.
func (s *SignalOutput) UnmarshalJSON(data []byte) error {
	return unmarshalPart(data, func(d *decoder, n *node, root loc) {
		if v, ok := d.signalOutput(n, root); ok {
			*s = v
		}
	})
}
