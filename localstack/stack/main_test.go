package stack

import (
	"os"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/maestro-serverless/maestro/localstack"
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
	return emulator.TestConfig(t)
}

// uniqueStage returns a stage name no other test uses.
func uniqueStage(t *testing.T) string {
	t.Helper()
	return localstack.RandomStage(t, "k")
}
