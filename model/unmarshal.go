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

// unmarshalPtr decodes data into *dst with decode, which gives nil when
// it cannot (dst is then left unchanged).
func unmarshalPtr[T any](data []byte, dst *T, decode func(*decoder, *node, loc) *T) error {
	return unmarshalPart(data, func(d *decoder, n *node, root loc) {
		if v := decode(d, n, root); v != nil {
			*dst = *v
		}
	})
}

// unmarshalOK decodes data into *dst with decode, which reports whether it
// could (dst is left unchanged when not).
func unmarshalOK[T any](data []byte, dst *T, decode func(*decoder, *node, loc) (T, bool)) error {
	return unmarshalPart(data, func(d *decoder, n *node, root loc) {
		if v, ok := decode(d, n, root); ok {
			*dst = v
		}
	})
}

// unmarshalValue decodes data into *dst with decode.
func unmarshalValue[T any](data []byte, dst *T, decode func(*decoder, *node, loc) T) error {
	return unmarshalPart(data, func(d *decoder, n *node, root loc) {
		*dst = decode(d, n, root)
	})
}

// UnmarshalJSON decodes the properties object.
func (p *Properties) UnmarshalJSON(data []byte) error {
	return unmarshalPtr(data, p, (*decoder).properties)
}

// UnmarshalJSON decodes an owner name or object.
func (u *User) UnmarshalJSON(data []byte) error {
	return unmarshalPtr(data, u, (*decoder).user)
}

// UnmarshalJSON decodes any of the three run strategy forms.
func (r *RunStrategy) UnmarshalJSON(data []byte) error {
	return unmarshalPtr(data, r, (*decoder).runStrategy)
}

// UnmarshalJSON decodes a tag name or tag object.
func (t *Tag) UnmarshalJSON(data []byte) error {
	return unmarshalOK(data, t, (*decoder).tag)
}

// UnmarshalJSON decodes the workflow object.
func (w *Workflow) UnmarshalJSON(data []byte) error {
	return unmarshalPtr(data, w, (*decoder).workflow)
}

// UnmarshalJSON decodes a name -> param definition object, keeping its order.
func (ps *Params) UnmarshalJSON(data []byte) error {
	return unmarshalValue(data, ps, (*decoder).params)
}

// UnmarshalJSON decodes one parameter definition.
func (p *ParamDefinition) UnmarshalJSON(data []byte) error {
	return unmarshalPtr(data, p, (*decoder).paramDef)
}

// UnmarshalJSON decodes seconds, a duration string or a "$param" string.
func (p *ParsableDuration) UnmarshalJSON(data []byte) error {
	return unmarshalPtr(data, p, (*decoder).duration)
}

// UnmarshalJSON decodes a number, a numeric or duration string, or a "$param" string.
func (p *ParsableLong) UnmarshalJSON(data []byte) error {
	return unmarshalPtr(data, p, (*decoder).long)
}

// UnmarshalJSON decodes a time trigger.
func (t *TimeTrigger) UnmarshalJSON(data []byte) error {
	return unmarshalOK(data, t, (*decoder).timeTrigger)
}

// UnmarshalJSON decodes a signal trigger.
func (t *SignalTrigger) UnmarshalJSON(data []byte) error {
	return unmarshalOK(data, t, (*decoder).signalTrigger)
}

// UnmarshalJSON decodes a step wrapper {"<kind>": {...}}.
func (s *Step) UnmarshalJSON(data []byte) error {
	return unmarshalOK(data, s, (*decoder).stepWrapper)
}

// UnmarshalJSON decodes a transition object.
func (t *Transition) UnmarshalJSON(data []byte) error {
	return unmarshalValue(data, t, (*decoder).transition)
}

// UnmarshalJSON decodes a retry policy.
func (r *RetryPolicy) UnmarshalJSON(data []byte) error {
	return unmarshalPtr(data, r, (*decoder).retryPolicy)
}

// UnmarshalJSON decodes a retry backoff.
func (b *Backoff) UnmarshalJSON(data []byte) error {
	return unmarshalPtr(data, b, (*decoder).backoff)
}

// UnmarshalJSON decodes a step's signal dependency.
func (s *SignalDependency) UnmarshalJSON(data []byte) error {
	return unmarshalOK(data, s, (*decoder).signalDependency)
}

// UnmarshalJSON decodes a step's signal output.
func (s *SignalOutput) UnmarshalJSON(data []byte) error {
	return unmarshalOK(data, s, (*decoder).signalOutput)
}
