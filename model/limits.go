package model

import "time"

// Maestro's limits and defaults (Constants.java, Defaults.java).
const (
	// IDLengthLimit bounds workflow ids, step ids and param names.
	IDLengthLimit = 128
	// NameLengthLimit bounds workflow and step names.
	NameLengthLimit = 256
	// FieldSizeLimit bounds description fields.
	FieldSizeLimit = 16384

	// StepListSizeLimit bounds the steps of a definition, nested ones included.
	StepListSizeLimit = 300
	// WorkflowDepthLimit bounds the nesting of foreach and while loops.
	WorkflowDepthLimit = 10
	// IterationLimit bounds the iterations of one foreach or while loop.
	IterationLimit = 25000
	// TotalLeafStepCountLimit bounds the leaf steps of a whole instance
	// tree (iterations and subworkflow instances included).
	TotalLeafStepCountLimit = 1_000_000
	// ForeachConcurrencyMaxLimit bounds a foreach step's concurrency.
	ForeachConcurrencyMaxLimit = 500
	// StepConcurrencyMaxLimit bounds properties.step_concurrency.
	StepConcurrencyMaxLimit = 1000
	// WorkflowConcurrencyMaxLimit bounds run_strategy.workflow_concurrency.
	WorkflowConcurrencyMaxLimit = 1000
	// InstanceStepConcurrencyMaxLimit is the exclusive upper bound of
	// workflow.instance_step_concurrency (valid values are 1..999).
	InstanceStepConcurrencyMaxLimit = 1000
	// MaxSignalNamesInATrigger bounds the signals one signal trigger joins.
	MaxSignalNamesInATrigger = 8
	// MaxSignalTriggerNames bounds the distinct signal names of all the
	// signal triggers of a workflow: a change of the active version
	// writes its subscriptions (one item per name added or removed) in
	// its own DynamoDB transaction, whose limit is 100 items.
	MaxSignalTriggerNames = 48

	// MaxRetryLimit bounds the error, platform and timeout retry limits.
	MaxRetryLimit = 99
	// MaxRetryBackoffSecs bounds retry backoff and backoff limit seconds.
	MaxRetryBackoffSecs = 86400
	// MaxTimeout bounds workflow and step timeouts.
	MaxTimeout = 120 * 24 * time.Hour
	// DefaultTimeout applies when no timeout is set.
	DefaultTimeout = 10 * 24 * time.Hour
	// TimeTriggerMinimumInterval is the least time between two fires of a time trigger.
	TimeTriggerMinimumInterval = 2 * time.Minute

	// DefaultParallelism is PARALLEL's default workflow concurrency.
	DefaultParallelism = 20
	// DefaultStepConcurrency applies when properties.step_concurrency is unset.
	DefaultStepConcurrency = 20
	// DefaultInstanceStepConcurrency applies per DAG level when
	// workflow.instance_step_concurrency is unset.
	DefaultInstanceStepConcurrency = 100

	// DefaultErrorRetryLimit, DefaultPlatformRetryLimit and
	// DefaultTimeoutRetryLimit are the retry limits of an unset retry policy.
	DefaultErrorRetryLimit    = 2
	DefaultPlatformRetryLimit = 10
	DefaultTimeoutRetryLimit  = 0

	// StepParamSeparator joins a step id and a param name in cross-step
	// references (job1__sleep_seconds); step ids may not contain it.
	StepParamSeparator = "__"
	// ReservedPrefix and ReservedSuffix are kept for ids Maestro generates.
	ReservedPrefix = "maestro_"
	ReservedSuffix = "_maestro"
)
