package store

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/maestro-serverless/maestro/store/internal/layout"
)

// GetVersions reads many versions of a workflow at once (BatchGetItem, 100
// keys a request, strongly consistent): the records of those that exist,
// by version number. Readers of a page of versions use it instead of one
// GetItem each.
func (s *Definitions) GetVersions(ctx context.Context, workflowID string, versions []int64) (map[int64]*VersionRecord, error) {
	keys := make([]map[string]types.AttributeValue, len(versions))
	for i, v := range versions {
		keys[i] = key(layout.WorkflowPK(workflowID), layout.VersionSK(v))
	}
	items, err := s.batchGet(ctx, keys)
	if err != nil {
		return nil, fmt.Errorf("store: get versions of %s: %w", workflowID, err)
	}
	out := make(map[int64]*VersionRecord, len(items))
	for _, item := range items {
		var v int64
		if _, err := fmt.Sscanf(getS(item, attrSK), "V#%d", &v); err != nil {
			return nil, fmt.Errorf("store: version key %q: %w", getS(item, attrSK), err)
		}
		def, err := decodeBody(item)
		if err != nil {
			return nil, err
		}
		out[v] = &VersionRecord{
			WorkflowID: workflowID, Version: v, Definition: def,
			CreateTime: getN(item, "create_time"), Principal: getS(item, attrPrincipal),
		}
	}
	return out, nil
}

// ListWorkflowsBefore is ListWorkflows backwards: up to limit workflow
// heads in descending id order, before the workflow id cursor ("" starts
// at the last id), and the cursor to go on from ("" when this page ended
// the list). Like ListWorkflows, a page that reaches its limit has a
// cursor even when nothing is left.
func (s *Definitions) ListWorkflowsBefore(ctx context.Context, cursor string, limit int) ([]*WorkflowHead, string, error) {
	return s.listDirectory(ctx, cursor, limit, true)
}

// GetVersionStamps is GetVersions without the definitions: each existing
// version's number, create time and principal, read with a projection so
// a long history costs its keys, not its documents.
func (s *Definitions) GetVersionStamps(ctx context.Context, workflowID string, versions []int64) (map[int64]*VersionRecord, error) {
	keys := make([]map[string]types.AttributeValue, len(versions))
	for i, v := range versions {
		keys[i] = key(layout.WorkflowPK(workflowID), layout.VersionSK(v))
	}
	items, err := s.batchRead(ctx, keys, types.KeysAndAttributes{
		ConsistentRead:           aws.Bool(true),
		ProjectionExpression:     aws.String("#sk, create_time, #pr"),
		ExpressionAttributeNames: map[string]string{"#sk": attrSK, "#pr": attrPrincipal},
	})
	if err != nil {
		return nil, fmt.Errorf("store: get version stamps of %s: %w", workflowID, err)
	}
	out := make(map[int64]*VersionRecord, len(items))
	for _, item := range items {
		var v int64
		if _, err := fmt.Sscanf(getS(item, attrSK), "V#%d", &v); err != nil {
			return nil, fmt.Errorf("store: version key %q: %w", getS(item, attrSK), err)
		}
		out[v] = &VersionRecord{WorkflowID: workflowID, Version: v, CreateTime: getN(item, "create_time"), Principal: getS(item, attrPrincipal)}
	}
	return out, nil
}
