package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/maestro-serverless/maestro/localstack"
	"github.com/maestro-serverless/maestro/localstack/stack"
)

// ItemsBucket stands for the local stack's bucket in a workload's
// definition until the stack is up.
const ItemsBucket = "bench-items-bucket"

// ForeachItems returns a workflow whose one foreach step runs n iterations
// of one NoOp step, at most concurrency at once, one for each item of a
// JSONL object in the stack's bucket (items_from): what reading items from
// S3 adds to a loop.
func ForeachItems(workflowID string, n, concurrency int) (*Workload, error) {
	if err := checkForeach(n, concurrency); err != nil {
		return nil, err
	}
	key := "bench/" + workflowID + ".jsonl"
	w, err := foreachDefinition("foreachitems", workflowID, fmt.Sprintf("bench: foreach of %d NoOp iterations from S3 items, %d at once", n, concurrency), n,
		map[string]any{"id": "loop", "concurrency": concurrency,
			"items_from": map[string]any{"s3_uri": "s3://" + ItemsBucket + "/" + key, "fields": map[string]any{"id": "STRING", "n": "LONG"}},
			"steps":      []any{map[string]any{"step": map[string]any{"id": "body", "type": "NoOp"}}}})
	if err != nil {
		return nil, err
	}
	w.Items, w.ItemsKey = n, key
	return w, nil
}

// WriteItems writes the n items of the foreachitems workload's object, one
// JSON object a line.
func WriteItems(w io.Writer, n int) error {
	bw := bufio.NewWriter(w)
	for i := range n {
		if _, err := fmt.Fprintf(bw, "{\"id\":\"item-%07d\",\"n\":%d}\n", i, i); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// putItems puts the items of w's object into st's bucket and returns w's
// definition naming that bucket.
func putItems(ctx context.Context, st *stack.Stack, w *Workload) ([]byte, error) {
	var body bytes.Buffer
	if err := WriteItems(&body, w.Items); err != nil {
		return nil, err
	}
	awsCfg, err := st.Emulator.AWSConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("bench: the emulator's AWS config: %w", err)
	}
	bucket := st.Resources.Bucket.Name
	client := s3.NewFromConfig(awsCfg, localstack.UsePathStyle)
	if _, err := client.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(bucket), Key: aws.String(w.ItemsKey), Body: bytes.NewReader(body.Bytes()),
	}); err != nil {
		return nil, fmt.Errorf("bench: put the %s items: %w", w.Name, err)
	}
	return bytes.ReplaceAll(w.Definition, []byte(ItemsBucket), []byte(bucket)), nil
}
