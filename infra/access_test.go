package infra

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"

	"github.com/maestro-serverless/maestro/lambdas/wiring"
	"github.com/maestro-serverless/maestro/teamrights"
)

// teamsStage is the stage of the stack with the full stack's settings and
// testAccess.
const teamsStage = "infrateams"

// testAccess: two teams — data with both roles, an image prefix and a
// function pattern that matches one of the stack's functions; ml with a
// task role only and a function pattern that matches none of them.
var testAccess = AccessSettings{
	Admins:           []string{"arn:aws:iam::123456789012:role/platform-admin"},
	PrivateWorkflows: true,
	SignalPrefixes:   map[string][]string{"data": {"warehouse/"}},
	Teams: teamrights.Config{
		"data": {TaskRoleARN: "arn:aws:iam::123456789012:role/data-tasks", JobRoleARN: "arn:aws:iam::123456789012:role/data-jobs",
			Images: []string{"123456789012.dkr.ecr.us-east-1.amazonaws.com/etl/"}, Lambdas: []string{"etl-*"}},
		"ml": {TaskRoleARN: "arn:aws:iam::123456789012:role/ml-tasks",
			Lambdas: []string{"arn:aws:lambda:us-east-1:123456789012:function:ml-*"}},
	},
}

// rightsGrants are the worker's grants that team rights change: roles it
// may pass, functions it may invoke, job definitions it may read.
func rightsGrants(gs []grant) (rights, rest []grant) {
	for _, g := range gs {
		switch g.Action {
		case "iam:PassRole", "lambda:InvokeFunction", "batch:DescribeJobDefinitions":
			rights = append(rights, g)
		default:
			rest = append(rest, g)
		}
	}
	return rights, rest
}

func sortGrants(gs []grant) []grant {
	slices.SortFunc(gs, func(a, b grant) int {
		return strings.Compare(a.Action+a.Resource+a.Condition, b.Action+b.Resource+b.Condition)
	})
	return gs
}

