package stack

import (
	"encoding/json"
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/maestro-serverless/maestro/orchestrator"
)

// maxJobEvent bounds a posted event: EventBridge's 256 KB.
const maxJobEvent = 256 << 10

// jobEventRoutes serves POST /local/job-events: an EventBridge event (an ECS
// task or Batch job state change, as AWS emits it) goes to the work queue
// as the stack's EventBridge rules send it in AWS (wrapped by their input
// transformer: {"kind": "job_event", "job_event": <event>}). No container
// runs locally; this is how a job's end reaches the system.
func jobEventRoutes(client *sqs.Client, workQueueURL string) func(*http.ServeMux) {
	return func(mux *http.ServeMux) {
		mux.HandleFunc("POST /local/job-events", func(w http.ResponseWriter, r *http.Request) {
			body, err := io.ReadAll(io.LimitReader(r.Body, maxJobEvent+1))
			var ev struct {
				Source     string          `json:"source"`
				DetailType string          `json:"detail-type"`
				Detail     json.RawMessage `json:"detail"`
			}
			switch {
			case err != nil || len(body) > maxJobEvent:
				writeLocalError(w, http.StatusBadRequest, "request body: at most 256 KB of JSON")
				return
			case json.Unmarshal(body, &ev) != nil:
				writeLocalError(w, http.StatusBadRequest, "request body: not a JSON object")
				return
			case ev.Source == "" || ev.DetailType == "" || len(ev.Detail) == 0:
				writeLocalError(w, http.StatusBadRequest, "request body: an EventBridge event needs source, detail-type and detail")
				return
			}
			msg := orchestrator.EncodeWork(orchestrator.JobEventWork{JobEvent: body})
			if _, err := client.SendMessage(r.Context(), &sqs.SendMessageInput{QueueUrl: aws.String(workQueueURL), MessageBody: aws.String(msg)}); err != nil {
				writeLocalError(w, http.StatusBadGateway, "send to the work queue: "+err.Error())
				return
			}
			w.WriteHeader(http.StatusAccepted)
		})
	}
}

func writeLocalError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"status": status, "message": msg})
}
