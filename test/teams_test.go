package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/maestro-serverless/maestro/localstack"
	"github.com/maestro-serverless/maestro/localstack/sigv4"
	"github.com/maestro-serverless/maestro/localstack/stack"
	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/teamrights"
)

// signer sends requests to a signed local stack as one principal.
type signer struct {
	t           *testing.T
	s           *system
	key, secret string
}

// send signs (unless key is empty) and sends a request; it returns the
// status and the body, decoded into out on a 200.
func (c signer) send(method, path string, body []byte, out any) (int, string) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.s.st.URL+path, bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if len(body) > 0 {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.key != "" {
		sum := sha256.Sum256(body)
		creds := aws.Credentials{AccessKeyID: c.key, SecretAccessKey: c.secret}
		if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, hex.EncodeToString(sum[:]), "execute-api", c.s.st.Emulator.Region, time.Now()); err != nil {
			c.t.Fatal(err)
		}
	}
	resp, err := c.s.client.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(data, out); err != nil {
			c.t.Fatalf("%s %s: decode %q: %v", method, path, data, err)
		}
	}
	return resp.StatusCode, string(data)
}

// ok sends and fails the test unless the answer is 200.
func (c signer) ok(method, path, body string, out any) {
	c.t.Helper()
	if code, resp := c.send(method, path, []byte(body), out); code != http.StatusOK {
		c.t.Fatalf("%s %s as %s: HTTP %d %s", method, path, c.key, code, resp)
	}
}

