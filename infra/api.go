package infra

import (
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigateway"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/maestro-serverless/maestro/resources"
)

// API is the REST API in front of the api handler.
type API struct {
	// RestAPI is the regional REST API with a greedy proxy resource.
	RestAPI awsapigateway.LambdaRestApi
	// AccessLogs receives one JSON line per request.
	AccessLogs awslogs.LogGroup
}

// newAPI creates the REST API: every method of the proxy integration
// requires SigV4-signed requests (AWS_IAM authorization), the stage is
// throttled, logs errors and writes JSON access logs, and X-Ray traces it.
// The deployment stage is named after the Maestro stage, so the base URL
// ends in /<stage>/.
func newAPI(scope constructs.Construct, s settings, fn *Function) *API {
	logs := awslogs.NewLogGroup(scope, jsii.String("ApiAccessLogs"), &awslogs.LogGroupProps{
		LogGroupName:  jsii.String("/aws/apigateway/" + resources.Prefix + "-" + s.Stage + "-access"),
		Retention:     logRetention(s.LogRetentionDays),
		RemovalPolicy: s.removal(),
	})
	all := jsii.Bool(true)
	api := awsapigateway.NewLambdaRestApi(scope, jsii.String("Api"), &awsapigateway.LambdaRestApiProps{
		Handler: fn.Function,
		Proxy:   jsii.Bool(true),
		// No test-invoke permission: the console's test button would call
		// the function outside the stage's authorization and throttling.
		IntegrationOptions: &awsapigateway.LambdaIntegrationOptions{AllowTestInvoke: jsii.Bool(false)},
		RestApiName:        jsii.String(resources.Prefix + "-" + s.Stage),
		Description:        jsii.String("Maestro workflow orchestrator API, stage " + s.Stage),
		EndpointTypes:      &[]awsapigateway.EndpointType{awsapigateway.EndpointType_REGIONAL},
		DefaultMethodOptions: &awsapigateway.MethodOptions{
			AuthorizationType: awsapigateway.AuthorizationType_IAM,
		},
		CloudWatchRole: jsii.Bool(s.accountCW),
		DeployOptions: &awsapigateway.StageOptions{
			StageName:            jsii.String(s.Stage),
			ThrottlingRateLimit:  jsii.Number(s.API.RateLimit),
			ThrottlingBurstLimit: jsii.Number(float64(s.API.BurstLimit)),
			AccessLogDestination: awsapigateway.NewLogGroupLogDestination(logs),
			AccessLogFormat: awsapigateway.AccessLogFormat_JsonWithStandardFields(&awsapigateway.JsonWithStandardFieldProps{
				Caller: all, HttpMethod: all, Ip: all, Protocol: all, RequestTime: all,
				ResourcePath: all, ResponseLength: all, Status: all, User: all,
			}),
			LoggingLevel:     awsapigateway.MethodLoggingLevel_ERROR,
			DataTraceEnabled: jsii.Bool(false),
			MetricsEnabled:   jsii.Bool(true),
			TracingEnabled:   jsii.Bool(true),
		},
	})
	return &API{RestAPI: api, AccessLogs: logs}
}
