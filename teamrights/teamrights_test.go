package teamrights

import (
	"reflect"
	"strings"
	"testing"

	"github.com/maestro-serverless/maestro/access"
	"github.com/maestro-serverless/maestro/model"
)

const (
	dataRole = "arn:aws:iam::123456789012:role/data-tasks"
	dataJobs = "arn:aws:iam::123456789012:role/data-jobs"
	ecr      = "123456789012.dkr.ecr.us-east-1.amazonaws.com/"
)

func TestParse(t *testing.T) {
	good := `{"data": {"task_role_arn": "` + dataRole + `", "job_role_arn": "` + dataJobs + `",
	  "images": ["` + ecr + `etl/"], "lambdas": ["etl-*", "arn:aws:lambda:us-east-1:123456789012:function:train"]},
	  "ml": {}}`
	c, err := Parse(good)
	if err != nil {
		t.Fatalf("Parse(good) = %v", err)
	}
	if got := c.Teams(); !reflect.DeepEqual(got, []string{"data", "ml"}) || c["data"].TaskRoleARN != dataRole || len(c["data"].Lambdas) != 2 {
		t.Errorf("Parse(good) = %+v", c)
	}
	text, err := c.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if again, err := Parse(text); err != nil || !reflect.DeepEqual(again, c) {
		t.Errorf("round trip through %s: %+v, %v", text, again, err)
	}
	if c, err := Parse("  "); err != nil || len(c) != 0 {
		t.Errorf(`Parse("  ") = %v, %v; want the empty configuration`, c, err)
	}

	for _, tc := range []struct {
		name, text string
		want       []string // substrings of the error
	}{
		{"not JSON", `{"data": `, []string{"want a JSON object"}},
		{"a list", `["data"]`, []string{"want a JSON object"}},
		{"an unknown field", `{"data": {"taskRole": "x"}}`, []string{`unknown field "taskRole"`}},
		{"trailing text", `{} {}`, []string{"text after"}},
		{"a bad team name", `{"Data": {}}`, []string{`teams."Data"`, "lower-case"}},
		{"a task role that is a user", `{"data": {"task_role_arn": "arn:aws:iam::123456789012:user/bob"}}`,
			[]string{"teams.data.task_role_arn", "role/NAME"}},
		{"a job role with a wildcard", `{"data": {"job_role_arn": "arn:aws:iam::123456789012:role/data-*"}}`,
			[]string{"teams.data.job_role_arn", "no wildcard"}},
		{"a role of a short account", `{"data": {"task_role_arn": "arn:aws:iam::1234:role/x"}}`, []string{"teams.data.task_role_arn", "12 digits"}},
		{"a role of another service", `{"data": {"task_role_arn": "arn:aws:sts::123456789012:assumed-role/x/y"}}`,
			[]string{"teams.data.task_role_arn", "not an IAM role ARN"}},
		{"an empty image", `{"data": {"images": [""]}}`, []string{"teams.data.images[0]: empty"}},
		{"an image without registry", `{"data": {"images": ["python"]}}`, []string{"teams.data.images[0]", "name the registry"}},
		{"an image with a tag", `{"data": {"images": ["` + ecr + `etl:1"]}}`, []string{"teams.data.images[0]", "tag"}},
		{"a duplicate lambda", `{"data": {"lambdas": ["a", "a"]}}`, []string{`teams.data.lambdas[1]: "a" is listed twice`}},
		{"a lambda with spaces", `{"data": {"lambdas": ["etl loader"]}}`, []string{"teams.data.lambdas[0]", "letters, digits"}},
		{"a lambda ARN with a qualifier", `{"data": {"lambdas": ["arn:aws:lambda:us-east-1:123456789012:function:f:prod"]}}`,
			[]string{"teams.data.lambdas[0]", "no qualifier"}},
		{"a lambda ARN with a wildcard account", `{"data": {"lambdas": ["arn:aws:lambda:us-east-1:*:function:f"]}}`,
			[]string{"teams.data.lambdas[0]", "literal"}},
		{"a lambda name too long", `{"data": {"lambdas": ["` + strings.Repeat("a", 65) + `"]}}`, []string{"teams.data.lambdas[0]", "1 to 64"}},
		{"too many lambdas", `{"data": {"lambdas": [` + strings.TrimSuffix(strings.Repeat(`"f",`, MaxPatterns+1), ",") + `]}}`,
			[]string{"teams.data.lambdas: at most 100 entries"}},
		{"every problem, each named", `{"a": {"task_role_arn": "x"}, "b": {"lambdas": [""]}}`,
			[]string{"teams.a.task_role_arn", "teams.b.lambdas[0]: empty"}},
		{"too large", `{"data": {"lambdas": ["` + strings.Repeat("a", MaxConfigBytes) + `"]}}`, []string{"more than 4096"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse(tc.text)
			if err == nil {
				t.Fatalf("Parse = %+v, want an error", c)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Parse error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestFor(t *testing.T) {
	c := Config{"data": {TaskRoleARN: dataRole}, "ml": {JobRoleARN: dataJobs}}
	for _, tc := range []struct {
		name   string
		owners []string
		team   string
		ok     bool
	}{
		{"one mapped team", []string{"team:data"}, "data", true},
		{"the first mapped team by name", []string{"team:zeta", "team:ml", "team:data"}, "data", true},
		{"unmapped teams are skipped", []string{"team:aaa", "team:ml"}, "ml", true},
		{"a principal owner maps to nothing", []string{"arn:aws:iam::123456789012:role/alice"}, "", false},
		{"operators do not count", nil, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := access.Grant{Owners: tc.owners, Operators: []string{"team:data"}}
			team, r, ok := c.For(g)
			if team != tc.team || ok != tc.ok || (ok && !reflect.DeepEqual(r, c[team])) {
				t.Errorf("For(%v) = %q, %+v, %v; want %q, %v", tc.owners, team, r, ok, tc.team, tc.ok)
			}
		})
	}
}

func TestMatchLambda(t *testing.T) {
	for _, tc := range []struct {
		pattern, function string
		want              bool
	}{
		{"etl-*", "etl-loader", true},
		{"etl-*", "etl-loader:prod", true},
		{"etl-*", "arn:aws:lambda:eu-west-1:999999999999:function:etl-loader", true},
		{"etl-*", "arn:aws:lambda:eu-west-1:999999999999:function:etl-loader:3", true},
		{"etl-*", "xetl-loader", false},
		{"etl-*", "etl", false},
		{"*", "anything", true},
		{"train", "train", true},
		{"train", "training", false},
		{"arn:aws:lambda:us-east-1:123456789012:function:train", "arn:aws:lambda:us-east-1:123456789012:function:train", true},
		{"arn:aws:lambda:us-east-1:123456789012:function:train", "arn:aws:lambda:us-east-1:123456789012:function:train:prod", true},
		{"arn:aws:lambda:us-east-1:123456789012:function:train", "arn:aws:lambda:us-east-1:210987654321:function:train", false},
		{"arn:aws:lambda:us-east-1:123456789012:function:train", "train", false},
		{"arn:aws:lambda:us-east-1:123456789012:function:t*", "arn:aws:lambda:us-east-1:123456789012:function:train", true},
		{"a*b*c", "aXbYc", true},
		{"a*b*c", "aXbY", false},
		{"etl-*", "arn:aws:lambda:us-east-1:123456789012:layer:etl-x", false},
	} {
		if got := MatchLambda(tc.pattern, tc.function); got != tc.want {
			t.Errorf("MatchLambda(%q, %q) = %v, want %v", tc.pattern, tc.function, got, tc.want)
		}
	}
}

func TestAllowsImage(t *testing.T) {
	r := Rights{Images: []string{ecr + "etl/", "docker.io/library/python"}}
	for _, tc := range []struct {
		image string
		want  string // "" allowed, else a substring of the error
	}{
		{ecr + "etl/loader:1", ""},
		{"python:3.12", ""},
		{ecr + "etl-evil/x", `not on team "data"'s images (teams.data.images`},
		{"busybox", "not on team"},
		{"etl/../x", "not a valid image reference"},
	} {
		err := r.AllowsImage("data", tc.image)
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("AllowsImage(%q) = %v, want %q", tc.image, err, tc.want)
		}
	}
	if err := (Rights{}).AllowsImage("ml", "python:3"); err == nil || !strings.Contains(err.Error(), "teams.ml.images is empty") {
		t.Errorf("no images: %v", err)
	}
}

// workflow decodes a definition whose steps are given as JSON.
func workflow(t *testing.T, steps string) *model.Workflow {
	t.Helper()
	def, err := model.ParseDefinition([]byte(`{"properties": {"owner": "tester"}, "workflow": {"id": "wf", "steps": [` + steps + `]}}`))
	if err != nil {
		t.Fatalf("definition: %v", err)
	}
	return def.Workflow
}

func mapStep(id, typ, param, fields string) string {
	return `{"step": {"id": "` + id + `", "type": "` + typ + `", "params": {"` + param + `": {"type": "MAP", "value": {` + fields + `}}}}}`
}

func str(name, value string) string {
	return `"` + name + `": {"type": "STRING", "value": "` + value + `"}`
}

func TestCheck(t *testing.T) {
	full := Rights{TaskRoleARN: dataRole, JobRoleARN: dataJobs, Images: []string{ecr + "etl/"}, Lambdas: []string{"etl-*"}}
	for _, tc := range []struct {
		name  string
		steps string
		r     Rights
		want  []string // one entry per problem: substrings it must hold, joined by |
	}{
		{"everything allowed", mapStep("e", "Ecs", "ecs", str("image", ecr+"etl/a:1")) + "," +
			mapStep("k", "Kubernetes", "kubernetes", str("image", ecr+"etl/b")) + "," +
			mapStep("b", "Batch", "batch", str("job_queue", "q")+","+str("job_definition", "d")) + "," +
			mapStep("l", "Lambda", "lambda", str("function_name", "etl-load")) + "," +
			`{"step": {"id": "h", "type": "NoOp"}}`, full, nil},
		{"an image off the team's list", mapStep("e", "Ecs", "ecs", str("image", ecr+"ml/a")), full,
			[]string{`step "e" (workflow.steps[0].step, Ecs)|params.ecs.image|not on team "data"'s images`}},
		{"a Notebook image", mapStep("n", "Notebook", "kubernetes", str("image", "python:3")), full,
			[]string{`step "n"|params.kubernetes.image|not on team`}},
		{"a function off the team's list", mapStep("l", "Lambda", "lambda", str("function_name", "payroll")), full,
			[]string{`step "l"|params.lambda.function_name|"payroll" is not on team "data"'s lambdas (teams.data.lambdas`}},
		{"no task role", mapStep("k", "Kubernetes", "kubernetes", str("image", ecr+"etl/b")), Rights{Images: full.Images},
			[]string{`step "k"|task role|has no task role (teams.data.task_role_arn`}},
		{"no job role", mapStep("b", "Batch", "batch", str("job_queue", "q")), Rights{},
			[]string{`step "b"|job role|no Batch job role`}},
		{"no lambdas, function by expression", `{"step": {"id": "l", "type": "Lambda", "params": {"lambda": {"type": "MAP", "expression": "return {\"function_name\": \"x\"};"}}}}`,
			Rights{}, []string{`step "l"|may invoke no Lambda function`}},
		{"an interpolated image is left to the worker", mapStep("e", "Ecs", "ecs", str("image", "${img}")), full, nil},
		{"loop bodies are walked", `{"foreach": {"id": "loop", "params": {"loop_params": {"type": "MAP", "value": {"i": {"type": "LONG_ARRAY", "value": [1]}}}},
		  "steps": [{"while": {"id": "inner", "condition": "false", "steps": [` + mapStep("deep", "Lambda", "lambda", str("function_name", "payroll")) + `]}}]}}`,
			full, []string{`step "deep" (workflow.steps[0].foreach.steps[0].while.steps[0].step, Lambda)|params.lambda.function_name`}},
		{"every bad step is reported", mapStep("a", "Ecs", "ecs", str("image", "python:3")) + "," + mapStep("b", "Lambda", "lambda", str("function_name", "x")),
			full, []string{`step "a"`, `step "b"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Check(workflow(t, tc.steps), "data", tc.r)
			if len(got) != len(tc.want) {
				t.Fatalf("Check = %q, want %d problems", got, len(tc.want))
			}
			for i, w := range tc.want {
				for _, part := range strings.Split(w, "|") {
					if !strings.Contains(got[i], part) {
						t.Errorf("problem %d %q does not say %q", i, got[i], part)
					}
				}
			}
		})
	}
}

func TestCheckWorkflow(t *testing.T) {
	wf := workflow(t, mapStep("e", "Ecs", "ecs", str("image", ecr+"etl/a"))+`,{"step": {"id": "n", "type": "NoOp"}}`)
	data := access.Grant{Owners: []string{"team:data"}}
	alice := access.Grant{Owners: []string{"arn:aws:iam::123456789012:role/alice"}}
	if got := (Config{}).CheckWorkflow(wf, alice); got != nil {
		t.Errorf("no configuration: %q, want nothing checked", got)
	}
	c := Config{"data": {TaskRoleARN: dataRole, Images: []string{ecr + "etl/"}}}
	if got := c.CheckWorkflow(wf, data); got != nil {
		t.Errorf("data's workflow: %q", got)
	}
	got := c.CheckWorkflow(wf, alice)
	if len(got) != 1 || !strings.Contains(got[0], `step "e"`) || !strings.Contains(got[0], "owners (arn:aws:iam::123456789012:role/alice) name no team") {
		t.Errorf("unmapped owners: %q, want one problem for the Ecs step naming the owners", got)
	}
	if got := c.CheckWorkflow(workflow(t, `{"step": {"id": "n", "type": "NoOp"}}`), alice); got != nil {
		t.Errorf("unmapped owners without such steps: %q", got)
	}
}
