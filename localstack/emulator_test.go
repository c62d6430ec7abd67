package localstack

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// closedURL returns a loopback URL nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close()
	return url
}

func envOf(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

func TestDiscoverOrder(t *testing.T) {
	health := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/_localstack/health" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(`{"services":{"dynamodb":"running","sqs":"available"},"edition":"community"}`))
	}))
	defer health.Close()
	notLocalStack := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`<html>something else</html>`))
	}))
	defer notLocalStack.Close()

	tests := []struct {
		name       string
		env        map[string]string
		localstack string
		moto       string
		wantKind   Kind
		wantURL    string
		wantRegion string
		wantErr    error
	}{
		{
			name:       "endpoint variable wins",
			env:        map[string]string{"AWS_ENDPOINT_URL": "http://127.0.0.1:9999/", "AWS_REGION": "eu-west-1"},
			localstack: health.URL,
			wantKind:   KindCustom, wantURL: "http://127.0.0.1:9999", wantRegion: "eu-west-1",
		},
		{
			name:       "localstack health",
			env:        map[string]string{"AWS_DEFAULT_REGION": "ap-south-1"},
			localstack: health.URL,
			wantKind:   KindLocalStack, wantURL: health.URL, wantRegion: "ap-south-1",
		},
		{
			name:       "something else on the port is not localstack",
			localstack: notLocalStack.URL,
			moto:       "no-such-moto-server-program",
			wantErr:    ErrNoEmulator,
		},
		{
			name:       "nothing at all",
			localstack: closedURL(t),
			moto:       "no-such-moto-server-program",
			wantErr:    ErrNoEmulator,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			em, err := Discover(context.Background(), DiscoverOptions{
				Getenv:        envOf(tt.env),
				LocalStackURL: tt.localstack,
				MotoServer:    tt.moto,
			})
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), "install moto (moto_server)") {
					t.Errorf("error %q does not say how to get an emulator", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Discover: %v", err)
			}
			defer em.Close()
			if em.Kind != tt.wantKind || em.Endpoint != tt.wantURL || em.Region != tt.wantRegion {
				t.Errorf("got %+v, want kind %s endpoint %s region %s", em, tt.wantKind, tt.wantURL, tt.wantRegion)
			}
		})
	}
}

func TestDiscoverStartsAndStopsMoto(t *testing.T) {
	if _, err := os.Stat("/proc/self"); err != nil {
		t.Skip("needs /proc to check the child is gone")
	}
	logDir := t.TempDir()
	em, err := Discover(context.Background(), DiscoverOptions{
		Getenv:        envOf(map[string]string{EnvDynamoDBLocal: "off"}),
		LocalStackURL: closedURL(t),
		LogDir:        logDir,
	})
	if err != nil {
		t.Fatalf("Discover: %v", err)
	}
	if em.Kind != KindMoto || em.Region != DefaultRegion || !strings.HasPrefix(em.Endpoint, "http://127.0.0.1:") {
		t.Fatalf("got %+v, want a moto emulator on loopback in %s", em, DefaultRegion)
	}
	if _, err := os.Stat(em.LogFile); err != nil {
		t.Errorf("log file: %v", err)
	}
	pid := em.proc.cmd.Process.Pid

	// It answers real API calls.
	cfg, err := em.AWSConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dynamodb.NewFromConfig(cfg).ListTables(context.Background(), &dynamodb.ListTablesInput{}); err != nil {
		t.Fatalf("ListTables on the started moto: %v", err)
	}

	if err := em.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := em.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
		t.Errorf("moto_server pid %d still exists after Close", pid)
	}
	// What Discover wrote for it (its log, the launcher) is gone with it.
	if left, _ := os.ReadDir(logDir); len(left) > 0 {
		t.Errorf("Close left %d files in the log directory, the first %s", len(left), left[0].Name())
	}
	client := &http.Client{Timeout: time.Second}
	if resp, err := client.Get(em.Endpoint + "/moto-api/"); err == nil {
		resp.Body.Close()
		t.Errorf("moto_server still answers after Close")
	}
}

func TestAWSConfig(t *testing.T) {
	cfg := testConfig(t)
	if aws.ToString(cfg.BaseEndpoint) != emulator.Endpoint {
		t.Errorf("BaseEndpoint = %q, want %q", aws.ToString(cfg.BaseEndpoint), emulator.Endpoint)
	}
	creds, err := cfg.Credentials.Retrieve(context.Background())
	if err != nil || creds.AccessKeyID != "test" || creds.SecretAccessKey != "test" {
		t.Errorf("credentials = %+v, %v; want test/test", creds, err)
	}
	if cfg.Region != emulator.Region {
		t.Errorf("region = %q, want %q", cfg.Region, emulator.Region)
	}
	override, err := emulator.AWSConfig(context.Background(), config.WithRegion("eu-central-1"))
	if err != nil || override.Region != "eu-central-1" {
		t.Errorf("option override: region %q, %v", override.Region, err)
	}
}

func TestRequestCounter(t *testing.T) {
	counter := NewRequestCounter()
	cfg := testConfig(t)
	cfg.APIOptions = append(cfg.APIOptions, counter.Middleware())
	ddb := dynamodb.NewFromConfig(cfg)
	q := sqs.NewFromConfig(cfg)
	ctx := context.Background()

	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 3 {
				if _, err := q.ListQueues(ctx, &sqs.ListQueuesInput{}); err != nil {
					t.Errorf("ListQueues: %v", err)
				}
			}
		})
	}
	wg.Wait()
	if _, err := ddb.ListTables(ctx, &dynamodb.ListTablesInput{}); err != nil {
		t.Fatal(err)
	}
	// A failed call counts too.
	if _, err := ddb.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("no-such-table-" + uniqueStage(t))}); err == nil {
		t.Fatal("DescribeTable of a missing table succeeded")
	}

	got := counter.Snapshot()
	want := map[string]int64{"SQS.ListQueues": 24, "DynamoDB.ListTables": 1, "DynamoDB.DescribeTable": 1}
	if len(got) != len(want) {
		t.Errorf("snapshot = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("snapshot[%s] = %d, want %d (all: %v)", k, got[k], v, got)
		}
	}
	if counter.Total() != 26 {
		t.Errorf("total = %d, want 26", counter.Total())
	}
	got["SQS.ListQueues"] = 0 // a snapshot is a copy
	if counter.Snapshot()["SQS.ListQueues"] != 24 {
		t.Error("changing a snapshot changed the counter")
	}
	counter.Reset()
	if s := counter.Snapshot(); len(s) != 0 {
		t.Errorf("after Reset: %v", s)
	}
	if _, err := ddb.ListTables(ctx, &dynamodb.ListTablesInput{}); err != nil {
		t.Fatal(err)
	}
	if s := counter.Snapshot(); s["DynamoDB.ListTables"] != 1 || len(s) != 1 {
		t.Errorf("after Reset and one call: %v", s)
	}
}
