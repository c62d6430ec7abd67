package store

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A run's first instance-level timeline entries (its status changes: most
// runs have two, started and ended) live in its run item, attribute
// attrInlineTimeline, instead of items of their own: the commits that make
// them are transactions, where each T# item cost two write units. The run
// item holds at most maxInlineTimeline entries of maxInlineTimelineBytes in
// all; later ones are T# items as before. Readers take both (RunRecord.Timeline
// and ListTimeline). Each commit carries the held entries on
// (Commit.PriorTimeline).
const (
	attrInlineTimeline     = "itl"
	maxInlineTimeline      = 8
	maxInlineTimelineBytes = 1024
)

// inlineEntry is the stored form of an entry held in the run item.
type inlineEntry struct {
	Seq  int64           `json:"s"`
	Body json.RawMessage `json:"e"`
}

// SplitTimeline returns the entries a commit's run item holds, the prior
// ones and as many new ones as fit, and the new ones that do not fit,
// to be written as T# items. It is exported for store/memstore, which
// splits a commit's timeline as this store does.
func SplitTimeline(prior, added []TimelineItem) (held, spilled []TimelineItem) {
	held = slices.Clone(prior)
	size := 0
	for _, t := range held {
		size += len(t.Body)
	}
	for i, t := range added {
		if len(held) >= maxInlineTimeline || size+len(t.Body) > maxInlineTimelineBytes || !json.Valid(t.Body) {
			return held, append(spilled, added[i:]...)
		}
		held = append(held, t)
		size += len(t.Body)
	}
	return held, nil
}

// encodeInlineTimeline returns the run item attribute holding entries.
func (s *base) encodeInlineTimeline(entries []TimelineItem) (types.AttributeValue, error) {
	out := make([]inlineEntry, len(entries))
	for i, t := range entries {
		out[i] = inlineEntry{Seq: t.Seq, Body: t.Body}
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("store: timeline: %w", err)
	}
	z, err := s.codec.deflate(raw)
	if err != nil {
		return nil, err
	}
	return bin(z), nil
}

// inlineTimeline decodes the entries a run item holds (none without the
// attribute).
func inlineTimeline(item map[string]types.AttributeValue) ([]TimelineItem, error) {
	v, ok := item[attrInlineTimeline].(*types.AttributeValueMemberB)
	if !ok {
		return nil, nil
	}
	raw, err := decode(encDict1, v.Value)
	if err != nil {
		return nil, fmt.Errorf("store: run timeline: %w", err)
	}
	var in []inlineEntry
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, fmt.Errorf("store: run timeline: %w", err)
	}
	out := make([]TimelineItem, len(in))
	for i, e := range in {
		out[i] = TimelineItem{Seq: e.Seq, Body: []byte(e.Body)}
	}
	return out, nil
}
