package router

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"

	changes "github.com/maestro-serverless/maestro/events"
)

// DefaultClusterName is the cluster_name of Maestro-shaped change events
// when Config.ClusterName is empty.
const DefaultClusterName = "maestro"

// eventMessages returns the SNS messages of change event e: the event in
// this runtime's shape and, with Config.MaestroEvents, Maestro's
// *_CHANGE_EVENT messages of it after it (one per status change, in
// order). Their batch entry ids are set by the caller.
func (r *Router) eventMessages(e changes.Event) ([]snstypes.PublishBatchRequestEntry, error) {
	msg, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("router: encode event %s: %w", e.ID, err)
	}
	out := []snstypes.PublishBatchRequestEntry{{Message: aws.String(string(msg)), MessageAttributes: snsAttributes(changes.Attributes(e))}}
	if !r.cfg.MaestroEvents {
		return out, nil
	}
	cluster := r.cfg.ClusterName
	if cluster == "" {
		cluster = DefaultClusterName
	}
	ms, err := changes.EncodeMaestro(e, cluster, r.cfg.Now().UnixMilli())
	if err != nil {
		// A kind of event Maestro has no message for: sent in this
		// runtime's shape only, rather than holding the stream back.
		r.cfg.Logger.Warn("router: no Maestro-shaped event", "event_id", e.ID, "error", err)
		return out, nil
	}
	for _, m := range ms {
		out = append(out, snstypes.PublishBatchRequestEntry{Message: aws.String(string(m.Body)), MessageAttributes: snsAttributes(m.Attributes)})
	}
	return out, nil
}

// snsAttributes turns string attributes into SNS message attributes.
func snsAttributes(a map[string]string) map[string]snstypes.MessageAttributeValue {
	out := make(map[string]snstypes.MessageAttributeValue, len(a))
	for k, v := range a {
		out[k] = snstypes.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
	}
	return out
}

// entryIDs numbers a PublishBatch call's entries.
func entryIDs(entries []snstypes.PublishBatchRequestEntry) {
	for i := range entries {
		entries[i].Id = aws.String(strconv.Itoa(i))
	}
}
