package model

// ParsableDuration is Maestro's ParsableLong for timeouts: a number of seconds,
// a duration string ("100s", "20 minutes", "1d 2h") or an interpolated string
// ("${p}", "${bar}s") resolved at run time.
type ParsableDuration struct {
	// Seconds is the value when it is known without evaluation.
	Seconds int64
	// Expr is the unresolved string form, empty when Seconds is final.
	Expr string
	// Raw is the JSON text as read when Seconds alone would not write it back
	// ("100s", "3600"); encoding uses it while it still decodes to Seconds.
	Raw RawJSON
}

// ParsableLong is a number, or a "$param"/"${param}" string resolved at run time
// (retry limits and backoff fields).
type ParsableLong struct {
	// Value is the number when it is known without evaluation.
	Value int64
	// Expr is the unresolved string form, empty when Value is final.
	Expr string
	// Raw is the JSON text as read when Value alone would not write it back
	// ("3", "1 min 40 s"); encoding uses it while it still decodes to Value.
	Raw RawJSON
}

// BackoffType selects how retry delays grow.
type BackoffType string

// Backoff types.
const (
	ExponentialBackoff BackoffType = "EXPONENTIAL_BACKOFF"
	FixedBackoff       BackoffType = "FIXED_BACKOFF"
)

// RetryPolicy of a typed step; nil fields take Maestro's defaults.
type RetryPolicy struct {
	ErrorRetryLimit    *ParsableLong
	PlatformRetryLimit *ParsableLong
	TimeoutRetryLimit  *ParsableLong
	Backoff            *Backoff
	// Extra holds unmodelled keys, kept for the round trip.
	Extra map[string]RawJSON
}

// Backoff configures retry delays; which fields apply depends on Type.
type Backoff struct {
	Type BackoffType

	ErrorRetryBackoffInSecs    *ParsableLong
	ErrorRetryExponent         *ParsableLong
	ErrorRetryLimitInSecs      *ParsableLong
	PlatformRetryBackoffInSecs *ParsableLong
	PlatformRetryExponent      *ParsableLong
	PlatformRetryLimitInSecs   *ParsableLong
	TimeoutRetryBackoffInSecs  *ParsableLong
	TimeoutRetryExponent       *ParsableLong
	TimeoutRetryLimitInSecs    *ParsableLong

	// Extra holds unmodelled keys, kept for the round trip.
	Extra map[string]RawJSON
}

// TimeTriggerType names a time trigger's form.
type TimeTriggerType string

// Time trigger types; INTERVAL is modelled but rejected by validation, as in Maestro.
const (
	TriggerCron       TimeTriggerType = "CRON"
	TriggerPredefined TimeTriggerType = "PREDEFINED"
	TriggerInterval   TimeTriggerType = "INTERVAL"
)

// TimeTrigger starts a workflow on a schedule.
type TimeTrigger struct {
	Type          TimeTriggerType
	Cron          string // CRON
	Expression    string // PREDEFINED: @hourly, @daily, @weekly, @monthly, @yearly
	Interval      string // INTERVAL (unsupported)
	Start         string // INTERVAL (unsupported)
	Timezone      string // empty = UTC
	FuzzyMaxDelay *ParsableDuration
	Extra         map[string]RawJSON
}

// SignalTrigger starts a workflow when signals matching all its definitions exist.
type SignalTrigger struct {
	// Names lists the signal names in definition order; Definitions is keyed by them.
	Names       []string
	Definitions map[string]*SignalTriggerDef
	Condition   string
	DedupExpr   string
	Params      Params
	Extra       map[string]RawJSON
}

// SignalTriggerDef matches one signal name of a trigger.
type SignalTriggerDef struct {
	MatchParams map[string]*SignalMatchParam
	// MatchNames keeps MatchParams' keys in definition order.
	MatchNames []string
	JoinKeys   []string
	// Extra holds unmodelled keys, kept for the round trip.
	Extra map[string]RawJSON
}

// SignalOperator compares a signal param with a match value.
type SignalOperator string

// Signal match operators.
const (
	OpEqual        SignalOperator = "="
	OpGreater      SignalOperator = ">"
	OpGreaterEqual SignalOperator = ">="
	OpLess         SignalOperator = "<"
	OpLessEqual    SignalOperator = "<="
)

// SignalMatchParam is one match condition. In triggers the value is a literal
// (Value); in step dependencies it is a param definition (Param).
type SignalMatchParam struct {
	Value    any
	Param    *ParamDefinition
	Operator SignalOperator
	// Extra holds unmodelled keys, kept for the round trip.
	Extra map[string]RawJSON
}

// SignalDependency gates a step until a matching signal exists.
type SignalDependency struct {
	Name        string
	MatchParams map[string]*SignalMatchParam
	MatchNames  []string
	Extra       map[string]RawJSON
}

// SignalOutput is a signal a step announces when it succeeds.
type SignalOutput struct {
	Name    string
	Params  Params
	Payload Params
	Extra   map[string]RawJSON
}
