package localstack

import (
	"context"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// BenchmarkDynamoDBLocal measures what the local stack's DynamoDB can serve:
// requests a second from 16 concurrent clients on a fresh DynamoDB Local
// (its own process per case, as the table count of one process changes its
// speed), on a table with a stream of both images like the stack's, with
// and without a global secondary index (the stack's table has one). Writes
// create items of 700 bytes, as a step attempt's claim does.
//
// DynamoDB Local runs every write under one lock, so these figures bound
// how many steps a second the local stack can run: see
// docs/benchmarks.md.
func BenchmarkDynamoDBLocal(b *testing.B) {
	for _, bc := range []struct {
		name  string
		index bool
		read  bool
		// transact writes this many items (of one partition) per
		// TransactWriteItems instead of one per UpdateItem.
		transact int
	}{
		{"write/no-index", false, false, 0},
		{"write/index", true, false, 0},
		{"read/index", true, true, 0},
		{"transact-8/index", true, false, 8},
	} {
		// One process per case; each call of the case's function (Go
		// calls it with b.N = 1 first) gets a table of its own.
		db, stop := dynamoDBLocalForBench(b)
		calls := 0
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			calls++
			table := "bench-" + strconv.Itoa(calls)
			in := &dynamodb.CreateTableInput{
				TableName: aws.String(table),
				AttributeDefinitions: []ddbtypes.AttributeDefinition{
					{AttributeName: aws.String("pk"), AttributeType: ddbtypes.ScalarAttributeTypeS},
					{AttributeName: aws.String("sk"), AttributeType: ddbtypes.ScalarAttributeTypeS},
				},
				KeySchema: []ddbtypes.KeySchemaElement{
					{AttributeName: aws.String("pk"), KeyType: ddbtypes.KeyTypeHash},
					{AttributeName: aws.String("sk"), KeyType: ddbtypes.KeyTypeRange},
				},
				BillingMode:         ddbtypes.BillingModePayPerRequest,
				StreamSpecification: &ddbtypes.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: ddbtypes.StreamViewTypeNewAndOldImages},
			}
			if bc.index {
				in.AttributeDefinitions = append(in.AttributeDefinitions,
					ddbtypes.AttributeDefinition{AttributeName: aws.String("ipk"), AttributeType: ddbtypes.ScalarAttributeTypeS},
					ddbtypes.AttributeDefinition{AttributeName: aws.String("isk"), AttributeType: ddbtypes.ScalarAttributeTypeS})
				in.GlobalSecondaryIndexes = []ddbtypes.GlobalSecondaryIndex{{
					IndexName: aws.String("index"),
					KeySchema: []ddbtypes.KeySchemaElement{
						{AttributeName: aws.String("ipk"), KeyType: ddbtypes.KeyTypeHash},
						{AttributeName: aws.String("isk"), KeyType: ddbtypes.KeyTypeRange},
					},
					Projection: &ddbtypes.Projection{ProjectionType: ddbtypes.ProjectionTypeKeysOnly},
				}}
			}
			if _, err := db.CreateTable(ctx, in); err != nil {
				b.Fatal(err)
			}
			body := &ddbtypes.AttributeValueMemberB{Value: make([]byte, 700)}
			key := func(i int64) map[string]ddbtypes.AttributeValue {
				return map[string]ddbtypes.AttributeValue{
					"pk": &ddbtypes.AttributeValueMemberS{Value: "run#" + strconv.FormatInt(i%500, 10)},
					"sk": &ddbtypes.AttributeValueMemberS{Value: "S#" + strconv.FormatInt(i, 10)},
				}
			}
			write := func(i int64) error {
				_, err := db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
					TableName:                aws.String(table),
					Key:                      key(i),
					UpdateExpression:         aws.String("SET #st = :st, #b = :b"),
					ConditionExpression:      aws.String("attribute_not_exists(#st)"),
					ExpressionAttributeNames: map[string]string{"#st": "status", "#b": "body"},
					ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{
						":st": &ddbtypes.AttributeValueMemberS{Value: "RUNNING"}, ":b": body,
					},
				})
				return err
			}
			transact := func(i int64, n int) error {
				tx := make([]ddbtypes.TransactWriteItem, n)
				for k := range tx {
					tx[k].Put = &ddbtypes.Put{
						TableName: aws.String(table),
						Item: map[string]ddbtypes.AttributeValue{
							"pk":     &ddbtypes.AttributeValueMemberS{Value: "tx#" + strconv.FormatInt(i, 10)},
							"sk":     &ddbtypes.AttributeValueMemberS{Value: "S#" + strconv.Itoa(k)},
							"status": &ddbtypes.AttributeValueMemberS{Value: "RUNNING"},
							"body":   body,
						},
						ConditionExpression: aws.String("attribute_not_exists(pk)"),
					}
				}
				_, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: tx})
				return err
			}
			const items = 2000
			if bc.read {
				for i := int64(0); i < items; i++ {
					if err := write(i); err != nil {
						b.Fatal(err)
					}
				}
			}
			var next atomic.Int64
			if !bc.read {
				next.Store(items)
			}
			b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0)))
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := next.Add(1)
					var err error
					switch {
					case bc.read:
						_, err = db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: key(i % items), ConsistentRead: aws.Bool(true)})
					case bc.transact > 0:
						err = transact(i, bc.transact)
					default:
						err = write(i)
					}
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "requests/s")
		})
		stop()
	}
}

// dynamoDBLocalForBench starts a DynamoDB Local of the benchmark's own and
// returns a client of it and what stops it; the benchmark fails when it is
// not installed.
func dynamoDBLocalForBench(b *testing.B) (*dynamodb.Client, func()) {
	b.Helper()
	jar, java, err := dynamoDBLocalCommand(os.Getenv)
	if err != nil {
		b.Fatalf("DynamoDB Local is not runnable here (run make dynamodb-local): %v", err)
	}
	ctx := context.Background()
	ep, proc, _, err := startDynamoDBLocal(ctx, java, jar, b.TempDir(), 60*time.Second, &http.Client{Timeout: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	stop := func() {
		if err := proc.stop(); err != nil {
			b.Log(err)
		}
	}
	return dynamodb.New(dynamodb.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(ep),
		Credentials:  credentials.NewStaticCredentialsProvider("local", "local", ""),
	}), stop
}
