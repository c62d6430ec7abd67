package stack

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/maestro-serverless/maestro/localstack"
	"github.com/maestro-serverless/maestro/resources"
)

// emulator is the AWS emulator the package's integration tests share.
var emulator *localstack.Emulator

// TestMain finds or starts an emulator; without one the tests fail.
func TestMain(m *testing.M) {
	os.Exit(localstack.RunWithEmulator(m, func(e *localstack.Emulator) { emulator = e }))
}

// testConfig returns an SDK configuration for the shared emulator.
func testConfig(t *testing.T) aws.Config {
	t.Helper()
	cfg, err := emulator.AWSConfig(context.Background())
	if err != nil {
		t.Fatalf("AWSConfig: %v", err)
	}
	return cfg
}

// uniqueStage returns a stage name no other test uses.
func uniqueStage(t *testing.T) string {
	t.Helper()
	s, err := resources.ParseStage(fmt.Sprintf("k%08x", rand.Uint32()))
	if err != nil {
		t.Fatal(err)
	}
	return s
}