// TestTeamsAndRoles is issue 39's acceptance on a signed local stack with
// three principals: admin, alice (team data) and bob (team ml). Alice
// pushes and starts her workflow; bob reads it, and is refused start,
// stop, a new version, delete and its access — each refusal a 403 naming
// the action, the workflow and the role, and leaving the workflow's items
// and the teams' as they were; after the admin makes ml an operator, bob
// starts and stops it. Bob's workflow calling alice's as a subworkflow is
// refused at push until ml operates hers, and fails at run time once that
// is taken back. Lists show only what the caller may read. Steps run
// with their owners' team's AWS rights: a Lambda step of team data's on
// its list runs, through the grant the worker reads from the store; one
// off the list, or of a team with no rights, is refused at push.
func TestTeamsAndRoles(t *testing.T) {
	t.Parallel()
	const (
		adminARN = "arn:aws:iam::000000000000:role/admin"
		aliceARN = "arn:aws:iam::000000000000:role/alice"
		bobARN   = "arn:aws:iam::000000000000:role/bob"
	)
	s := startSystem(t, stack.Options{
		Credentials: []sigv4.Credential{
			{AccessKey: "AKIDADMIN", Secret: "admin-secret", Principal: adminARN},
			{AccessKey: "AKIDALICE", Secret: "alice-secret", Principal: aliceARN},
			{AccessKey: "AKIDBOB", Secret: "bob-secret", Principal: bobARN},
		},
		Admins: []string{adminARN},
		// Team data's Lambda steps may call etl-* functions; team ml has
		// no AWS rights mapped.
		TeamRights: teamrights.Config{"data": {Lambdas: []string{"etl-*"}}},
		Functions: map[string]localstack.LocalFunction{
			"etl-load": localstack.FunctionFunc(func(context.Context, []byte) ([]byte, error) { return []byte(`{"doubled": 2}`), nil }),
			"billing":  localstack.FunctionFunc(func(context.Context, []byte) ([]byte, error) { return []byte(`{"doubled": 0}`), nil }),
		},
	})
	admin := signer{t, s, "AKIDADMIN", "admin-secret"}
	alice := signer{t, s, "AKIDALICE", "alice-secret"}
	bob := signer{t, s, "AKIDBOB", "bob-secret"}
	db := dynamodb.NewFromConfig(s.st.Emulator.TestConfig(t))
	table := s.st.Resources.Table.Name
	// partition renders every item of a partition, to show nothing was
	// written by a refusal.
	partition := func(pk string) string {
		t.Helper()
		out, err := db.Query(context.Background(), &dynamodb.QueryInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true),
			KeyConditionExpression:    aws.String("pk = :p"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: pk}}})
		if err != nil {
			t.Fatalf("query %s: %v", pk, err)
		}
		var items []string
		for _, it := range out.Items {
			keys := make([]string, 0, len(it))
			for k := range it {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			var b strings.Builder
			for _, k := range keys {
				fmt.Fprintf(&b, "%s=%v;", k, it[k])
			}
			items = append(items, b.String())
		}
		sort.Strings(items)
		return strings.Join(items, "\n")
	}
	refused := func(what string, code int, body string, names ...string) {
		t.Helper()
		var e struct {
			Status  int    `json:"status"`
			Message string `json:"message"`
		}
		if code != http.StatusForbidden || json.Unmarshal([]byte(body), &e) != nil || e.Status != 403 {
			t.Errorf("%s: HTTP %d %s; want a 403 JSON body", what, code, body)
			return
		}
		for _, n := range names {
			if !strings.Contains(e.Message, n) {
				t.Errorf("%s: refusal %q does not name %q", what, e.Message, n)
			}
		}
	}

	// Teams are the admins'.
	teamsBefore := partition("TEAMS")
	code, body := alice.send("PUT", "/api/v3/teams/data", []byte(`{"members":["`+aliceARN+`"]}`), nil)
	refused("alice creates a team", code, body, "manage teams", "admin")
	if got := partition("TEAMS"); got != teamsBefore {
		t.Errorf("a refused team change wrote:\n%s\nwas:\n%s", got, teamsBefore)
	}
	admin.ok("PUT", "/api/v3/teams/data", `{"members":["`+aliceARN+`"]}`, nil)
	admin.ok("PUT", "/api/v3/teams/ml", `{"members":["arn:aws:iam::000000000000:role/b*"]}`, nil)
	var me orchestrator.CallerView
	bob.ok("GET", "/api/v3/caller", "", &me)
	if !me.Enforced || me.Admin || !slices.Equal(me.Teams, []string{"ml"}) {
		t.Fatalf("bob's caller view %+v; want enforced, not admin, team ml", me)
	}

	// Alice pushes and starts her workflow: team data owns it.
	sleeper := func(id string) string {
		return `{"workflow":{"id":"` + id + `","steps":[{"step":{"id":"nap","type":"Sleep","params":{"sleep_seconds":{"value":3600,"type":"LONG"}}}}]}}`
	}
	alice.ok("POST", "/api/v3/workflows", sleeper("alice-wf"), nil)
	var acc orchestrator.AccessView
	alice.ok("GET", "/api/v3/workflows/alice-wf/access", "", &acc)
	if acc.Role != "owner" || !slices.Equal(acc.Owners, []string{"team:data"}) || !slices.Equal(acc.Readers, []string{"*"}) {
		t.Fatalf("alice-wf's access %+v; want team data owning it, everyone reading", acc)
	}
	var run orchestrator.StartResponse
	alice.ok("POST", "/api/v3/workflows/alice-wf/versions/latest/actions/start", "{}", &run)
	inst := fmt.Sprintf("/api/v3/workflows/alice-wf/instances/%d", run.WorkflowInstanceID)
	poll(t, 30*time.Second, "alice's run is running", func() (bool, string) {
		var v orchestrator.InstanceView
		alice.ok("GET", inst, "", &v)
		return v.Status == "IN_PROGRESS", v.Status
	})

	// Bob reads it, and may do nothing else to it.
	bob.ok("GET", "/api/v3/workflows/alice-wf/versions/latest", "", nil)
	bob.ok("GET", inst, "", nil)
	bob.ok("GET", "/api/v3/workflows/alice-wf/access", "", &acc)
	if acc.Role != "reader" {
		t.Errorf("bob's role on alice-wf %q; want reader", acc.Role)
	}
	before := partition("WF#alice-wf")
	code, body = bob.send("POST", "/api/v3/workflows/alice-wf/versions/latest/actions/start", []byte("{}"), nil)
	refused("bob starts alice-wf", code, body, "start", `"alice-wf"`, "operator", bobARN, "reader")
	code, body = bob.send("PUT", inst+"/actions/stop", nil, nil)
	refused("bob stops alice's run", code, body, "stop", `"alice-wf"`, "operator")
	code, body = bob.send("POST", "/api/v3/workflows", []byte(sleeper("alice-wf")), nil)
	refused("bob pushes a version of alice-wf", code, body, "push", `"alice-wf"`, "owner")
	code, body = bob.send("DELETE", "/api/v3/workflows/alice-wf", nil, nil)
	refused("bob deletes alice-wf", code, body, "delete", `"alice-wf"`, "owner")
	code, body = bob.send("PUT", "/api/v3/workflows/alice-wf/access", []byte(`{"owners":["team:ml"],"operators":["team:ml"],"readers":["*"]}`), nil)
	refused("bob sets alice-wf's access", code, body, "set access", `"alice-wf"`, "owner")
	if after := partition("WF#alice-wf"); after != before {
		t.Errorf("bob's refused requests wrote to alice-wf:\n%s\nwas:\n%s", after, before)
	}

	// Bob's workflow may not call alice's until ml operates it.
	caller := `{"workflow":{"id":"bob-calls","steps":[{"subworkflow":{"id":"call","params":{"subworkflow_id":{"value":"alice-wf","type":"STRING"}}}}]}}`
	code, body = bob.send("POST", "/api/v3/workflows", []byte(caller), nil)
	if code != http.StatusBadRequest || !strings.Contains(body, "subworkflow_id") || !strings.Contains(body, "team:ml") {
		t.Errorf("bob's push calling alice-wf: HTTP %d %s; want 400 naming the step's subworkflow_id and team:ml", code, body)
	}
	if code, body := bob.send("GET", "/api/v3/workflows/bob-calls/versions/latest", nil, nil); code != http.StatusNotFound {
		t.Errorf("after the refused push, bob-calls: HTTP %d %s; want 404", code, body)
	}

	// The admin makes ml operators of alice-wf: bob starts and stops it,
	// and pushes his caller.
	grant := `{"owners":["team:data"],"operators":["team:data","team:ml"],"readers":["*"]}`
	admin.ok("PUT", "/api/v3/workflows/alice-wf/access", grant, &acc)
	if acc.Role != "none" && acc.Role != "reader" {
		t.Errorf("the admin's role on alice-wf after granting %q; an admin holds no role by being one", acc.Role)
	}
	var bobRun orchestrator.StartResponse
	bob.ok("POST", "/api/v3/workflows/alice-wf/versions/latest/actions/start", "{}", &bobRun)
	bobInst := fmt.Sprintf("/api/v3/workflows/alice-wf/instances/%d", bobRun.WorkflowInstanceID)
	bob.ok("PUT", bobInst+"/actions/stop", "", nil)
	poll(t, 30*time.Second, "bob's run stops", func() (bool, string) {
		var v orchestrator.InstanceView
		bob.ok("GET", bobInst, "", &v)
		return v.Status == "STOPPED", v.Status
	})
	bob.ok("POST", "/api/v3/workflows", caller, nil)

	// Taken back, the subworkflow step fails when it runs.
	admin.ok("PUT", "/api/v3/workflows/alice-wf/access", `{"owners":["team:data"],"operators":["team:data"],"readers":["*"]}`, nil)
	var callRun orchestrator.StartResponse
	bob.ok("POST", "/api/v3/workflows/bob-calls/versions/latest/actions/start", "{}", &callRun)
	callInst := fmt.Sprintf("/api/v3/workflows/bob-calls/instances/%d", callRun.WorkflowInstanceID)
	var ended orchestrator.InstanceView
	poll(t, 30*time.Second, "bob-calls fails", func() (bool, string) {
		bob.ok("GET", callInst, "", &ended)
		return ended.Status == "FAILED", ended.Status
	})
	var steps []orchestrator.StepView
	bob.ok("GET", callInst+"/steps", "", &steps)
	if len(steps) != 1 || !strings.Contains(fmt.Sprint(steps[0]), "operators") {
		t.Errorf("bob-calls' step after access was taken back: %+v; want it failed naming the operators rule", steps)
	}

	// Lists show only what the caller may read.
	alice.ok("POST", "/api/v3/workflows", sleeper("alice-private"), nil)
	alice.ok("PUT", "/api/v3/workflows/alice-private/access", `{"owners":["team:data"],"operators":["team:data"],"readers":[]}`, nil)
	ids := func(c signer) []string {
		var l orchestrator.WorkflowList
		c.ok("GET", "/api/v3/workflows?limit=100", "", &l)
		var out []string
		for _, w := range l.Workflows {
			out = append(out, w.WorkflowID)
		}
		return out
	}
	if got := ids(alice); !slices.Contains(got, "alice-private") || !slices.Contains(got, "bob-calls") {
		t.Errorf("alice's list %v; want alice-private and bob-calls", got)
	}
	if got := ids(bob); slices.Contains(got, "alice-private") || !slices.Contains(got, "alice-wf") {
		t.Errorf("bob's list %v; want alice-wf and not alice-private", got)
	}
	code, body = bob.send("GET", "/api/v3/workflows/alice-private/versions/latest", nil, nil)
	refused("bob reads alice-private", code, body, "read", `"alice-private"`, "reader", "none")

	// Steps run with their owners' team's rights: data's Lambda step on
	// its list runs (the worker reads the owners from the stored grant);
	// one off the list, and any from a team without rights, are refused
	// at push.
	var etl orchestrator.StartResponse
	alice.ok("POST", "/api/v3/workflows", string(lambdaWorkflow("alice-etl", "etl-load", "", "")), nil)
	alice.ok("POST", "/api/v3/workflows/alice-etl/versions/latest/actions/start", "{}", &etl)
	poll(t, 30*time.Second, "alice's Lambda step succeeds", func() (bool, string) {
		var v orchestrator.InstanceView
		alice.ok("GET", fmt.Sprintf("/api/v3/workflows/alice-etl/instances/%d", etl.WorkflowInstanceID), "", &v)
		return v.Status == "SUCCEEDED", v.Status
	})
	code, body = alice.send("POST", "/api/v3/workflows", lambdaWorkflow("alice-billing", "billing", "", ""), nil)
	if code != http.StatusBadRequest || !strings.Contains(body, "billing") || !strings.Contains(body, `team \"data\"`) {
		t.Errorf("alice's push of a Lambda step off her team's list: HTTP %d %s; want 400 naming the function and team data", code, body)
	}
	code, body = bob.send("POST", "/api/v3/workflows", lambdaWorkflow("bob-etl", "etl-load", "", ""), nil)
	if code != http.StatusBadRequest || !strings.Contains(body, "team:ml") {
		t.Errorf("bob's push of a Lambda step, team ml having no rights: HTTP %d %s; want 400 naming his owners", code, body)
	}

	// Unsigned, and signed with a wrong secret: 403 before any route.
	code, body = signer{t, s, "", ""}.send("GET", "/api/v3/workflows/alice-wf/access", nil, nil)
	refused("an unsigned request", code, body, "not signed")
	code, body = signer{t, s, "AKIDBOB", "alice-secret"}.send("POST", "/api/v3/workflows/alice-wf/versions/latest/actions/start", []byte("{}"), nil)
	refused("a request signed with a wrong secret", code, body, "does not match")
}
