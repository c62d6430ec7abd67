package infra

import (
	"strings"
	"testing"

	"github.com/maestro-serverless/maestro/bench"
	"github.com/maestro-serverless/maestro/resources"
)

// TestBenchmarkPricesTheDeployedFunctions holds maestro bench's cost
// model (package bench) to what the stack deploys: each function's memory,
// the JSON log format at the default system log level (Lambda's two
// platform records per invocation), active X-Ray tracing, a REST API.
func TestBenchmarkPricesTheDeployedFunctions(t *testing.T) {
	for name, handler := range map[string]string{bench.FunctionAPI: HandlerAPI, bench.FunctionRouter: HandlerRouter,
		bench.FunctionDecider: HandlerDecider, bench.FunctionWorker: HandlerWorker} {
		if got, want := bench.DeployedMemoryMB(name), DefaultFunctionSettings(handler).MemoryMB; got != want {
			t.Errorf("bench prices %s at %d MB; infra deploys it with %d MB", name, got, want)
		}
	}
	// The stack with every default (the full one sizes the worker).
	_, dev := synth(t)
	prefix := resources.Prefix + "-" + dev.stack.Spec.Stage + "-"
	n := 0
	for id, r := range dev.resourcesOf("AWS::Lambda::Function") {
		p := props(r)
		handler, ours := strings.CutPrefix(render(p["FunctionName"]), prefix)
		if !ours {
			continue // CDK's own deploy-time handlers
		}
		n++
		if want := DefaultFunctionSettings(handler).MemoryMB; p["MemorySize"] != float64(want) {
			t.Errorf("%s: MemorySize %v, want %d", id, p["MemorySize"], want)
		}
		logging, _ := p["LoggingConfig"].(map[string]any)
		if logging["LogFormat"] != "JSON" || logging["SystemLogLevel"] != nil {
			t.Errorf("%s: LoggingConfig %v; bench.LambdaPlatformLogBytes prices JSON at the default system level", id, logging)
		}
		if tracing, _ := p["TracingConfig"].(map[string]any); tracing["Mode"] != "Active" {
			t.Errorf("%s: TracingConfig %v; bench prices active tracing (bench.XRaySampledShare)", id, tracing)
		}
	}
	if n != 5 {
		t.Errorf("%d functions, want the five handlers", n)
	}
	if n, v2 := len(dev.resourcesOf("AWS::ApiGateway::RestApi")), len(dev.resourcesOf("AWS::ApiGatewayV2::Api")); n != 1 || v2 != 0 {
		t.Errorf("%d REST APIs and %d HTTP APIs; bench prices one REST API (pricing.APIGatewayRESTRequest)", n, v2)
	}
}
