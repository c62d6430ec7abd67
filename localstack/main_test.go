package localstack

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/maestro-serverless/maestro/resources"
)

// emulator is the AWS emulator every integration test of the package shares.
var emulator *Emulator

// TestMain finds or starts an emulator. With none available the tests fail:
// they are the package's proof that it works against real wire protocols.
func TestMain(m *testing.M) {
	os.Exit(RunWithEmulator(m, func(e *Emulator) { emulator = e }))
}

// testLogger sends pump logs to the test log.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(p))
	return len(p), nil
}

// testConfig returns an SDK configuration for the shared emulator.
func testConfig(t *testing.T) aws.Config {
	t.Helper()
	return emulator.TestConfig(t)
}

// uniqueStage returns a stage name no other test uses, so tests can share
// one emulator.
func uniqueStage(t *testing.T) string {
	t.Helper()
	return RandomStage(t, "t")
}

// provisionStage provisions a fresh stage and returns its resources.
func provisionStage(t *testing.T, cfg aws.Config) (*Resources, resources.Spec) {
	t.Helper()
	spec := resources.ForStage(uniqueStage(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := Provision(ctx, cfg, spec)
	if err != nil {
		t.Fatalf("Provision: %v", err)
	}
	return res, spec
}

// createQueue makes a queue for one test with a short visibility timeout.
func createQueue(t *testing.T, client *sqs.Client, fifo bool, visibility time.Duration) string {
	t.Helper()
	name := uniqueStage(t)
	attrs := map[string]string{"VisibilityTimeout": seconds(visibility)}
	if fifo {
		name += ".fifo"
		attrs["FifoQueue"] = "true"
	}
	out, err := client.CreateQueue(context.Background(), &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err != nil {
		t.Fatalf("create queue %s: %v", name, err)
	}
	return aws.ToString(out.QueueUrl)
}

// receiveN receives messages from url until it has n or timeout passes,
// deleting what it receives. A receive in progress is never cancelled, so
// no message is left in flight unseen.
func receiveN(t *testing.T, client *sqs.Client, url string, n int, timeout time.Duration, keep func(sqstypes.Message) bool) []sqstypes.Message {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(timeout)
	var got []sqstypes.Message
	for len(got) < n && time.Now().Before(deadline) {
		out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl:                    aws.String(url),
			MaxNumberOfMessages:         10,
			WaitTimeSeconds:             1,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
			MessageAttributeNames:       []string{"All"},
		})
		if err != nil {
			t.Fatalf("receive from %s: %v", url, err)
		}
		for _, m := range out.Messages {
			if _, err := client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatalf("delete: %v", err)
			}
			if keep == nil || keep(m) {
				got = append(got, m)
			}
		}
	}
	return got
}

// queueDepth returns the visible plus in-flight messages of a queue.
func queueDepth(t *testing.T, client *sqs.Client, url string) int {
	t.Helper()
	out, err := client.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(url),
		AttributeNames: []sqstypes.QueueAttributeName{
			sqstypes.QueueAttributeNameApproximateNumberOfMessages,
			sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
		},
	})
	if err != nil {
		t.Fatalf("queue attributes: %v", err)
	}
	var n int
	for _, k := range []string{"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"} {
		var v int
		fmt.Sscan(out.Attributes[k], &v)
		n += v
	}
	return n
}

// eventually polls cond every 50 ms until it holds or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	Eventually(t, timeout, what, cond)
}

// runPump runs a pump's Run in the background until the test ends, and
// fails the test if Run returns an error.
func runPump(t *testing.T, run func(context.Context) error) context.CancelFunc {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("pump Run: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Errorf("pump did not stop within 15 s of cancel")
		}
	})
	return cancel
}
