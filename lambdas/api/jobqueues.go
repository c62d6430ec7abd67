package api

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/maestro-serverless/maestro/orchestrator"
)

// jobQueueAPI serves the job queue routes; its handlers reach the
// server through the embedded *server.
type jobQueueAPI struct{ *server }

// jobQueuesPath is the prefix of the job queue endpoints.
const jobQueuesPath = "/api/v3/job-queues"

func (s jobQueueAPI) register(route func(string, apiFunc)) {
	route("POST "+jobQueuesPath, s.putJobQueue)
	route("GET "+jobQueuesPath+"/{name}", gateByName(s.server, "name", "GetJobQueue", GateService.GetJobQueue))
	route("DELETE "+jobQueuesPath+"/{name}", gateByName(s.server, "name", "DeleteJobQueue", GateService.DeleteJobQueue))
}

func (s jobQueueAPI) putJobQueue(w http.ResponseWriter, r *http.Request) error {
	req, err := readRequest(r, parseJobQueue)
	if err != nil {
		return err
	}
	v, err := s.svc.Gates.PutJobQueue(r.Context(), req)
	return answer(w, v, err, "PutJobQueue")
}

// parseJobQueue reads {"name", "cpu", "memory", "gpu", "aging_seconds"}:
// name and cpu are required; memory (MiB), gpu and aging_seconds default
// to 0 (memory and gpu: none to give; aging: none).
func parseJobQueue(body []byte) (orchestrator.JobQueueRequest, error) {
	var req orchestrator.JobQueueRequest
	fields, err := decodeBody(body, "invalid job queue")
	if err != nil {
		return req, err
	}
	var errs []string
	whole := func(name string, raw json.RawMessage, dst *int64) {
		if err := json.Unmarshal(raw, dst); err != nil || *dst < 0 {
			errs = append(errs, name+": must be a non-negative integer")
		}
	}
	for _, f := range fields {
		switch f.name {
		case "name":
			errs = append(errs, requiredString(f, &req.Name)...)
		case "cpu":
			if err := json.Unmarshal(f.value, &req.CPU); err != nil || req.CPU < 0 {
				errs = append(errs, "cpu: must be a non-negative number of vCPUs")
			}
		case "memory":
			whole("memory", f.value, &req.Memory)
		case "gpu":
			whole("gpu", f.value, &req.GPU)
		case "aging_seconds":
			whole("aging_seconds", f.value, &req.Aging)
		default:
			errs = append(errs, fmt.Sprintf("%s: unknown field", fieldName(f.name)))
		}
	}
	errs = append(errs, missingFields(fields, "name", "cpu")...)
	if len(errs) > 0 {
		return orchestrator.JobQueueRequest{}, orchestrator.Invalid("invalid job queue", errs...)
	}
	return req, nil
}
