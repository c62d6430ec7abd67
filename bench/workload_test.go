package bench

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/definition"
)

func TestChain(t *testing.T) {
	w, err := Chain("bench-chain", 4)
	require.NoError(t, err)
	assert.Equal(t, 4, w.Steps)
	assert.Equal(t, map[string][]string{"s2": {"s1"}, "s3": {"s2"}, "s4": {"s3"}}, w.Upstreams)

	def, err := definition.NewChecker().Check(w.Definition, definition.JSON)
	require.NoError(t, err, "the generated chain must be a valid definition")
	require.Len(t, def.Workflow.Steps, 4)
	assert.Equal(t, "bench-chain", def.Workflow.ID)
}

func TestFanOut(t *testing.T) {
	w, err := FanOut("bench-fan", 3)
	require.NoError(t, err)
	assert.Equal(t, 5, w.Steps)
	assert.Equal(t, map[string][]string{
		"f1": {"root"}, "f2": {"root"}, "f3": {"root"}, "join": {"f1", "f2", "f3"},
	}, w.Upstreams)

	def, err := definition.NewChecker().Check(w.Definition, definition.JSON)
	require.NoError(t, err, "the generated fan-out must be a valid definition")
	require.Len(t, def.Workflow.Steps, 5)
}

func TestHTTPJoins(t *testing.T) {
	w, err := HTTPJoins("bench-joins", "http://127.0.0.1:1/", 3, 2)
	require.NoError(t, err)
	assert.Equal(t, 6, w.Steps)
	assert.True(t, w.CallsServer)
	assert.Equal(t, map[string][]string{
		"j2_1": {"j1_1", "j1_2"}, "j2_2": {"j1_1", "j1_2"}, "j3_1": {"j2_1", "j2_2"}, "j3_2": {"j2_1", "j2_2"},
	}, w.Upstreams)
	def, err := definition.NewChecker().Check(w.Definition, definition.JSON)
	require.NoError(t, err, "the generated join DAG must be a valid definition")
	require.Len(t, def.Workflow.Steps, 6)
	_, err = HTTPJoins("j", "http://127.0.0.1:1/", 0, 4)
	require.Error(t, err)
	_, err = HTTPJoins("j", "http://127.0.0.1:1/", 5, 0)
	require.Error(t, err)
}

func TestWorkloadsAtFullSizeAreValid(t *testing.T) {
	chain, err := Chain("c", DefaultSteps)
	require.NoError(t, err)
	fan, err := FanOut("f", DefaultSteps)
	require.NoError(t, err)
	for _, w := range []*Workload{chain, fan} {
		_, err := definition.NewChecker().Check(w.Definition, definition.JSON)
		require.NoError(t, err, w.Name)
	}
	assert.Len(t, chain.Upstreams, DefaultSteps-1)
	assert.Len(t, fan.Upstreams, DefaultSteps+1)
}

func TestWorkloadSizeMustBePositive(t *testing.T) {
	_, err := Chain("c", 0)
	require.Error(t, err)
	_, err = FanOut("f", 0)
	require.Error(t, err)
}

func TestHTTPWorkloadsAreValid(t *testing.T) {
	chain, err := HTTPChain("httpchain", "c", "http://127.0.0.1:1/", DefaultHTTPChain)
	require.NoError(t, err)
	assert.Equal(t, "httpchain", chain.Name)
	assert.Len(t, chain.Upstreams, DefaultHTTPChain-1)
	require.NoError(t, chain.Concurrently(DefaultHTTPChains))
	fan, err := HTTPFan("f", "http://127.0.0.1:1/", DefaultHTTPFan)
	require.NoError(t, err)
	assert.Empty(t, fan.Upstreams)
	for _, w := range []*Workload{chain, fan} {
		def, err := definition.NewChecker().Check(w.Definition, definition.JSON)
		require.NoError(t, err, w.Name)
		assert.True(t, w.CallsServer, w.Name)
		if w == chain {
			assert.Equal(t, "PARALLEL", string(def.Properties.RunStrategy.Rule))
			assert.EqualValues(t, DefaultHTTPChains, def.Properties.RunStrategy.WorkflowConcurrency)
		} else {
			require.NotNil(t, def.Workflow.InstanceStepConcurrency)
			assert.EqualValues(t, DefaultHTTPFan, *def.Workflow.InstanceStepConcurrency)
		}
	}
}

func TestForeachWorkloadIsValid(t *testing.T) {
	for _, n := range []int{1, 5000, 100_000} {
		w, err := Foreach(fmt.Sprintf("bench-foreach-%d", n), n, 500)
		require.NoError(t, err)
		_, err = definition.NewChecker().Check(w.Definition, definition.JSON)
		require.NoError(t, err, "%d iterations", n)
		assert.Equal(t, n, w.Iterations)
	}
	_, err := Foreach("odd", 100_001, 500)
	assert.ErrorContains(t, err, "use a round number")
	w, err := ForeachHTTP("bench-foreachhttp-1000", "http://127.0.0.1:9/", 1000, 100)
	require.NoError(t, err)
	def, err := definition.NewChecker().Check(w.Definition, definition.JSON)
	require.NoError(t, err)
	assert.Equal(t, "foreachhttp", w.Name)
	assert.Equal(t, 1000, w.Iterations)
	body := def.Workflow.Steps[0].Steps[0]
	assert.Equal(t, "Http", string(body.Type))
}
