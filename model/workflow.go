package model

// Definition is a workflow definition as pushed (Maestro's WorkflowCreateRequest)
// or as stored (WorkflowDefinition, whose properties key is "properties_snapshot").
type Definition struct {
	Properties *Properties
	Workflow   *Workflow
	// PropertiesSnapshot is true when the properties were read from the stored
	// WorkflowDefinition key "properties_snapshot" rather than the create
	// request's "properties"; encoding writes them back under the same key.
	PropertiesSnapshot bool
	// IsActive is the is_active flag; nil means the default, true.
	IsActive *bool
	GitInfo  map[string]RawJSON
	// Extra holds every other top-level key (metadata, source, dsl_* ...), verbatim.
	Extra map[string]RawJSON
}

// Properties are the workflow-level settings versioned apart from the definition.
type Properties struct {
	Owner                 *User
	AccessControl         RawJSON
	RunStrategy           *RunStrategy
	StepConcurrency       *int64
	Alerting              RawJSON
	AlertingDisabled      *bool
	SignalTriggerDisabled *bool
	TimeTriggerDisabled   *bool
	Description           string
	Tags                  TagList
	Extra                 map[string]RawJSON
}

// User is an owner: a bare name in JSON, or an object {"name", ...}.
type User struct {
	Name  string
	Plain bool
	Extra map[string]RawJSON
}

// RunStrategyRule names how new instances of a workflow are admitted.
type RunStrategyRule string

// Run strategy rules.
const (
	RunSequential       RunStrategyRule = "SEQUENTIAL"
	RunStrictSequential RunStrategyRule = "STRICT_SEQUENTIAL"
	RunFirstOnly        RunStrategyRule = "FIRST_ONLY"
	RunLastOnly         RunStrategyRule = "LAST_ONLY"
	RunParallel         RunStrategyRule = "PARALLEL"
	RunSerialLatestOnly RunStrategyRule = "SERIAL_LATEST_ONLY"
)

// RunStrategy is a rule and its concurrency. JSON accepts "rule", a number N
// (PARALLEL with concurrency N) or {"rule", "workflow_concurrency"}.
type RunStrategy struct {
	Rule                RunStrategyRule
	WorkflowConcurrency int64 // 0 means the rule's default (PARALLEL 20, others 1)
	// Shape records which JSON form was read ("string", "number", "object").
	Shape string
	// Extra holds unmodelled keys of the object form, kept for the round trip.
	Extra map[string]RawJSON
}

// Criticality of a workflow.
type Criticality string

// Workflow is the DAG definition itself.
type Workflow struct {
	ID                      string
	Name                    string
	Description             string
	Tags                    TagList
	Timeout                 *ParsableDuration
	TimeTriggers            []TimeTrigger
	SignalTriggers          []SignalTrigger
	Criticality             Criticality
	InstanceStepConcurrency *int64
	Params                  Params
	Steps                   []Step
	Extra                   map[string]RawJSON
}

// Params is an ordered set of named parameter definitions; order is the
// definition's, so evaluation and output are deterministic.
type Params struct {
	Names []string
	Defs  map[string]*ParamDefinition
}

// Merged returns p's definitions overridden by over's, by name: p's names
// in order, then over's new names in order. Neither is modified.
func (p Params) Merged(over Params) Params {
	switch {
	case len(over.Names) == 0:
		return p
	case len(p.Names) == 0:
		return over
	}
	out := Params{
		Names: make([]string, 0, len(p.Names)+len(over.Names)),
		Defs:  make(map[string]*ParamDefinition, len(p.Names)+len(over.Names)),
	}
	for _, n := range p.Names {
		out.Names = append(out.Names, n)
		out.Defs[n] = p.Defs[n]
	}
	for _, n := range over.Names {
		if _, ok := out.Defs[n]; !ok {
			out.Names = append(out.Names, n)
		}
		out.Defs[n] = over.Defs[n]
	}
	return out
}

// StepKind is the wrapper key of a step in JSON.
type StepKind string

// Step kinds.
const (
	KindStep        StepKind = "step"
	KindSubworkflow StepKind = "subworkflow"
	KindForeach     StepKind = "foreach"
	KindWhile       StepKind = "while"
	KindTemplate    StepKind = "template"
)

// StepType is the type of a typed ("step") step.
type StepType string

// Step types; names are case-insensitive in JSON.
const (
	StepNoOp       StepType = "NoOp"
	StepSleep      StepType = "Sleep"
	StepTitus      StepType = "Titus"
	StepNotebook   StepType = "Notebook"
	StepKubernetes StepType = "Kubernetes"
	StepHTTP       StepType = "Http"
	StepJoin       StepType = "Join"
	// StepLambda invokes an AWS Lambda function; StepCallback hands a task
	// token to an SNS topic or an SQS queue and waits for it to be used.
	// Neither is Maestro's.
	StepLambda   StepType = "Lambda"
	StepCallback StepType = "Callback"
	// StepECS runs an ECS task on Fargate (Maestro's Kubernetes steps run
	// as one too); StepBatch submits an AWS Batch job. Neither is Maestro's.
	StepECS   StepType = "Ecs"
	StepBatch StepType = "Batch"
)

// FailureMode says what a step failure does to the rest of the instance.
type FailureMode string

// Failure modes; FAIL_AFTER_RUNNING is the default.
const (
	FailImmediately  FailureMode = "FAIL_IMMEDIATELY"
	FailAfterRunning FailureMode = "FAIL_AFTER_RUNNING"
	IgnoreFailure    FailureMode = "IGNORE_FAILURE"
)

// Step is one element of a steps list. Kind selects which kind-specific
// fields apply; the common fields are shared by all kinds.
type Step struct {
	Kind StepKind

	ID                 string
	Name               string
	Description        string
	Transition         Transition
	FailureMode        FailureMode // empty = default
	Tags               TagList
	Timeout            *ParsableDuration
	SignalDependencies []SignalDependency
	SignalOutputs      []SignalOutput
	Params             Params

	// KindStep
	Type           StepType
	SubType        string
	SubTypeVersion string
	RetryPolicy    *RetryPolicy

	// KindSubworkflow
	Sync           *bool
	ExplicitParams *bool

	// KindForeach
	Concurrency    *int64
	StrictOrdering *bool
	// ItemsFrom, on a foreach step, gives its iterations from an S3 object
	// instead of its loop_params.
	ItemsFrom *ItemsFrom

	// KindWhile
	Condition string

	// KindForeach and KindWhile: the loop body.
	Steps []Step

	Extra map[string]RawJSON
}

// Transition lists a step's outgoing edges in definition order.
type Transition struct {
	Successors []Successor
	// Predecessors, when given, must equal the computed set.
	Predecessors []string
	// Extra holds unmodelled keys of the transition object, kept for the round trip.
	Extra map[string]RawJSON
}

// Successor is one outgoing edge and its condition expression
// ("true" when written as JSON true).
type Successor struct {
	StepID    string
	Condition string
}