// TestTeamRoleGrants lists what the worker may do with each team's rights
// — the roles it may pass, to which service, the functions it may invoke —
// and checks that team rights change nothing else, and that the stack
// without teams keeps the stack's roles.
func TestTeamRoleGrants(t *testing.T) {
	full, _ := synth(t)
	synth(t)
	teams := synthResult.teams
	worker := func(s *synthesized) []grant {
		return roleGrants(t, s)[s.logicalID(t, s.stack.Functions[HandlerWorker].Role)]
	}
	const (
		toECS   = "StringEquals:iam:PassedToService=ecs-tasks.amazonaws.com"
		toBatch = "StringEquals:iam:PassedToService=batch.amazonaws.com"
		toSched = "StringEquals:iam:PassedToService=scheduler.amazonaws.com"
	)
	ref := func(s *synthesized, id string) string { return "${" + id + ".Arn}" }
	lambdaARN := "arn:${AWS::Partition}:lambda:${AWS::Region}:${AWS::AccountId}:function:etl-loader"
	train := "arn:aws:lambda:us-east-1:123456789012:function:train"

	// Each team's grants, as the worker holds them.
	perTeam := map[string][]grant{
		"data": {
			{"iam:PassRole", "arn:aws:iam::123456789012:role/data-tasks", toECS},   // its Ecs/Kubernetes/Notebook tasks
			{"iam:PassRole", "arn:aws:iam::123456789012:role/data-tasks", toBatch}, // its Kubernetes steps' GPU jobs
			{"lambda:InvokeFunction", lambdaARN, ""},                               // etl-* matches etl-loader
			{"lambda:InvokeFunction", lambdaARN + ":*", ""},
		},
		"ml": {
			{"iam:PassRole", "arn:aws:iam::123456789012:role/ml-tasks", toECS},
			{"iam:PassRole", "arn:aws:iam::123456789012:role/ml-tasks", toBatch},
			// ml-* matches none of the stack's functions: no invoke grant.
		},
	}
	shared := []grant{
		{"iam:PassRole", ref(teams, teams.logicalID(t, teams.stack.Jobs.ExecutionRole)), toECS},
		{"iam:PassRole", ref(teams, teams.logicalID(t, teams.stack.SchedulerRole)), toSched},
		// Batch steps' job definitions are read to check their role;
		// no job role is passed (SubmitJob cannot override it).
		{"batch:DescribeJobDefinitions", "*", ""},
	}
	for _, team := range []string{"data", "ml"} {
		t.Logf("team %s (task role %s, job role %s):", team, testAccess.Teams[team].TaskRoleARN, testAccess.Teams[team].JobRoleARN)
		for _, g := range perTeam[team] {
			t.Logf("  %s on %s %s", g.Action, g.Resource, g.Condition)
		}
	}
	want := sortGrants(slices.Concat(perTeam["data"], perTeam["ml"], shared))
	gotTeams, restTeams := rightsGrants(worker(teams))
	if !reflect.DeepEqual(sortGrants(gotTeams), want) {
		t.Errorf("worker grants with teams:\n got %v\nwant %v", gotTeams, want)
	}

	// Without teams: the stack's task role and the notebook role, and
	// every configured function.
	stackRole := "arn:aws:iam::123456789012:role/etl-task"
	wantFull := sortGrants([]grant{
		{"iam:PassRole", ref(full, full.logicalID(t, full.stack.Jobs.ExecutionRole)), toECS},
		{"iam:PassRole", stackRole, toECS},
		{"iam:PassRole", ref(full, full.logicalID(t, full.stack.Jobs.NotebookRole)), toECS},
		{"iam:PassRole", stackRole, toBatch},
		{"iam:PassRole", ref(full, full.logicalID(t, full.stack.SchedulerRole)), toSched},
		{"batch:DescribeJobDefinitions", "*", ""},
		{"lambda:InvokeFunction", lambdaARN, ""}, {"lambda:InvokeFunction", lambdaARN + ":*", ""},
		{"lambda:InvokeFunction", train, ""}, {"lambda:InvokeFunction", train + ":*", ""},
	})
	gotFull, restFull := rightsGrants(worker(full))
	if !reflect.DeepEqual(sortGrants(gotFull), wantFull) {
		t.Errorf("worker grants without teams:\n got %v\nwant %v", gotFull, wantFull)
	}

	// Nothing else differs but the stage in physical names.
	for i := range restTeams {
		restTeams[i].Resource = strings.ReplaceAll(restTeams[i].Resource, teamsStage, fullStage)
		restTeams[i].Condition = strings.ReplaceAll(restTeams[i].Condition, teamsStage, fullStage)
	}
	if !reflect.DeepEqual(sortGrants(restTeams), sortGrants(restFull)) {
		t.Errorf("team rights changed other worker grants:\n teams %v\n full  %v", restTeams, restFull)
	}
	// The other functions' grants are the same with and without teams.
	for _, h := range []string{HandlerAPI, HandlerRouter, HandlerDecider, HandlerSignals} {
		a := roleGrants(t, full)[full.logicalID(t, full.stack.Functions[h].Role)]
		b := roleGrants(t, teams)[teams.logicalID(t, teams.stack.Functions[h].Role)]
		for i := range b {
			b[i].Resource = strings.ReplaceAll(b[i].Resource, teamsStage, fullStage)
		}
		if !reflect.DeepEqual(sortGrants(a), sortGrants(b)) {
			t.Errorf("%s grants differ with teams:\n teams %v\n full  %v", h, b, a)
		}
	}
	if len(teams.nagErrors) > 0 || len(teams.nagWarnings) > 0 {
		t.Errorf("cdk-nag on the teams stack: %d errors, %d warnings", len(teams.nagErrors), len(teams.nagWarnings))
	}
}

// TestAccessEnvironment checks the access settings' variables: all on the
// API, the team rights on the worker too, none without settings.
func TestAccessEnvironment(t *testing.T) {
	full, _ := synth(t)
	teams := synthResult.teams
	env := func(s *synthesized, h string) map[string]any {
		return props(s.resourcesOf("AWS::Lambda::Function")[s.logicalID(t, s.stack.Functions[h].Function)])["Environment"].(map[string]any)["Variables"].(map[string]any)
	}
	keys := []string{wiring.EnvAdmins, wiring.EnvPrivateWorkflows, wiring.EnvSignalPrefixes, wiring.EnvTeamRights}
	api, worker := env(teams, HandlerAPI), env(teams, HandlerWorker)
	if got := render(api[wiring.EnvAdmins]); got != "arn:aws:iam::123456789012:role/platform-admin" {
		t.Errorf("API %s = %q", wiring.EnvAdmins, got)
	}
	if got := render(api[wiring.EnvPrivateWorkflows]); got != "true" {
		t.Errorf("API %s = %q", wiring.EnvPrivateWorkflows, got)
	}
	if got := render(api[wiring.EnvSignalPrefixes]); got != `{"data":["warehouse/"]}` {
		t.Errorf("API %s = %q", wiring.EnvSignalPrefixes, got)
	}
	for name, e := range map[string]map[string]any{"API": api, "worker": worker} {
		c, err := teamrights.Parse(render(e[wiring.EnvTeamRights]))
		if err != nil || !reflect.DeepEqual(c, testAccess.Teams) {
			t.Errorf("%s %s = %q: %v", name, wiring.EnvTeamRights, render(e[wiring.EnvTeamRights]), err)
		}
	}
	for _, k := range keys[:3] {
		if _, ok := worker[k]; ok {
			t.Errorf("worker has %s: only the API reads it", k)
		}
	}
	for _, h := range Handlers() {
		for _, k := range keys {
			if _, ok := env(full, h)[k]; ok {
				t.Errorf("%s without access settings has %s", h, k)
			}
		}
	}
}

