package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/pb33f/libopenapi"
)

// TestOpenAPIListsEveryRoute: GET /api/v3/openapi.json is a valid OpenAPI
// 3.1 document whose operations are exactly the router's routes, each
// documented.
func TestOpenAPIListsEveryRoute(t *testing.T) {
	s := &server{svc: (&fakeService{}).services(), guards: routeGuards()}
	s.register(http.NewServeMux())
	docs := routeSummaries()
	for _, p := range s.patterns {
		if docs[p] == "" {
			t.Errorf("route %q has no summary in routeSummaries", p)
		}
	}
	if len(docs) != len(s.patterns) {
		var stale []string
		for p := range docs {
			if !contains(s.patterns, p) {
				stale = append(stale, p)
			}
		}
		t.Errorf("routeSummaries documents routes the router does not serve: %v", stale)
	}

	h := NewHandler((&fakeService{}).services(), Options{})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", openAPIPath, nil))
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		t.Fatalf("GET %s: %d %s", openAPIPath, rec.Code, rec.Header().Get("Content-Type"))
	}
	body := rec.Body.Bytes()
	doc, err := libopenapi.NewDocument(body)
	if err != nil {
		t.Fatal(err)
	}
	if v := doc.GetVersion(); v != "3.1.0" {
		t.Fatalf("OpenAPI version %q", v)
	}
	model, err := doc.BuildV3Model()
	if err != nil {
		t.Fatalf("not a valid OpenAPI 3.1 document: %v", err)
	}
	var listed []string
	for path, item := range model.Model.Paths.PathItems.FromOldest() {
		for method := range item.GetOperations().FromOldest() {
			listed = append(listed, strings.ToUpper(method)+" "+path)
		}
	}
	sort.Strings(listed)
	want := append([]string(nil), s.patterns...)
	sort.Strings(want)
	if strings.Join(listed, "\n") != strings.Join(want, "\n") {
		t.Fatalf("operations\n%s\nroutes\n%s", strings.Join(listed, "\n"), strings.Join(want, "\n"))
	}
	checkOpenAPI(t, body)
	t.Logf("%d operations on %d paths", len(listed), model.Model.Paths.PathItems.Len())
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// checkOpenAPI checks the rules of OpenAPI 3.1 a document built from
// routes could break: info's required fields, paths that start with "/",
// operations with responses and unique operationIds, every path template
// variable declared as a required path parameter (and no other), every
// parameter with a name, a valid "in" and a schema, and every $ref
// resolving within the document.
func checkOpenAPI(t *testing.T, body []byte) {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	info, _ := doc["info"].(map[string]any)
	if doc["openapi"] != "3.1.0" || info["title"] == nil || info["version"] == nil {
		t.Fatalf("openapi %v, info %v", doc["openapi"], info)
	}
	ids := map[string]string{}
	paths, _ := doc["paths"].(map[string]any)
	for path, item := range paths {
		if !strings.HasPrefix(path, "/") {
			t.Errorf("path %q does not start with /", path)
		}
		vars := map[string]bool{}
		for _, m := range pathParam.FindAllStringSubmatch(path, -1) {
			vars[m[1]] = true
		}
		for method, v := range item.(map[string]any) {
			op := v.(map[string]any)
			where := strings.ToUpper(method) + " " + path
			if !contains([]string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}, method) {
				t.Errorf("%s: not an HTTP method", where)
			}
			id, _ := op["operationId"].(string)
			if prev, dup := ids[id]; dup || id == "" {
				t.Errorf("%s: operationId %q (also %s)", where, id, prev)
			}
			ids[id] = where
			if r, _ := op["responses"].(map[string]any); len(r) == 0 {
				t.Errorf("%s: no responses", where)
			}
			declared := map[string]bool{}
			params, _ := op["parameters"].([]any)
			for _, pv := range params {
				p := pv.(map[string]any)
				name, _ := p["name"].(string)
				in, _ := p["in"].(string)
				if name == "" || !contains([]string{"path", "query", "header", "cookie"}, in) || p["schema"] == nil {
					t.Errorf("%s: parameter %v", where, p)
				}
				if in == "path" {
					declared[name] = true
					if p["required"] != true {
						t.Errorf("%s: path parameter %s is not required", where, name)
					}
				}
			}
			for v := range vars {
				if !declared[v] {
					t.Errorf("%s: path variable {%s} is not a parameter", where, v)
				}
			}
			for d := range declared {
				if !vars[d] {
					t.Errorf("%s: path parameter %s is not in the path", where, d)
				}
			}
		}
	}
	for _, ref := range regexp.MustCompile(`"\$ref":"#/([^"]+)"`).FindAllStringSubmatch(string(body), -1) {
		var node any = doc
		for _, part := range strings.Split(ref[1], "/") {
			m, _ := node.(map[string]any)
			node = m[part]
		}
		if node == nil {
			t.Errorf("$ref #/%s does not resolve", ref[1])
		}
	}
}
