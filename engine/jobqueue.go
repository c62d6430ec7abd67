package engine

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Job queues.
//
// A step whose params set job_queue waits in that queue (WAITING_FOR_PERMITS)
// until the queue admits it: by priority, then age, while the sum of what
// its running steps need fits its capacity. The queue is a permit (see
// Permits): its holders and waiters change in the decision's transaction.

// ParamJobQueue is the step param naming a job queue and what the step
// needs of it: a MAP of queue (required), priority (higher first; default
// 0), cpu (vCPUs, fractions allowed), memory (MiB) and gpu.
const ParamJobQueue = "job_queue"

// QueueDemand is what a step asks of a job queue. CPU is in thousandths of
// a vCPU.
type QueueDemand struct {
	Queue            string
	Priority         int64
	CPU, Memory, GPU int64
}

// queueDemand reads the job_queue param; nil when the step sets none.
func queueDemand(params Values) (*QueueDemand, error) {
	raw, ok := params[ParamJobQueue]
	if !ok || raw == nil {
		return nil, nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("param %s must be a MAP, not %T", ParamJobQueue, raw)
	}
	d := &QueueDemand{}
	for k, v := range m {
		var err error
		switch k {
		case "queue":
			s, ok := v.(string)
			if !ok || strings.TrimSpace(s) == "" {
				return nil, fmt.Errorf("param %s.queue must be a non-empty STRING", ParamJobQueue)
			}
			d.Queue = strings.TrimSpace(s)
		case "priority":
			d.Priority, err = whole(v)
		case "cpu":
			var f float64
			if f, err = number(v); err == nil {
				d.CPU = int64(math.Ceil(f * 1000))
			}
		case "memory":
			d.Memory, err = whole(v)
		case "gpu":
			d.GPU, err = whole(v)
		default:
			return nil, fmt.Errorf("param %s.%s is not a job queue field (queue, priority, cpu, memory, gpu)", ParamJobQueue, k)
		}
		if err != nil {
			return nil, fmt.Errorf("param %s.%s: %w", ParamJobQueue, k, err)
		}
	}
	switch {
	case d.Queue == "":
		return nil, fmt.Errorf("param %s.queue is required", ParamJobQueue)
	case d.CPU < 0 || d.Memory < 0 || d.GPU < 0:
		return nil, fmt.Errorf("param %s: cpu, memory and gpu must not be negative", ParamJobQueue)
	case d.Priority < -1000 || d.Priority > 1000:
		return nil, fmt.Errorf("param %s.priority: %d is outside -1000..1000", ParamJobQueue, d.Priority)
	}
	return d, nil
}

func number(v any) (float64, error) {
	switch x := v.(type) {
	case int64:
		return float64(x), nil
	case float64:
		return x, nil
	case string:
		return strconv.ParseFloat(strings.TrimSpace(x), 64)
	}
	return 0, fmt.Errorf("%T is not a number", v)
}

func whole(v any) (int64, error) {
	f, err := number(v)
	if err != nil {
		return 0, err
	}
	if f != math.Trunc(f) || math.Abs(f) > 1<<50 {
		return 0, fmt.Errorf("%v is not a whole number", v)
	}
	return int64(f), nil
}
