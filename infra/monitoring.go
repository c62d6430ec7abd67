package infra

import (
	"fmt"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/aws-cdk-go/awscdk/v2/interfaces/interfacesawscloudwatch"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/maestro-serverless/maestro/metrics"
	"github.com/maestro-serverless/maestro/resources"
)

// Alarm thresholds.
const (
	// IteratorAgeThreshold is the stream router's lag that raises an alarm:
	// outbox messages (step starts, wakes) are that late.
	IteratorAgeThreshold = time.Minute
	// DecisionAgeThreshold is the age of the oldest decision message that
	// raises an alarm.
	DecisionAgeThreshold = 5 * time.Minute
	// WorkAgeThreshold is the age of the oldest work or signal message
	// that raises an alarm. Work messages include timers delayed up to 15
	// minutes by SQS, which do not count as visible while delayed.
	WorkAgeThreshold = 15 * time.Minute
	// StepLaunchDelayThreshold is the p99 step launch delay (decision to
	// worker) that raises an alarm.
	StepLaunchDelayThreshold = 5 * time.Second
)

// alarmSpec is one alarm to create.
type alarmSpec struct {
	id, name, description string
	metric                awscloudwatch.IMetric
	threshold             float64
	op                    awscloudwatch.ComparisonOperator
	periods               int
}

