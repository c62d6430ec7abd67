package store

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/maestro-serverless/maestro/store/internal/layout"
)

// Breakpoint items live in the workflow's partition:
//
//	WF#<wf>  BP#<step>#<version:10>#<instance:12>#<run:6>#<attempt:4>
//
// The key holds every match field, so adding the same breakpoint twice
// stores it once (layout.BreakpointSK).

// Breakpoint pauses the matching attempts of a workflow's step; zero
// fields match all.
type Breakpoint struct {
	StepID     string
	Version    int64
	Instance   int64
	Run        int64
	Attempt    int64
	CreateTime int64
}

// PutBreakpoint stores a breakpoint of workflow wf.
func (s *Gates) PutBreakpoint(ctx context.Context, wf string, b Breakpoint) error {
	item := merge(key(layout.WorkflowPK(wf), layout.BreakpointSK(b.StepID, b.Version, b.Instance, b.Run, b.Attempt)), map[string]types.AttributeValue{
		"step": str(b.StepID), "version": num(b.Version), "instance": num(b.Instance),
		"run": num(b.Run), "attempt": num(b.Attempt), "create_time": num(b.CreateTime),
	})
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item}); err != nil {
		return fmt.Errorf("store: put breakpoint of %s step %s: %w", wf, b.StepID, err)
	}
	return nil
}

// ListBreakpoints returns workflow wf's breakpoints, of step step only
// when it is not empty, ordered by step. consistent asks for a strongly
// consistent read.
func (s *Gates) ListBreakpoints(ctx context.Context, wf, step string, consistent bool) ([]Breakpoint, error) {
	var out []Breakpoint
	in := s.prefixQuery(layout.WorkflowPK(wf), layout.BreakpointPrefix(step))
	in.ConsistentRead = aws.Bool(consistent)
	err := s.queryAll(ctx, in, func(it map[string]types.AttributeValue) error {
		out = append(out, Breakpoint{
			StepID: getS(it, "step"), Version: getN(it, "version"), Instance: getN(it, "instance"),
			Run: getN(it, "run"), Attempt: getN(it, "attempt"), CreateTime: getN(it, "create_time"),
		})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: list breakpoints of %s: %w", wf, err)
	}
	return out, nil
}

// DeleteBreakpoints removes every breakpoint of workflow wf's step and
// returns them.
func (s *Gates) DeleteBreakpoints(ctx context.Context, wf, step string) ([]Breakpoint, error) {
	bps, err := s.ListBreakpoints(ctx, wf, step, true)
	if err != nil {
		return nil, err
	}
	for _, b := range bps {
		_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
			TableName: aws.String(s.table), Key: key(layout.WorkflowPK(wf), layout.BreakpointSK(b.StepID, b.Version, b.Instance, b.Run, b.Attempt)),
		})
		if err != nil {
			return nil, fmt.Errorf("store: delete breakpoint of %s step %s: %w", wf, step, err)
		}
	}
	return bps, nil
}
