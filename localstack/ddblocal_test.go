package localstack

import (
	"context"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
)

// TestDiscoverRunsDynamoDBLocalBesideMoto: with DynamoDB Local installed
// (make test installs it), a started moto_server gets DynamoDB Local beside
// it; the SDK configuration sends DynamoDB and DynamoDB Streams there and
// every other service to moto, AWS_ENDPOINT_URL_DYNAMODB still overrides
// it, and Close stops both children.
func TestDiscoverRunsDynamoDBLocalBesideMoto(t *testing.T) {
	setting := os.Getenv(EnvDynamoDBLocal)
	if setting == "off" {
		t.Skip(EnvDynamoDBLocal + "=off: DynamoDB runs on moto by request")
	}
	if _, _, err := dynamoDBLocalCommand(os.Getenv); err != nil {
		t.Fatalf("DynamoDB Local is not runnable here (run make dynamodb-local): %v", err)
	}
	ctx := context.Background()
	em, err := Discover(ctx, DiscoverOptions{
		Getenv:        envOf(map[string]string{EnvDynamoDBLocal: setting}),
		LocalStackURL: closedURL(t),
		LogDir:        t.TempDir(),
	})
	if err != nil {
		t.Fatalf("Discover: %v", err)
	}
	defer em.Close()
	if em.Kind != KindMoto || em.DynamoDBEndpoint == "" || em.DynamoDBEndpoint == em.Endpoint {
		t.Fatalf("got %+v, want moto with DynamoDB Local beside it", em)
	}

	cfg := em.TestConfig(t)
	table := "ddblocal-" + uniqueStage(t)
	if _, err := dynamodb.NewFromConfig(cfg).CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(table),
		AttributeDefinitions: []ddbtypes.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: ddbtypes.ScalarAttributeTypeS}},
		KeySchema:            []ddbtypes.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: ddbtypes.KeyTypeHash}},
		BillingMode:          ddbtypes.BillingModePayPerRequest,
		StreamSpecification:  &ddbtypes.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: ddbtypes.StreamViewTypeNewAndOldImages},
	}); err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	tablesAt := func(endpoint string) []string {
		t.Helper()
		out, err := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(endpoint) }).
			ListTables(ctx, &dynamodb.ListTablesInput{})
		if err != nil {
			t.Fatalf("ListTables at %s: %v", endpoint, err)
		}
		return out.TableNames
	}
	if !slices.Contains(tablesAt(em.DynamoDBEndpoint), table) {
		t.Errorf("table %s is not in DynamoDB Local", table)
	}
	if slices.Contains(tablesAt(em.Endpoint), table) {
		t.Errorf("table %s went to moto", table)
	}
	streams, err := dynamodbstreams.NewFromConfig(cfg).ListStreams(ctx, &dynamodbstreams.ListStreamsInput{TableName: aws.String(table)})
	if err != nil || len(streams.Streams) != 1 {
		t.Errorf("ListStreams of %s through the config: %+v, %v; want its one stream", table, streams, err)
	}

	// The per-service variable wins over the emulator's own routing.
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", em.Endpoint)
	overridden := em.TestConfig(t)
	out, err := dynamodb.NewFromConfig(overridden).ListTables(ctx, &dynamodb.ListTablesInput{})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(out.TableNames, table) {
		t.Errorf("AWS_ENDPOINT_URL_DYNAMODB=%s did not override DynamoDB Local", em.Endpoint)
	}

	pids := []int{em.proc.cmd.Process.Pid, em.ddbProc.cmd.Process.Pid}
	if err := em.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for _, pid := range pids {
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
			t.Errorf("pid %d still exists after Close", pid)
		}
	}
}

func TestDynamoDBLocalSetting(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := dynamoDBLocalCommand(envOf(map[string]string{EnvDynamoDBLocal: "OFF"})); !errors.Is(err, errDynamoDBLocalOff) {
		t.Errorf("off: %v", err)
	}
	// A directory named on purpose must hold the jar: an error, not moto.
	_, _, err := dynamoDBLocalCommand(envOf(map[string]string{EnvDynamoDBLocal: dir}))
	if err == nil || errors.Is(err, errDynamoDBLocalAbsent) {
		t.Errorf("empty named dir: %v, want a hard error", err)
	}
	if err := os.WriteFile(dir+"/DynamoDBLocal.jar", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if jar, ok := dynamoDBLocalJar(dir); !ok || jar != dir+"/DynamoDBLocal.jar" {
		t.Errorf("jar in dir: %q %v", jar, ok)
	}
}

// TestCloseSaysWhenDynamoDBLocalEndedOnItsOwn: an emulator child that ended
// while in use (here killed from outside) is named by Close's error, with
// its exit and the end of its log, and that log is kept.
func TestCloseSaysWhenDynamoDBLocalEndedOnItsOwn(t *testing.T) {
	if os.Getenv(EnvDynamoDBLocal) == "off" {
		t.Skip(EnvDynamoDBLocal + "=off: DynamoDB runs on moto by request")
	}
	em, err := Discover(context.Background(), DiscoverOptions{LocalStackURL: closedURL(t), LogDir: t.TempDir()})
	if err != nil {
		t.Fatalf("Discover: %v", err)
	}
	if em.ddbProc == nil {
		_ = em.Close()
		t.Fatal("no DynamoDB Local beside moto_server")
	}
	if err := em.ddbProc.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if !em.ddbProc.exitsWithin(30 * time.Second) {
		t.Fatal("DynamoDB Local did not end on SIGKILL")
	}
	err = em.Close()
	if err == nil || !strings.Contains(err.Error(), "DynamoDB Local (pid") || !strings.Contains(err.Error(), "ended before Close (signal: killed)") {
		t.Fatalf("Close: %v, want DynamoDB Local's end named", err)
	}
	if _, serr := os.Stat(em.DynamoDBLogFile); serr != nil {
		t.Errorf("its log %s was not kept: %v", em.DynamoDBLogFile, serr)
	}
	if _, serr := os.Stat(em.LogFile); !errors.Is(serr, os.ErrNotExist) {
		t.Errorf("moto_server's log %s, stopped by Close, is still there (%v)", em.LogFile, serr)
	}
}
