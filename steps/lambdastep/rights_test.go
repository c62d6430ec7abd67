package lambdastep

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/teamrights"
)

// invoked counts invocations: a refused step must not reach Lambda.
type invoked struct{ n int }

func (c *invoked) Invoke(context.Context, *lambda.InvokeInput, ...func(*lambda.Options)) (*lambda.InvokeOutput, error) {
	c.n++
	return &lambda.InvokeOutput{Payload: []byte(`{"ok": true}`)}, nil
}

func TestTeamLambdaAllowList(t *testing.T) {
	data := teamrights.Scope{Enforced: true, Team: "data", Rights: teamrights.Rights{Lambdas: []string{"etl-*"}}}
	for _, tc := range []struct {
		name     string
		function string
		scope    teamrights.Scope
		err      error
		outcome  engine.Outcome // "" when invoked
		want     string
	}{
		{"no team rights", "payroll", teamrights.Scope{}, nil, "", ""},
		{"on the team's list", "etl-load", data, nil, "", ""},
		{"an ARN by the team's name pattern", "arn:aws:lambda:us-east-1:123456789012:function:etl-load", data, nil, "", ""},
		{"off the team's list", "payroll", data, nil, engine.OutcomeFatalError, `function "payroll" is not on team "data"'s lambdas (teams.data.lambdas: etl-*); add a pattern matching it to CDK context teams.data.lambdas`},
		{"a team with no lambdas", "etl-load", teamrights.Scope{Enforced: true, Team: "ml"}, nil, engine.OutcomeFatalError, "teams.ml.lambdas is empty"},
		{"owners without rights", "etl-load", teamrights.Scope{}, teamrights.Refused("owners name no team"), engine.OutcomeFatalError, "owners name no team"},
		{"rights unreadable", "etl-load", teamrights.Scope{}, errors.New("throttled"), engine.OutcomePlatformError, "throttled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &invoked{}
			r, err := New(Config{Client: c, AllowFunctions: []string{"etl-load", "payroll", "arn:aws:lambda:us-east-1:123456789012:function:etl-load"},
				Rights: func(context.Context, orchestrator.StepWork) (teamrights.Scope, error) { return tc.scope, tc.err }})
			if err != nil {
				t.Fatal(err)
			}
			m := orchestrator.StepWork{StepRef: orchestrator.StepRef{WorkflowID: "wf", StepID: "f", Attempt: 1},
				Params: engine.Values{ParamLambda: map[string]any{"function_name": tc.function}}}
			res, err := r.RunStep(context.Background(), m)
			if err != nil {
				t.Fatal(err)
			}
			if tc.outcome == "" {
				if res.Outcome != engine.OutcomeSucceeded || c.n != 1 {
					t.Errorf("RunStep = %+v after %d invocations; want it invoked once", res, c.n)
				}
				return
			}
			if res.Outcome != tc.outcome || !strings.Contains(res.Message, tc.want) || c.n != 0 {
				t.Errorf("RunStep = %+v after %d invocations; want %s saying %q, nothing invoked", res, c.n, tc.outcome, tc.want)
			}
			// An asynchronous invocation is refused the same way.
			m.Params[ParamLambda].(map[string]any)["invocation_type"] = InvokeEvent
			_, end, err := r.Dispatch(context.Background(), m, "token")
			switch {
			case tc.outcome == engine.OutcomePlatformError:
				if err == nil {
					t.Errorf("Dispatch: %+v, want a platform error", end)
				}
			case err != nil || end == nil || end.Outcome != tc.outcome || !strings.Contains(end.Message, tc.want) || c.n != 0:
				t.Errorf("Dispatch: %+v, %v after %d invocations; want %s saying %q", end, err, c.n, tc.outcome, tc.want)
			}
		})
	}
}
