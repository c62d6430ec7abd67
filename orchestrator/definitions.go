package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/maestro-serverless/maestro/definition"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/store"
)

func (f Format) definitionFormat() definition.Format {
	if f == FormatYAML {
		return definition.YAML
	}
	return definition.JSON
}

// check validates a pushed document and converts problems into a 400.
func (o *Definitions) check(ctx context.Context, body []byte, f Format) (*model.Definition, error) {
	def, err, lookupErr := o.checkDocument(ctx, body, f)
	if lookupErr != nil {
		return nil, lookupErr
	}
	if err == nil {
		return def, nil
	}
	var list definition.Errors
	if errors.As(err, &list) {
		details := make([]string, len(list))
		for i, e := range list {
			details[i] = e.Error()
		}
		return nil, Invalid(fmt.Sprintf("invalid workflow definition: %d problem(s)", len(list)), details...)
	}
	return nil, Invalid("invalid workflow definition", err.Error())
}

// ValidateWorkflow checks a definition without storing it.
func (o *Definitions) ValidateWorkflow(ctx context.Context, body []byte, f Format) error {
	_, err := o.check(ctx, body, f)
	return err
}

// CreateWorkflow validates a definition and stores it as the next version.
// Properties given with it are merged over the previous snapshot.
func (o *Definitions) CreateWorkflow(ctx context.Context, body []byte, f Format) (*DefinitionView, error) {
	def, err := o.check(ctx, body, f)
	if err != nil {
		return nil, err
	}
	doc, err := json.Marshal(def)
	if err != nil {
		return nil, Internal(fmt.Errorf("encode definition: %w", err))
	}
	wf := def.Workflow.ID
	if err := o.access.checkPush(ctx, wf, def.Workflow); err != nil {
		return nil, err
	}
	grant, err := o.access.newGrant(ctx)
	if err != nil {
		return nil, err
	}
	var props []byte
	if def.Properties != nil {
		props, err = o.mergeProperties(ctx, wf, doc)
		if err != nil {
			return nil, err
		}
	}
	active := def.IsActive == nil || *def.IsActive
	now := o.now()
	version, err := o.store.Definitions.CreateVersion(ctx, store.NewVersion{
		WorkflowID: wf, Definition: doc, Properties: props, Activate: active, Now: now,
		Outbox: []store.Message{syncMessage(wf)}, Subscriptions: o.signalSubscriptions(wf, def),
		Access: grant, Check: o.access.pushCheck(ctx, wf),
	})
	if err != nil {
		var e *Error
		var tl *store.ItemTooLargeError
		switch {
		case errors.As(err, &e):
			return nil, e
		case errors.As(err, &tl):
			return nil, refusedIfTooLarge(err, "workflow too large to store", "properties")
		}
		return nil, deletedConflict(wf, err)
	}
	if props != nil {
		if err := o.gates.syncStepConcurrency(ctx, wf, props); err != nil {
			return nil, Internal(err)
		}
	}
	return o.GetWorkflowVersion(ctx, wf, strconv.FormatInt(version, 10))
}

// mergeProperties lays the pushed properties over the stored snapshot, key by key.
func (o *Definitions) mergeProperties(ctx context.Context, wf string, doc []byte) ([]byte, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(doc, &top); err != nil {
		return nil, Internal(fmt.Errorf("decode definition: %w", err))
	}
	var pushed map[string]json.RawMessage
	if raw, ok := top["properties"]; ok {
		if err := json.Unmarshal(raw, &pushed); err != nil {
			return nil, Internal(fmt.Errorf("decode properties: %w", err))
		}
	}
	merged := map[string]json.RawMessage{}
	head, err := o.store.Definitions.GetHead(ctx, wf)
	switch {
	case err == nil && len(head.Properties) > 0:
		if err := json.Unmarshal(head.Properties, &merged); err != nil {
			return nil, Internal(fmt.Errorf("decode stored properties of %s: %w", wf, err))
		}
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return nil, Internal(err)
	}
	for k, v := range pushed {
		merged[k] = v
	}
	return mustJSON(merged), nil
}

// resolveVersion maps a selector to a version number.
func resolveVersion(head *store.WorkflowHead, selector string) (int64, error) {
	switch selector {
	case "latest":
		return head.Latest, nil
	case "active":
		if head.Active == 0 {
			return 0, NotFound("workflow %s has no active version", head.WorkflowID)
		}
		return head.Active, nil
	case "default", "":
		if head.Active != 0 {
			return head.Active, nil
		}
		return head.Latest, nil
	}
	n, err := strconv.ParseInt(selector, 10, 64)
	if err != nil || n <= 0 {
		return 0, Invalid("bad version", fmt.Sprintf("version: must be active, latest, default or a positive number, got %q", selector))
	}
	if n > head.Latest {
		return 0, NotFound("workflow %s has no version %d (latest is %d)", head.WorkflowID, n, head.Latest)
	}
	return n, nil
}

func (o *core) head(ctx context.Context, wf string) (*store.WorkflowHead, error) {
	head, err := o.store.Definitions.GetHead(ctx, wf)
	if err != nil {
		return nil, notFoundOr(err, "workflow %s not found", wf)
	}
	return head, nil
}

// headVersion reads workflow wf's head and the version selector chooses
// of it (resolveVersion).
func (o *core) headVersion(ctx context.Context, wf, selector string) (*store.WorkflowHead, int64, error) {
	head, err := o.head(ctx, wf)
	if err != nil {
		return nil, 0, err
	}
	v, err := resolveVersion(head, selector)
	if err != nil {
		return nil, 0, err
	}
	return head, v, nil
}

// GetWorkflowVersion returns a stored version chosen by selector.
func (o *Definitions) GetWorkflowVersion(ctx context.Context, wf, selector string) (*DefinitionView, error) {
	head, v, err := o.headVersion(ctx, wf, selector)
	if err != nil {
		return nil, err
	}
	rec, err := o.store.Definitions.GetVersion(ctx, wf, v)
	if err != nil {
		return nil, Internal(err)
	}
	return definitionView(head, rec)
}

// definitionView is the API's view of stored version rec of the workflow
// whose head is head.
func definitionView(head *store.WorkflowHead, rec *store.VersionRecord) (*DefinitionView, error) {
	wf, v := rec.WorkflowID, rec.Version
	var top map[string]json.RawMessage
	if err := json.Unmarshal(rec.Definition, &top); err != nil {
		return nil, Internal(fmt.Errorf("decode stored %s version %d: %w", wf, v, err))
	}
	view := &DefinitionView{
		PropertiesSnapshot: head.Properties,
		Metadata: DefinitionMeta{
			WorkflowID: wf, WorkflowVersionID: v, CreateTime: rec.CreateTime, GitInfo: top["git_info"],
		},
		Workflow:  top["workflow"],
		IsActive:  v == head.Active,
		IsLatest:  v == head.Latest,
		IsDefault: (head.Active != 0 && v == head.Active) || (head.Active == 0 && v == head.Latest),
	}
	if rec.Principal != "" {
		view.Metadata.VersionAuthor = &User{Name: rec.Principal}
	}
	if len(view.PropertiesSnapshot) == 0 {
		view.PropertiesSnapshot = nil
	}
	return view, nil
}
