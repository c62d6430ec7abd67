package model

import (
	"slices"
	"strings"
)

// Maestro reads enum values and polymorphic type names case-insensitively
// ("lonG", "noop", "fail_after_running"). Decoding canonicalises every known
// value to Maestro's spelling and keeps an unknown one verbatim, so that
// validation can report it with its path.

// Criticality levels of a workflow.
const (
	CriticalityCritical Criticality = "CRITICAL"
	CriticalityHigh     Criticality = "HIGH"
	CriticalityMedium   Criticality = "MEDIUM"
	CriticalityLow      Criticality = "LOW"
)

// Tag namespaces.
const (
	NamespaceSystem           = "SYSTEM"
	NamespaceRuntime          = "RUNTIME"
	NamespaceJobTemplate      = "JOB_TEMPLATE"
	NamespaceNotebookTemplate = "NOTEBOOK_TEMPLATE"
	NamespaceUserDefined      = "USER_DEFINED"
	NamespacePlatform         = "PLATFORM"
)

// canonical returns the element of known equal to s under Unicode case
// folding, or s and false when there is none.
func canonical[T ~string](s string, known ...T) (T, bool) {
	for _, k := range known {
		if strings.EqualFold(string(k), s) {
			return k, true
		}
	}
	return T(s), false
}

// ParseParamType returns the canonical parameter type for s, matched
// case-insensitively ("string_array" -> STRING_ARRAY).
func ParseParamType(s string) (ParamType, bool) {
	return canonical(s, ParamTypes...)
}

// ParseParamMode returns the canonical parameter mode for s.
func ParseParamMode(s string) (ParamMode, bool) {
	return canonical(s, ModeConstant, ModeImmutable, ModeMutable, ModeMutableOnStart, ModeMutableOnStartRestart)
}

// ParseStepType returns the canonical step type for s ("noop" -> NoOp).
func ParseStepType(s string) (StepType, bool) {
	return canonical(s, StepNoOp, StepSleep, StepTitus, StepNotebook, StepKubernetes, StepHTTP, StepJoin, StepLambda, StepCallback, StepECS, StepBatch)
}

// ParseFailureMode returns the canonical failure mode for s.
func ParseFailureMode(s string) (FailureMode, bool) {
	return canonical(s, FailImmediately, FailAfterRunning, IgnoreFailure)
}

// ParseRunStrategyRule returns the canonical run strategy rule for s.
func ParseRunStrategyRule(s string) (RunStrategyRule, bool) {
	return canonical(s, RunSequential, RunStrictSequential, RunFirstOnly, RunLastOnly, RunParallel, RunSerialLatestOnly)
}

// ParseCriticality returns the canonical criticality for s.
func ParseCriticality(s string) (Criticality, bool) {
	return canonical(s, CriticalityCritical, CriticalityHigh, CriticalityMedium, CriticalityLow)
}

// ParseBackoffType returns the canonical backoff type for s.
func ParseBackoffType(s string) (BackoffType, bool) {
	return canonical(s, ExponentialBackoff, FixedBackoff)
}

// ParseTimeTriggerType returns the canonical time trigger type for s.
func ParseTimeTriggerType(s string) (TimeTriggerType, bool) {
	return canonical(s, TriggerCron, TriggerPredefined, TriggerInterval)
}

// ParseTagNamespace returns the canonical tag namespace for s.
func ParseTagNamespace(s string) (string, bool) {
	return canonical(s, NamespaceSystem, NamespaceRuntime, NamespaceJobTemplate,
		NamespaceNotebookTemplate, NamespaceUserDefined, NamespacePlatform)
}

// ParseStepKind returns the step kind for a wrapper key, matched case-insensitively.
func ParseStepKind(s string) (StepKind, bool) {
	return canonical(s, KindStep, KindSubworkflow, KindForeach, KindWhile, KindTemplate)
}

// validSignalOperator reports whether op is one of the five match operators.
func validSignalOperator(op SignalOperator) bool {
	switch op {
	case OpEqual, OpGreater, OpGreaterEqual, OpLess, OpLessEqual:
		return true
	}
	return false
}

// IsRange reports whether op is a range operator (>, >=, <, <=).
func (op SignalOperator) IsRange() bool {
	switch op {
	case OpGreater, OpGreaterEqual, OpLess, OpLessEqual:
		return true
	}
	return false
}

// IsArray reports whether t is one of the four *_ARRAY types.
func (t ParamType) IsArray() bool {
	switch t {
	case TypeStringArray, TypeLongArray, TypeDoubleArray, TypeBooleanArray:
		return true
	}
	return false
}

// IsScalar reports whether t is STRING, LONG, DOUBLE or BOOLEAN.
func (t ParamType) IsScalar() bool {
	switch t {
	case TypeString, TypeLong, TypeDouble, TypeBoolean:
		return true
	}
	return false
}

// Valid reports whether t is one of the ten parameter types.
func (t ParamType) Valid() bool {
	return slices.Contains(ParamTypes, t)
}

// IsLeaf reports whether steps of this type run a job. Join is the one typed
// step that is not a leaf.
func (t StepType) IsLeaf() bool { return t != StepJoin }
