package orchestrator

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// ExtraInfoSizeLimit bounds a tag permit's extra info (its JSON), so the
// permit item, read by every round of a run whose steps carry the tag,
// stays small.
const ExtraInfoSizeLimit = 4096

// reservedPermitKeys are the keys a tag permit's extra info may not use:
// the permit's own fields, which its JSON carries beside the extra info.
func reservedPermitKeys() []string {
	return []string{"tag", "max_allowed", "timeline", "held", "waiting", "create_time", "modify_time", "extra_info"}
}

// CheckExtraInfo checks a tag permit's extra info, a JSON object (Maestro's
// extra_info): at most ExtraInfoSizeLimit bytes, none of the permit's own
// field names as a key.
func CheckExtraInfo(info map[string]json.RawMessage) []string {
	var errs []string
	keys := make([]string, 0, len(info))
	for k := range info {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	reserved := reservedPermitKeys()
	for _, k := range keys {
		if slices.Contains(reserved, k) {
			errs = append(errs, fmt.Sprintf("extra_info: key %q is reserved (%s)", k, strings.Join(reserved, ", ")))
		}
	}
	if n := len(mustJSON(info)); n > ExtraInfoSizeLimit {
		errs = append(errs, fmt.Sprintf("extra_info: %d bytes of JSON; the limit is %d", n, ExtraInfoSizeLimit))
	}
	return errs
}

// PutTagPermitInfo creates a tag permit or changes its limit, as
// PutTagPermit, and replaces its extra info (none given: removed), as
// Maestro's upsertTagPermit.
func (o *Gates) PutTagPermitInfo(ctx context.Context, tag string, maxAllowed int64, info map[string]json.RawMessage) (*TagPermit, error) {
	if strings.HasPrefix(tag, InternalTagPrefix) {
		return nil, Invalid("invalid tag permit", fmt.Sprintf("tag: %q starts with the reserved prefix %q", tag, InternalTagPrefix))
	}
	if errs := CheckExtraInfo(info); len(errs) > 0 {
		return nil, Invalid("invalid tag permit", errs...)
	}
	var raw []byte
	if len(info) > 0 {
		raw = mustJSON(info)
	}
	p, err := o.store.Gates.PutTagPermitInfo(ctx, tag, maxAllowed, o.now().UnixMilli(), raw)
	if err != nil {
		return nil, Internal(err)
	}
	return wakeAndView(ctx, o, p, o.permitView)
}

// extraInfoOf decodes a stored extra info; nil when there is none.
func extraInfoOf(raw []byte) map[string]json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
}

// MarshalJSON writes the permit with its extra info's keys beside its own
// fields, as Maestro's TagPermit does.
func (p TagPermit) MarshalJSON() ([]byte, error) {
	type plain TagPermit
	own, err := json.Marshal(plain(p))
	if err != nil || len(p.ExtraInfo) == 0 {
		return own, err
	}
	extra, err := json.Marshal(p.ExtraInfo)
	if err != nil {
		return nil, fmt.Errorf("encode extra info of tag permit %q: %w", p.Tag, err)
	}
	// Both are JSON objects: join them, the permit's fields first.
	out := bytes.TrimSuffix(own, []byte("}"))
	out = append(out, ',')
	return append(out, extra[1:]...), nil
}
