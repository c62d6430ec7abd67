// Command app is the CDK app of cdk.json: it reads the stack's settings
// from CDK context (see infra.PropsFromContext), builds the stack
// "maestro-<stage>" with cdk-nag's AwsSolutions checks applied, and
// synthesizes it. Run it through the CDK CLI from the repository root:
//
//	make synth                              # make build, then cdk synth
//	npx aws-cdk@2.1148.1 deploy -c stage=prod
package main

import (
	"fmt"
	"os"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"

	"github.com/maestro-serverless/maestro/infra"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "infra/app:", err)
		jsii.Close()
		os.Exit(1)
	}
	jsii.Close()
}

func run() error {
	app := awscdk.NewApp(nil)
	props, err := infra.PropsFromContext(func(key string) any { return app.Node().TryGetContext(jsii.String(key)) })
	if err != nil {
		return err
	}
	stage := props.Stage
	if stage == "" {
		stage = infra.DefaultStage
	}
	if _, err := infra.NewStack(app, "maestro-"+stage, props); err != nil {
		return err
	}
	infra.ApplyChecks(app, false)
	app.Synth(nil)
	return nil
}
