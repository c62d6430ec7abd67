package localstack

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// TestSendsAndDeletesSideBySideLoseNothing: every message a send accepted
// is received while other messages are deleted at the same time, as the
// router's batches and the workers' deletes meet under a fan-out. (moto
// 5.2 rebuilt a queue's message list on each delete outside the lock its
// sends append under, and lost 8 of a batch of 10; the launcher holds the
// lock.) The race is narrow: the test sends 3,000 messages in batches of
// ten from four senders while four consumers receive and delete.
func TestSendsAndDeletesSideBySideLoseNothing(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	client := sqs.NewFromConfig(testConfig(t))
	url := createQueue(t, client, false, time.Minute)
	const senders, batches = 4, 75 // 4 x 75 x 10 messages
	var (
		mu       sync.Mutex
		received = map[string]bool{}
		sent     sync.WaitGroup
		done     = make(chan struct{})
		errs     = make(chan error, 16)
	)
	for s := range senders {
		sent.Add(1)
		go func() {
			defer sent.Done()
			for b := range batches {
				entries := make([]sqstypes.SendMessageBatchRequestEntry, 10)
				for i := range entries {
					entries[i] = sqstypes.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String(fmt.Sprintf("%d-%d-%d", s, b, i))}
				}
				out, err := client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(url), Entries: entries})
				if err == nil && len(out.Failed) > 0 {
					err = fmt.Errorf("%d entries failed", len(out.Failed))
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var consumers sync.WaitGroup
	for range 4 {
		consumers.Add(1)
		go func() {
			defer consumers.Done()
			for {
				out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10})
				if err != nil {
					errs <- err
					return
				}
				if len(out.Messages) == 0 {
					select {
					case <-done:
						return
					default:
						continue
					}
				}
				entries := make([]sqstypes.DeleteMessageBatchRequestEntry, len(out.Messages))
				mu.Lock()
				for i, m := range out.Messages {
					received[aws.ToString(m.Body)] = true
					entries[i] = sqstypes.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle}
				}
				mu.Unlock()
				if _, err := client.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(url), Entries: entries}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	sent.Wait()
	// Sent: the consumers stop at the first empty receive from here on
	// (the queue's messages are visible at once, none is in flight
	// undeleted for long).
	close(done)
	consumers.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var missing []string
	for s := range senders {
		for b := range batches {
			for i := range 10 {
				if id := fmt.Sprintf("%d-%d-%d", s, b, i); !received[id] {
					missing = append(missing, id)
				}
			}
		}
	}
	if len(missing) > 0 {
		t.Errorf("%d of %d messages sent were never received, first %v", len(missing), senders*batches*10, missing[:min(len(missing), 10)])
	}
}