// newMonitoring creates the alarms (dead-letter queue not empty, stream
// iterator age, oldest message age, handler errors, API 5xx) and a
// dashboard of the system's main metrics. When AlarmTopicARN is set every
// alarm notifies it.
func newMonitoring(scope constructs.Construct, s settings, st *Stack) {
	oneMinute := seconds(time.Minute)
	fiveMinutes := seconds(5 * time.Minute)
	maxOf := func(period time.Duration) *awscloudwatch.MetricOptions {
		return &awscloudwatch.MetricOptions{Statistic: jsii.String("Maximum"), Period: seconds(period)}
	}
	sumOf := func(period time.Duration) *awscloudwatch.MetricOptions {
		return &awscloudwatch.MetricOptions{Statistic: jsii.String("Sum"), Period: seconds(period)}
	}
	var specs []alarmSpec
	for _, d := range st.Queues.dlqs() {
		specs = append(specs, alarmSpec{
			id:          "Alarm" + logicalName(d.dlq),
			name:        "dlq-not-empty-" + d.suffix,
			description: "Messages failed " + fmt.Sprint(resources.MaxReceiveCount) + " times and were moved to the dead-letter queue; inspect and redrive them.",
			metric:      d.dlq.MetricApproximateNumberOfMessagesVisible(maxOf(time.Minute)),
			threshold:   1,
			op:          awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
			periods:     1,
		})
	}
	specs = append(specs, alarmSpec{
		id:          "AlarmStreamIteratorAge",
		name:        "stream-iterator-age",
		description: "The stream router lags behind the table stream; outbox messages are delayed.",
		metric:      st.Functions[HandlerRouter].Function.Metric(jsii.String("IteratorAge"), maxOf(time.Minute)),
		threshold:   float64(IteratorAgeThreshold.Milliseconds()),
		op:          awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
		periods:     5,
	})
	for _, q := range []struct {
		queue  awssqs.Queue
		suffix string
		age    time.Duration
	}{
		{st.Queues.Decision, "decision", DecisionAgeThreshold},
		{st.Queues.Work, "work", WorkAgeThreshold},
		{st.Queues.SignalIngest, "signal-ingest", WorkAgeThreshold},
	} {
		specs = append(specs, alarmSpec{
			id:          "AlarmOldest" + logicalName(q.queue),
			name:        "oldest-message-" + q.suffix,
			description: "The queue's oldest message waits longer than " + q.age.String() + "; its consumer is failing or too slow.",
			metric:      q.queue.MetricApproximateAgeOfOldestMessage(maxOf(time.Minute)),
			threshold:   q.age.Seconds(),
			op:          awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
			periods:     5,
		})
	}
	for _, h := range Handlers() {
		fn := st.Functions[h]
		specs = append(specs, alarmSpec{
			id:          "AlarmErrors" + logicalName(fn.Function),
			name:        "errors-" + h,
			description: "The " + h + " function failed invocations (crashes, timeouts or returned errors).",
			metric:      fn.Function.MetricErrors(sumOf(5 * time.Minute)),
			threshold:   1,
			op:          awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
			periods:     1,
		})
	}
	// The handlers' own metrics (EMF; package metrics).
	emf := func(name, statistic string, period time.Duration, dims map[string]*string) awscloudwatch.IMetric {
		d := map[string]*string{"Stage": jsii.String(s.Stage)}
		for k, v := range dims {
			d[k] = v
		}
		return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
			Namespace: jsii.String(metrics.Namespace), MetricName: jsii.String(name), DimensionsMap: &d,
			Statistic: jsii.String(statistic), Period: seconds(period),
		})
	}
	specs = append(specs, alarmSpec{
		id:          "AlarmStepLaunchDelay",
		name:        "step-launch-delay",
		description: "Steps wait longer than " + StepLaunchDelayThreshold.String() + " (p99) from the decision that starts them to their worker.",
		metric:      emf(metrics.StepLaunchDelay, "p99", 5*time.Minute, nil),
		threshold:   float64(StepLaunchDelayThreshold.Milliseconds()),
		op:          awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
		periods:     3,
	}, alarmSpec{
		id:          "AlarmFailedRuns",
		name:        "failed-runs",
		description: "Workflow runs failed.",
		metric:      emf(metrics.RunsFinished, "Sum", 5*time.Minute, map[string]*string{"Status": jsii.String("FAILED")}),
		threshold:   1,
		op:          awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
		periods:     1,
	})
	specs = append(specs, alarmSpec{
		id:          "AlarmApi5xx",
		name:        "api-5xx",
		description: "The API answered with server errors.",
		metric:      st.API.RestAPI.MetricServerError(sumOf(5 * time.Minute)),
		threshold:   5,
		op:          awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
		periods:     1,
	})

	var action awscloudwatch.IAlarmAction
	if s.AlarmTopicARN != "" {
		action = awscloudwatchactions.NewSnsAction(awssns.Topic_FromTopicArn(scope, jsii.String("AlarmTopic"), jsii.String(s.AlarmTopicARN)))
	}
	var refs []interfacesawscloudwatch.IAlarmRef
	for _, a := range specs {
		alarm := awscloudwatch.NewAlarm(scope, jsii.String(a.id), &awscloudwatch.AlarmProps{
			AlarmName:          jsii.String(s.name(a.name)),
			AlarmDescription:   jsii.String(a.description),
			Metric:             a.metric,
			Threshold:          jsii.Number(a.threshold),
			ComparisonOperator: a.op,
			EvaluationPeriods:  jsii.Number(float64(a.periods)),
			TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
		})
		if action != nil {
			alarm.AddAlarmAction(action)
			alarm.AddOkAction(action)
		}
		refs = append(refs, alarm)
	}

	graph := func(title string, metrics ...awscloudwatch.IMetric) awscloudwatch.IWidget {
		return awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{
			Title: jsii.String(title), Left: &metrics, Width: jsii.Number(8), Height: jsii.Number(6),
		})
	}
	var invocations, errs, durations []awscloudwatch.IMetric
	for _, h := range Handlers() {
		fn := st.Functions[h].Function
		invocations = append(invocations, fn.MetricInvocations(&awscloudwatch.MetricOptions{Label: jsii.String(h), Period: fiveMinutes}))
		errs = append(errs, fn.MetricErrors(&awscloudwatch.MetricOptions{Label: jsii.String(h), Period: fiveMinutes}))
		durations = append(durations, fn.MetricDuration(&awscloudwatch.MetricOptions{Label: jsii.String(h), Statistic: jsii.String("p99"), Period: fiveMinutes}))
	}
	var depth, age []awscloudwatch.IMetric
	for _, q := range []awssqs.Queue{st.Queues.Decision, st.Queues.Work, st.Queues.SignalIngest} {
		depth = append(depth, q.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{Label: q.QueueName(), Period: oneMinute}))
		age = append(age, q.MetricApproximateAgeOfOldestMessage(&awscloudwatch.MetricOptions{Label: q.QueueName(), Period: oneMinute}))
	}
	var dlqDepth []awscloudwatch.IMetric
	for _, d := range st.Queues.dlqs() {
		dlqDepth = append(dlqDepth, d.dlq.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{Label: d.dlq.QueueName(), Period: oneMinute}))
	}
	api := st.API.RestAPI
	dash := awscloudwatch.NewDashboard(scope, jsii.String("Dashboard"), &awscloudwatch.DashboardProps{
		DashboardName: jsii.String(s.name("overview")),
	})
	dash.AddWidgets(awscloudwatch.NewAlarmStatusWidget(&awscloudwatch.AlarmStatusWidgetProps{
		Title: jsii.String("Alarms"), Alarms: &refs, Width: jsii.Number(24),
	}))
	dash.AddWidgets(
		graph("API requests and errors", api.MetricCount(&awscloudwatch.MetricOptions{Period: fiveMinutes}),
			api.MetricClientError(&awscloudwatch.MetricOptions{Period: fiveMinutes}), api.MetricServerError(&awscloudwatch.MetricOptions{Period: fiveMinutes})),
		graph("API latency p99", api.MetricLatency(&awscloudwatch.MetricOptions{Statistic: jsii.String("p99"), Period: fiveMinutes})),
		graph("Stream router iterator age (ms)", st.Functions[HandlerRouter].Function.Metric(jsii.String("IteratorAge"), maxOf(time.Minute))),
	)
	dash.AddWidgets(graph("Invocations", invocations...), graph("Errors", errs...), graph("Duration p99 (ms)", durations...))
	dash.AddWidgets(graph("Queue depth", depth...), graph("Oldest message age (s)", age...), graph("Dead-letter queue depth", dlqDepth...))
	var stepsByStatus, runsByStatus []awscloudwatch.IMetric
	for _, st := range []string{"SUCCEEDED", "FATALLY_FAILED", "USER_FAILED", "PLATFORM_FAILED", "TIMED_OUT", "STOPPED"} {
		stepsByStatus = append(stepsByStatus, emf(metrics.StepsFinished, "Sum", 5*time.Minute, map[string]*string{"Status": jsii.String(st)}))
	}
	for _, st := range []string{"SUCCEEDED", "FAILED", "STOPPED", "TIMED_OUT"} {
		runsByStatus = append(runsByStatus, emf(metrics.RunsFinished, "Sum", 5*time.Minute, map[string]*string{"Status": jsii.String(st)}))
	}
	dash.AddWidgets(
		graph("Step launch delay p50 / p99 (ms)", emf(metrics.StepLaunchDelay, "p50", 5*time.Minute, nil), emf(metrics.StepLaunchDelay, "p99", 5*time.Minute, nil)),
		graph("Decision latency p50 / p99 (ms)", emf(metrics.DecisionLatency, "p50", 5*time.Minute, nil), emf(metrics.DecisionLatency, "p99", 5*time.Minute, nil)),
		graph("Queue lag p99 (ms)", emf(metrics.QueueLag, "p99", 5*time.Minute, map[string]*string{"Queue": jsii.String("work")}),
			emf(metrics.QueueLag, "p99", 5*time.Minute, map[string]*string{"Queue": jsii.String("decision")})),
	)
	dash.AddWidgets(graph("Steps finished by status", stepsByStatus...), graph("Runs finished by status", runsByStatus...))
	dash.AddWidgets(graph("Table consumed capacity",
		st.Table.MetricConsumedReadCapacityUnits(&awscloudwatch.MetricOptions{Period: fiveMinutes}),
		st.Table.MetricConsumedWriteCapacityUnits(&awscloudwatch.MetricOptions{Period: fiveMinutes})))
}

// logicalName is a construct's id, for building other ids.
func logicalName(c constructs.IConstruct) string { return *c.Node().Id() }
