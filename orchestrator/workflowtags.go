package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/maestro-serverless/maestro/caller"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/store"
)

// maxTagUpdateTries bounds the read-modify-write tries of one tag change
// racing other property changes.
const maxTagUpdateTries = 10

// AddWorkflowTag adds a tag to workflow wf's properties (Maestro's
// addWorkflowTag): a tag of the same name is replaced. As in Maestro the
// tag is put in the PLATFORM namespace and gets the attributes "creator"
// (the caller) and "created_at_milli"; a "permit" given is dropped (it is
// read-only). It returns the properties snapshot afterwards.
func (o *Definitions) AddWorkflowTag(ctx context.Context, wf string, raw json.RawMessage) (json.RawMessage, error) {
	t, problems := parseTag(raw, "tag")
	if len(problems) > 0 {
		return nil, Invalid("invalid workflow tag", problems...)
	}
	now := o.now()
	t.Plain = false
	t.Namespace = model.NamespacePlatform
	if t.Extra == nil {
		t.Extra = map[string]model.RawJSON{}
	}
	delete(t.Extra, "permit")
	t.Extra["creator"] = mustJSON(User{Name: caller.From(ctx)})
	t.Extra["created_at_milli"] = mustJSON(now.UnixMilli())
	if b := mustJSON(t); len(b) > model.TagSizeLimit {
		return nil, Invalid("invalid workflow tag", fmt.Sprintf("tag: the tag is %d bytes of JSON with its creator; the limit is %d", len(b), model.TagSizeLimit))
	}
	return o.changeTags(ctx, wf, func(tags model.TagList) (model.TagList, error) {
		if i := slices.IndexFunc(tags, func(x model.Tag) bool { return x.Name == t.Name }); i >= 0 {
			tags[i] = t
			return tags, nil
		}
		if len(tags) >= model.WorkflowTagsLimit {
			return nil, Invalid("invalid workflow tag", fmt.Sprintf("tag: workflow %s has %d tags; the limit is %d", wf, len(tags), model.WorkflowTagsLimit))
		}
		return append(tags, t), nil
	})
}

// DeleteWorkflowTag removes the tag named name from workflow wf's
// properties (Maestro's deleteWorkflowTag); a 404 when wf has no such
// tag. It returns the properties snapshot afterwards.
func (o *Definitions) DeleteWorkflowTag(ctx context.Context, wf, name string) (json.RawMessage, error) {
	return o.changeTags(ctx, wf, func(tags model.TagList) (model.TagList, error) {
		i := slices.IndexFunc(tags, func(x model.Tag) bool { return x.Name == name })
		if i < 0 {
			return nil, NotFound("no workflow tag with name [%s] found in the current workflow tags for workflow [%s]", name, wf)
		}
		return slices.Delete(tags, i, i+1), nil
	})
}

// changeTags applies change to the tags of workflow wf's properties and
// stores the result, conditioned on the head it read (again on a race).
// It returns the snapshot: the properties with workflow_id, create_time
// and author, as Maestro's PropertiesSnapshot.
func (o *Definitions) changeTags(ctx context.Context, wf string, change func(model.TagList) (model.TagList, error)) (json.RawMessage, error) {
	for range maxTagUpdateTries {
		head, err := o.head(ctx, wf)
		if err != nil {
			return nil, err
		}
		props := map[string]json.RawMessage{}
		if len(head.Properties) > 0 {
			if err := json.Unmarshal(head.Properties, &props); err != nil {
				return nil, Internal(fmt.Errorf("decode stored properties of %s: %w", wf, err))
			}
		}
		var tags model.TagList
		if raw, ok := props["tags"]; ok {
			if err := json.Unmarshal(raw, &tags); err != nil {
				return nil, Internal(fmt.Errorf("decode stored tags of %s: %w", wf, err))
			}
		}
		tags, err = change(tags)
		if err != nil {
			return nil, err
		}
		if len(tags) == 0 {
			delete(props, "tags")
		} else {
			props["tags"] = mustJSON(tags)
			if n := len(props["tags"]); n > model.WorkflowTagsSizeLimit {
				return nil, Invalid("invalid workflow tag", fmt.Sprintf("tag: the workflow's tags would be %d bytes of JSON; the limit is %d", n, model.WorkflowTagsSizeLimit))
			}
		}
		body := mustJSON(props)
		if err := o.checkProperties(wf, body); err != nil {
			return nil, err
		}
		now := o.now()
		err = o.store.Definitions.UpdateProperties(ctx, head, body, now, o.signalSubscriptions(wf, nil), syncMessage(wf))
		if errors.Is(err, store.ErrConflict) {
			continue
		}
		if err != nil {
			return nil, Internal(err)
		}
		props["workflow_id"] = mustJSON(wf)
		props["create_time"] = mustJSON(now.UnixMilli())
		props["author"] = mustJSON(User{Name: caller.From(ctx)})
		return mustJSON(props), nil
	}
	return nil, Conflict("properties of workflow %s are being changed concurrently; try again", wf)
}
