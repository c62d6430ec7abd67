package bench

// AWS list prices in US dollars, region us-east-1, as used on 2026-11-22
// (DynamoDB's on-demand prices are those in force since the November 2024
// reduction; free tiers are ignored).
const (
	// PriceDynamoDBWriteUnit is on-demand, $0.625 per million write request units.
	PriceDynamoDBWriteUnit = 0.625 / 1e6
	// PriceDynamoDBReadUnit is on-demand, $0.125 per million read request units.
	PriceDynamoDBReadUnit = 0.125 / 1e6
	// PriceSQSStandardRequest is $0.40 per million requests (64 KB chunks).
	PriceSQSStandardRequest = 0.40 / 1e6
	// PriceSQSFIFORequest is $0.50 per million FIFO requests (64 KB chunks).
	PriceSQSFIFORequest = 0.50 / 1e6
	// PriceSNSPublish is $0.50 per million published messages (64 KB
	// chunks; each entry of a PublishBatch counts).
	PriceSNSPublish = 0.50 / 1e6
	// PriceLambdaRequest is $0.20 per million invocations.
	PriceLambdaRequest = 0.20 / 1e6
	// PriceLambdaGBSecondARM is the arm64 duration price per GB-second.
	PriceLambdaGBSecondARM = 0.0000133334
	// PriceAPIGatewayHTTPRequest is API Gateway HTTP APIs, $1.00 per million
	// requests (first 300 million a month).
	PriceAPIGatewayHTTPRequest = 1.00 / 1e6
	// LambdaMemoryGB is the memory size the duration cost assumes (128 MB).
	LambdaMemoryGB = 128.0 / 1024
)

// Cost is an estimate in US dollars per million steps, by item.
type Cost struct {
	DynamoDBWrites float64 `json:"dynamodb_writes"`
	DynamoDBReads  float64 `json:"dynamodb_reads"`
	SQS            float64 `json:"sqs"`
	SNS            float64 `json:"sns"`
	LambdaRequests float64 `json:"lambda_requests"`
	LambdaDuration float64 `json:"lambda_duration"`
	APIGateway     float64 `json:"api_gateway"`
	// Streams is always 0: GetRecords made by Lambda triggers are free.
	Streams float64 `json:"streams"`
	Total   float64 `json:"total"`
}

// EstimateCost prices the usage of a run that completed steps steps, per
// million steps. fns are the Lambda functions' invocations; apiFunction
// names the one behind API Gateway. A run with no steps costs nothing.
func EstimateCost(u Usage, fns map[string]FunctionUsage, apiFunction string, steps int64) Cost {
	if steps <= 0 {
		return Cost{}
	}
	perMillion := 1e6 / float64(steps)
	var invocations, billedMs int64
	for _, f := range fns {
		invocations += f.Invocations
		billedMs += f.ModelledMillis
	}
	standard := u.SQSBilledRequests - u.SQSFIFOBilledRequests
	c := Cost{
		DynamoDBWrites: u.DynamoDBWriteUnits * PriceDynamoDBWriteUnit * perMillion,
		DynamoDBReads:  u.DynamoDBReadUnits * PriceDynamoDBReadUnit * perMillion,
		SQS: (float64(standard)*PriceSQSStandardRequest +
			float64(u.SQSFIFOBilledRequests)*PriceSQSFIFORequest) * perMillion,
		LambdaRequests: float64(invocations) * PriceLambdaRequest * perMillion,
		LambdaDuration: float64(billedMs) / 1000 * LambdaMemoryGB * PriceLambdaGBSecondARM * perMillion,
		APIGateway:     float64(fns[apiFunction].Invocations) * PriceAPIGatewayHTTPRequest * perMillion,
		SNS:            float64(u.SNSBilledMessages) * PriceSNSPublish * perMillion,
	}
	c.Total = c.DynamoDBWrites + c.DynamoDBReads + c.SQS + c.SNS + c.LambdaRequests + c.LambdaDuration + c.APIGateway + c.Streams
	return c
}
