package localstack

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// TestAdvanceQueueDelays: moving a queue's delays makes its delayed
// messages fall due as if that much time had passed in SQS, leaves other
// queues' and received messages' timers alone, and says what remains.
func TestAdvanceQueueDelays(t *testing.T) {
	ctx := context.Background()
	client := sqs.NewFromConfig(testConfig(t))
	url := createQueue(t, client, false, time.Minute)
	other := createQueue(t, client, false, time.Minute)
	if !emulator.CanAdvanceQueueDelays() {
		// LocalStack or an endpoint from AWS_ENDPOINT_URL.
		if _, _, err := emulator.AdvanceQueueDelays(ctx, []string{url}, time.Minute); !errors.Is(err, ErrNoQueueClock) {
			t.Fatalf("emulator %s: AdvanceQueueDelays error %v, want ErrNoQueueClock", emulator.Kind, err)
		}
		return
	}
	send := func(url, body string, delay int32) {
		t.Helper()
		if _, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(body), DelaySeconds: delay}); err != nil {
			t.Fatal(err)
		}
	}
	send(url, "ten minutes", 600)
	send(url, "fifteen minutes", 900)
	send(other, "other queue", 600)
	advance := func(urls []string, d time.Duration) time.Duration {
		t.Helper()
		next, ok, err := emulator.AdvanceQueueDelays(ctx, urls, d)
		if err != nil || !ok {
			t.Fatalf("advance %v: next %v, ok %v, err %v", d, next, ok, err)
		}
		return next
	}
	// Real time passes while the test runs: remaining delays are checked
	// within a minute of what they would be at once.
	near := func(what string, got, want time.Duration) {
		t.Helper()
		if got > want+time.Millisecond || got < want-time.Minute {
			t.Errorf("%s: %v left, want about %v", what, got, want)
		}
	}
	receiveNone := func(url string) {
		t.Helper()
		out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out.Messages {
			t.Errorf("received %q early", aws.ToString(m.Body))
		}
	}

	near("looking only", advance([]string{url}, 0), 10*time.Minute)
	near("after 8 minutes", advance([]string{url}, 8*time.Minute), 2*time.Minute)
	receiveNone(url)
	near("after 10 minutes", advance([]string{url}, 2*time.Minute), 5*time.Minute)
	got := receiveN(t, client, url, 1, 10*time.Second, nil)
	if len(got) != 1 || aws.ToString(got[0].Body) != "ten minutes" {
		t.Fatalf("after 10 minutes received %d messages, want the ten-minute one", len(got))
	}
	near("the other queue", advance([]string{other}, 0), 10*time.Minute)

	// A received message's visibility timeout is not a delay: it does not
	// move.
	send(url, "now", 0)
	out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), WaitTimeSeconds: 5})
	if err != nil || len(out.Messages) != 1 || aws.ToString(out.Messages[0].Body) != "now" {
		t.Fatalf("receive the undelayed message: %v %+v", err, out)
	}
	near("after 12 minutes", advance([]string{url}, 2*time.Minute), 3*time.Minute)
	receiveNone(url)

	near("after 15 minutes", advance([]string{url}, 3*time.Minute-time.Second), time.Second)
	if _, ok, err := emulator.AdvanceQueueDelays(ctx, []string{url}, time.Second); err != nil || ok {
		t.Fatalf("with no delayed message left: ok %v, err %v", ok, err)
	}
	got = receiveN(t, client, url, 1, 10*time.Second, nil)
	if len(got) != 1 || aws.ToString(got[0].Body) != "fifteen minutes" {
		t.Fatalf("after 15 minutes received %d messages, want the fifteen-minute one", len(got))
	}

	if _, _, err := emulator.AdvanceQueueDelays(ctx, []string{url + "-no-such-queue"}, time.Second); err == nil {
		t.Error("advancing a queue that does not exist: no error")
	}
}
