package orchestrator

import (
	"encoding/json"
	"fmt"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
)

// RunConfig is Maestro's run_config of an instance, as far as this
// runtime keeps it: the runtime tags its start gave.
type RunConfig struct {
	RuntimeTags model.TagList `json:"runtime_tags,omitempty"`
}

// runConfigOf returns the run config view of st; nil when it has none.
func runConfigOf(st *engine.Instance) *RunConfig {
	if len(st.RuntimeTags) == 0 {
		return nil
	}
	return &RunConfig{RuntimeTags: st.RuntimeTags}
}

// parseTag decodes one tag given at runtime (a bare name or an object)
// and checks it, reporting problems under path.
func parseTag(raw json.RawMessage, path string) (model.Tag, []string) {
	if len(raw) > model.TagSizeLimit {
		return model.Tag{}, []string{fmt.Sprintf("%s: the tag is %d bytes of JSON; the limit is %d", path, len(raw), model.TagSizeLimit)}
	}
	var t model.Tag
	if err := json.Unmarshal(raw, &t); err != nil {
		return model.Tag{}, []string{fmt.Sprintf("%s: must be a tag name or a tag object {\"name\", \"namespace\", ...attributes}", path)}
	}
	namePath := path
	if !t.Plain {
		namePath += ".name"
	}
	var errs []string
	for _, p := range model.TagNameProblems(t.Name) {
		errs = append(errs, namePath+": "+p)
	}
	if p := model.TagNamespaceProblem(t.Namespace); p != "" {
		errs = append(errs, path+".namespace: "+p)
	}
	return t, errs
}

// parseRuntimeTags decodes and checks a start's runtime_tags: at most
// model.RuntimeTagsLimit tags, each valid, no name twice.
func parseRuntimeTags(raw []json.RawMessage) (model.TagList, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	if len(raw) > model.RuntimeTagsLimit {
		return nil, Invalid("invalid runtime tags", fmt.Sprintf("runtime_tags: %d tags; the limit is %d", len(raw), model.RuntimeTagsLimit))
	}
	var errs []string
	tags := make(model.TagList, 0, len(raw))
	seen := map[string]bool{}
	for i, r := range raw {
		path := fmt.Sprintf("runtime_tags[%d]", i)
		t, problems := parseTag(r, path)
		errs = append(errs, problems...)
		if len(problems) > 0 {
			continue
		}
		if seen[t.Name] {
			errs = append(errs, fmt.Sprintf("%s: duplicate tag name %q", path, t.Name))
			continue
		}
		seen[t.Name] = true
		tags = append(tags, t)
	}
	if n := len(mustJSON(raw)); len(errs) == 0 && n > model.RuntimeTagsSizeLimit {
		errs = append(errs, fmt.Sprintf("runtime_tags: %d bytes of JSON; the limit is %d", n, model.RuntimeTagsSizeLimit))
	}
	if len(errs) > 0 {
		return nil, Invalid("invalid runtime tags", errs...)
	}
	return tags, nil
}
