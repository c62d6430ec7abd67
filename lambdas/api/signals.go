package api

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/signals"
)

// signalAPI serves the signal routes; its handlers reach the
// server through the embedded *server.
type signalAPI struct{ *server }

// signalsPath is the prefix of the signal endpoints.
const signalsPath = "/api/v3/signals"

// registerSignals adds the signal routes. A signal name may contain '/':
// it is URL-encoded in paths (db%2Ftest%2Ftable1).
func (s signalAPI) register(route func(string, apiFunc)) {
	route("POST "+signalsPath, s.announceSignal)
	route("GET "+signalsPath+"/{name}/instances/{seq}", signalInstance(s.server, "GetSignal", SignalService.GetSignal))
	route("GET "+signalsPath+"/{name}/instances/{seq}/lineage", signalInstance(s.server, "SignalLineage", SignalService.SignalLineage))
}

func (s signalAPI) announceSignal(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	a, problems := signals.ParseAnnounce(body)
	if len(problems) > 0 {
		if len(problems) > maxErrorDetails {
			problems = problems[:maxErrorDetails]
		}
		return orchestrator.Invalid("invalid signal", problems...)
	}
	if err := s.svc.Access.AuthorizeSignal(r.Context(), a.Name); err != nil {
		return err
	}
	view, err := s.svc.Signals.AnnounceSignal(r.Context(), a, orchestrator.SignalSource{Kind: "api"})
	return answer(w, view, err, "AnnounceSignal")
}

// signalSeq reads {seq}: a positive sequence id or "latest" (0).
func signalSeq(r *http.Request) (int64, error) {
	raw := r.PathValue("seq")
	if strings.EqualFold(raw, "latest") {
		return 0, nil
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || n <= 0 {
		return 0, invalidParam("seq", "must be latest or a positive integer")
	}
	return n, nil
}

// signalInstance serves a GET of the signal instance {name}, {seq}: what
// get, the SignalService method op, answers for it.
func signalInstance[V any](s *server, op string, get func(SignalService, context.Context, string, int64) (*V, error)) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		seq, err := signalSeq(r)
		if err != nil {
			return err
		}
		view, err := get(s.svc.Signals, r.Context(), r.PathValue("name"), seq)
		return answer(w, view, err, op)
	}
}
