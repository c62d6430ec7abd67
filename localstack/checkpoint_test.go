package localstack

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
)

// TestStreamPumpResumesFromCheckpoint: a pump restarted with the same
// checkpoints delivers what was written while it was down, and nothing it
// had delivered before (StartAtLatest applies only to a shard without one).
func TestStreamPumpResumesFromCheckpoint(t *testing.T) {
	cfg := testConfig(t)
	res, _ := provisionStage(t, cfg)
	ddb := dynamodb.NewFromConfig(cfg)
	path := filepath.Join(t.TempDir(), "checkpoints.json")
	var rec recorder
	handler := func(_ context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		rec.add(ev)
		return events.DynamoDBEventResponse{}, nil
	}
	newPump := func() *StreamPump {
		cp, err := OpenFileCheckpoints(path)
		if err != nil {
			t.Fatal(err)
		}
		return NewStreamPump(dynamodbstreams.NewFromConfig(cfg), res.Table.StreamARN, handler,
			StreamPumpOptions{StartAtLatest: true, Checkpoints: cp, Filter: NewImageHas("ob"), Interval: 50 * time.Millisecond, Logger: testLogger(t)})
	}

	first := newPump()
	if err := first.Prime(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- first.Run(ctx) }()
	putItem(t, ddb, res.Table.Name, "a", outbox)
	putItem(t, ddb, res.Table.Name, "filtered", nil) // moves the checkpoint without a delivery
	eventually(t, 10*time.Second, "a delivered", func() bool { return rec.seen("a") })
	cp, _ := OpenFileCheckpoints(path)
	eventually(t, 10*time.Second, "the checkpoint past the filtered record", func() bool {
		cp, _ = OpenFileCheckpoints(path)
		return len(cp.seqs[res.Table.StreamARN]) > 0
	})
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	// Written while no pump runs.
	putItem(t, ddb, res.Table.Name, "b", outbox)
	putItem(t, ddb, res.Table.Name, "c", outbox)
	runPump(t, newPump().Run)
	eventually(t, 10*time.Second, "b and c delivered after the restart", func() bool { return rec.seen("b") && rec.seen("c") })
	var keys []string
	for _, call := range func() [][]string { c, _ := rec.snapshot(); return c }() {
		keys = append(keys, call...)
	}
	if fmt.Sprint(keys) != "[a b c]" {
		t.Errorf("delivered %v, want [a b c] (each once, in order)", keys)
	}
}

func TestFileCheckpointsRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "cp.json")
	c, err := OpenFileCheckpoints(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Load("arn", "shard"); ok {
		t.Fatal("a new file has a checkpoint")
	}
	if err := c.Save("arn", "shard", "42"); err != nil {
		t.Fatal(err)
	}
	c2, err := OpenFileCheckpoints(path)
	if err != nil {
		t.Fatal(err)
	}
	if seq, ok := c2.Load("arn", "shard"); !ok || seq != "42" {
		t.Fatalf("reloaded checkpoint %q %v, want 42", seq, ok)
	}
}