func TestAccessFromContext(t *testing.T) {
	teams := map[string]any{
		"data": map[string]any{"taskRoleArn": "arn:aws:iam::123456789012:role/data-tasks", "jobRoleArn": "arn:aws:iam::123456789012:role/data-jobs",
			"images": []any{"123456789012.dkr.ecr.us-east-1.amazonaws.com/etl/"}, "lambdas": []any{"etl-*"}},
		"ml": map[string]any{"taskRoleArn": "arn:aws:iam::123456789012:role/ml-tasks", "lambdas": []any{"arn:aws:lambda:us-east-1:123456789012:function:ml-*"}},
	}
	text, err := json.Marshal(teams)
	if err != nil {
		t.Fatal(err)
	}
	base := map[string]any{"admins": "arn:aws:iam::123456789012:role/platform-admin", "privateWorkflows": "true",
		"signalPrefixes": map[string]any{"data": []any{"warehouse/"}}}
	for name, v := range map[string]any{"cdk.json object": teams, "-c JSON text": string(text)} {
		ctx := map[string]any{"teams": v}
		for k, x := range base {
			ctx[k] = x
		}
		p, err := PropsFromContext(getter(ctx))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := testAccess
		want.Teams = teamrights.Config{"data": testAccess.Teams["data"], "ml": testAccess.Teams["ml"]}
		if !reflect.DeepEqual(p.Access, want) {
			t.Errorf("%s: %+v\nwant %+v", name, p.Access, want)
		}
		if errs := p.Access.check(); len(errs) > 0 {
			t.Errorf("%s: %v", name, errs)
		}
	}

	for _, tc := range []struct {
		name string
		ctx  map[string]any
		want []string
	}{
		{"an unknown team field", map[string]any{"teams": `{"data": {"taskRole": "x"}}`}, []string{"context teams", `unknown field "taskRole"`}},
		{"teams not an object", map[string]any{"teams": []any{"data"}}, []string{"context teams: want a JSON object"}},
		{"a task role that is no role", map[string]any{"teams": map[string]any{"data": map[string]any{"taskRoleArn": "arn:aws:iam::123456789012:user/bob"}}},
			[]string{"context teams.data.taskRoleArn", "role/NAME"}},
		{"a job role with a wildcard", map[string]any{"teams": map[string]any{"ml": map[string]any{"jobRoleArn": "arn:aws:iam::123456789012:role/ml-*"}}},
			[]string{"context teams.ml.jobRoleArn", "no wildcard"}},
		{"an image without registry", map[string]any{"teams": map[string]any{"data": map[string]any{"images": []any{"python"}}}},
			[]string{"context teams.data.images[0]", "name the registry"}},
		{"a bad lambda pattern", map[string]any{"teams": map[string]any{"data": map[string]any{"lambdas": []any{"etl loader"}}}},
			[]string{"context teams.data.lambdas[0]"}},
		{"a bad team name", map[string]any{"teams": map[string]any{"Data": map[string]any{}}}, []string{`context teams."Data"`, "lower-case"}},
		{"an admin that is no principal", map[string]any{"admins": "bob"}, []string{"context admins", "not an ARN"}},
		{"private not a boolean", map[string]any{"privateWorkflows": "maybe"}, []string{"context privateWorkflows"}},
		{"signal prefixes of a bad team", map[string]any{"signalPrefixes": `{"Data": ["x"]}`}, []string{"context signalPrefixes.Data"}},
		{"an empty signal prefix", map[string]any{"signalPrefixes": map[string]any{"data": []any{""}}}, []string{"context signalPrefixes.data[0]: empty prefix"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := PropsFromContext(getter(tc.ctx))
			if err == nil {
				_, err = p.resolve()
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestBadTeamsFailSynth: NewStack refuses bad team rights, naming the team
// and the field.
func TestBadTeamsFailSynth(t *testing.T) {
	assets, err := standInAssets()
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(assets)
	app := awscdk.NewApp(nil)
	_, err = NewStack(app, "Bad", Props{AssetDir: assets, Access: AccessSettings{Teams: teamrights.Config{
		"data": {TaskRoleARN: "arn:aws:iam::123456789012:role/data-*"}}}})
	if err == nil || !strings.Contains(err.Error(), "context teams.data.taskRoleArn") {
		t.Errorf("NewStack = %v, want an error naming teams.data.taskRoleArn", err)
	}
}
