package store

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/maestro-serverless/maestro/store/internal/layout"
)

// A running foreach step's evaluated loop params live in an item of their
// own once they are large (engine.Offload): X#<run>#<step>#<attempt> in the
// run's partition, written by the commit whose state first leaves them out
// and read by the decisions that launch iterations. Without it a loop of
// 100,000 iterations rewrote its arrays (~20 KB gzipped) with every commit
// of its run. (X sorts after every other kind of the partition, so that no
// query of the run's events, attempts or timeline reads it.)

// LoopParams is the loop params item of a foreach step attempt: Body is the
// JSON of its evaluated loop_params.
type LoopParams struct {
	StepID  string
	Attempt int64
	Body    []byte
}

// loopParamsItem is the write of loop params item p of run run.
func (s *base) loopParamsItem(wf string, inst, run int64, p LoopParams) (types.TransactWriteItem, error) {
	body, err := s.encodeBody(p.Body)
	if err != nil {
		return types.TransactWriteItem{}, err
	}
	if n := AttributeValueSize(body[attrBody]); n > MaxItemBytes {
		return types.TransactWriteItem{}, fmt.Errorf("store: commit %s/%d/%d: %w", wf, inst, run,
			&ItemTooLargeError{Item: fmt.Sprintf("loop params of step %s/%d", p.StepID, p.Attempt), Bytes: n})
	}
	item := merge(key(layout.RunPK(wf, inst), layout.LoopParamsSK(run, p.StepID, p.Attempt)), body)
	return types.TransactWriteItem{Put: &types.Put{TableName: aws.String(s.table), Item: item}}, nil
}

// GetLoopParams reads the loop params item of a foreach step attempt
// (strongly consistent): ErrNotFound when there is none.
func (s *Runs) GetLoopParams(ctx context.Context, wf string, inst, run int64, step string, attempt int64) ([]byte, error) {
	item, err := s.getItem(ctx, key(layout.RunPK(wf, inst), layout.LoopParamsSK(run, step, attempt)),
		"loop params of %s/%d/%d step %s/%d", wf, inst, run, step, attempt)
	if err != nil {
		return nil, err
	}
	return decodeBody(item)
}
