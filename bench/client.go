package bench

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/google/uuid"
	"github.com/maestro-serverless/maestro/orchestrator"
)

// client speaks the orchestrator's HTTP API, signing each request as a
// caller of the deployed API does (SigV4 for execute-api), so that the
// stack authenticates and authorizes it as API Gateway and the API do.
type client struct {
	base   string
	http   *http.Client
	region string
	creds  aws.Credentials
	signer *v4.Signer
}

// do sends a request and decodes a 200 answer's JSON body into out.
func (c *client) do(ctx context.Context, method, path string, body []byte, out any) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.signer != nil {
		sum := sha256.Sum256(body)
		if err := c.signer.SignHTTP(ctx, c.creds, req, hex.EncodeToString(sum[:]), "execute-api", c.region, time.Now()); err != nil {
			return fmt.Errorf("%s %s: sign: %w", method, path, err)
		}
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: read answer: %w", method, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: status %d: %s", method, path, resp.StatusCode, bytes.TrimSpace(data))
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: decode answer: %w", method, path, err)
	}
	return nil
}

// push stores a definition and returns its version.
func (c *client) push(ctx context.Context, def []byte) (int64, error) {
	var out struct {
		WorkflowDefinition orchestrator.DefinitionView `json:"workflow_definition"`
	}
	if err := c.do(ctx, http.MethodPost, "/api/v3/workflows", def, &out); err != nil {
		return 0, err
	}
	return out.WorkflowDefinition.Metadata.WorkflowVersionID, nil
}

// start starts an instance of a version.
func (c *client) start(ctx context.Context, workflowID string, version int64) (*orchestrator.StartResponse, error) {
	var out orchestrator.StartResponse
	path := "/api/v3/workflows/" + url.PathEscape(workflowID) + "/versions/" + strconv.FormatInt(version, 10) + "/actions/start"
	if err := c.do(ctx, http.MethodPost, path, []byte(`{}`), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// startBatch starts n instances of a version with one start-batch
// request (n at most orchestrator.MaxBatchStarts), each with a new
// request_id, and returns each one's start answer in request order.
func (c *client) startBatch(ctx context.Context, workflowID string, version int64, n int) ([]*orchestrator.StartResponse, error) {
	reqs := make([]map[string]string, n)
	for i := range reqs {
		reqs[i] = map[string]string{"request_id": uuid.NewString()}
	}
	body, err := json.Marshal(map[string]any{"requests": reqs})
	if err != nil {
		return nil, err
	}
	var out orchestrator.BatchStartResult
	path := "/api/v3/workflows/" + url.PathEscape(workflowID) + "/versions/" + strconv.FormatInt(version, 10) + "/actions/start-batch"
	if err := c.do(ctx, http.MethodPost, path, body, &out); err != nil {
		return nil, err
	}
	if len(out.Results) != n {
		return nil, fmt.Errorf("start-batch answered %d outcomes to %d requests", len(out.Results), n)
	}
	resps := make([]*orchestrator.StartResponse, n)
	for i, r := range out.Results {
		if r.Error != nil || r.StartResponse == nil {
			return nil, fmt.Errorf("start-batch request %d: %v", i, r.Error)
		}
		resps[i] = r.StartResponse
	}
	return resps, nil
}

// instance reads an instance's latest run.
func (c *client) instance(ctx context.Context, workflowID string, instanceID int64) (*orchestrator.InstanceView, error) {
	var out orchestrator.InstanceView
	if err := c.do(ctx, http.MethodGet, instancePath(workflowID, instanceID), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// steps reads the latest attempt of every step of an instance.
func (c *client) steps(ctx context.Context, workflowID string, instanceID int64) ([]*orchestrator.StepView, error) {
	var out []*orchestrator.StepView
	if err := c.do(ctx, http.MethodGet, instancePath(workflowID, instanceID)+"/steps", nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

func instancePath(workflowID string, instanceID int64) string {
	return "/api/v3/workflows/" + url.PathEscape(workflowID) + "/instances/" + strconv.FormatInt(instanceID, 10)
}
