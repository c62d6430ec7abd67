package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/store"
)

// ActivateVersion makes the selected version the active one.
func (o *Definitions) ActivateVersion(ctx context.Context, wf, selector string) (*DefinitionView, error) {
	_, v, err := o.headVersion(ctx, wf, selector)
	if err != nil {
		return nil, err
	}
	if err := o.store.Definitions.SetActive(ctx, wf, v, o.now(), o.signalSubscriptions(wf, nil), syncMessage(wf)); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, NotFound("workflow %s has no version %d", wf, v)
		}
		return nil, Internal(err)
	}
	return o.GetWorkflowVersion(ctx, wf, strconv.FormatInt(v, 10))
}

// DeactivateWorkflow leaves a workflow with no active version: starts of
// "active" are refused until a version is activated again.
func (o *Definitions) DeactivateWorkflow(ctx context.Context, wf string) (*DefinitionView, error) {
	if _, err := o.head(ctx, wf); err != nil {
		return nil, err
	}
	if err := o.store.Definitions.SetActive(ctx, wf, 0, o.now(), o.signalSubscriptions(wf, nil), syncMessage(wf)); err != nil {
		return nil, Internal(err)
	}
	return o.GetWorkflowVersion(ctx, wf, "latest")
}

// Properties update flags that remove a property instead of setting it.
var propertyResets = map[string]string{
	"reset_run_strategy_rule":    "run_strategy",
	"reset_workflow_concurrency": "run_strategy.workflow_concurrency",
	"reset_step_concurrency":     "step_concurrency",
}

// UpdateProperties changes a workflow's properties snapshot, which every
// version shares: the fields given replace the stored ones, the reset_*
// flags remove them. The result is validated with the same rules as
// properties pushed with a definition.
func (o *Definitions) UpdateProperties(ctx context.Context, wf string, body []byte) (json.RawMessage, error) {
	var update map[string]json.RawMessage
	if err := json.Unmarshal(body, &update); err != nil || update == nil {
		return nil, Invalid("invalid properties update", "request body: must be a JSON object")
	}
	if _, ok := update["tags"]; ok { // as Maestro: tags change one at a time, bounded (workflowtags.go)
		return nil, Invalid("invalid properties update", fmt.Sprintf("tags: cannot set workflow property tags (also known as dynamic tags) for workflow [%s]; "+
			"add and delete them with POST /api/v3/workflows/%[1]s/properties/tag and DELETE /api/v3/workflows/%[1]s/properties/tag/{name}", wf))
	}
	for flag, prop := range propertyResets {
		raw, ok := update[flag]
		if !ok {
			continue
		}
		delete(update, flag)
		var on bool
		if err := json.Unmarshal(raw, &on); err != nil {
			return nil, Invalid("invalid properties update", flag+": must be a boolean")
		}
		if !on {
			continue
		}
		top, _, _ := strings.Cut(prop, ".")
		if _, set := update[top]; set && top == prop {
			return nil, Invalid("invalid properties update", fmt.Sprintf("%s: cannot set %s and reset it in one request", flag, prop))
		}
		update["\x00reset:"+prop] = nil
	}
	for attempt := 0; attempt < 10; attempt++ {
		head, err := o.head(ctx, wf)
		if err != nil {
			return nil, err
		}
		merged := map[string]json.RawMessage{}
		if len(head.Properties) > 0 {
			if err := json.Unmarshal(head.Properties, &merged); err != nil {
				return nil, Internal(fmt.Errorf("decode stored properties of %s: %w", wf, err))
			}
		}
		for k, v := range update {
			if reset, ok := strings.CutPrefix(k, "\x00reset:"); ok {
				resetProperty(merged, reset)
				continue
			}
			merged[k] = v
		}
		props := mustJSON(merged)
		if err := o.checkProperties(wf, props); err != nil {
			return nil, err
		}
		err = o.store.Definitions.UpdateProperties(ctx, head, props, o.now(), o.signalSubscriptions(wf, nil), syncMessage(wf))
		if errors.Is(err, store.ErrConflict) {
			continue
		}
		if err != nil {
			return nil, Internal(err)
		}
		if err := o.gates.syncStepConcurrency(ctx, wf, props); err != nil {
			return nil, Internal(err)
		}
		return props, nil
	}
	return nil, Conflict("properties of workflow %s are being changed concurrently; try again", wf)
}

func resetProperty(props map[string]json.RawMessage, path string) {
	top, sub, nested := strings.Cut(path, ".")
	if !nested {
		delete(props, top)
		return
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(props[top], &obj) != nil {
		return // a string or number run strategy has no concurrency field
	}
	delete(obj, sub)
	props[top] = mustJSON(obj)
}

// checkProperties validates a properties snapshot with the definition
// rules, reporting problems under their "properties." paths.
func (o *Definitions) checkProperties(wf string, props []byte) error {
	doc := fmt.Sprintf(`{"properties": %s, "workflow": {"id": %q, "steps": [{"step": {"id": "s", "type": "NoOp"}}]}}`, props, wf)
	def, err := model.ParseDefinition([]byte(doc))
	if err == nil {
		if errs := model.Validate(def, model.ValidateOptions{}); len(errs) > 0 {
			err = errs
		}
	}
	if err == nil {
		return nil
	}
	var list model.Errors
	if !errors.As(err, &list) {
		return Invalid("invalid properties", err.Error())
	}
	details := make([]string, 0, len(list))
	for _, e := range list {
		if strings.HasPrefix(e.Path, "properties") {
			details = append(details, e.Error())
		}
	}
	if len(details) == 0 {
		return nil
	}
	return Invalid("invalid properties", details...)
}
