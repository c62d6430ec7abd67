package infra

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// render turns a CloudFormation value into a comparable string: literals
// as they are, {"Ref": X} as "${X}", {"Fn::GetAtt": [X, A]} as "${X.A}",
// Fn::Join as the joined rendering and lists as their sorted renderings
// joined by " | ".
func render(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case float64:
		return fmt.Sprint(v)
	case bool:
		return fmt.Sprint(v)
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = render(e)
		}
		sort.Strings(parts)
		return strings.Join(parts, " | ")
	case map[string]any:
		if ref, ok := v["Ref"]; ok {
			return "${" + render(ref) + "}"
		}
		if ga, ok := v["Fn::GetAtt"].([]any); ok && len(ga) == 2 {
			return "${" + render(ga[0]) + "." + render(ga[1]) + "}"
		}
		if j, ok := v["Fn::Join"].([]any); ok && len(j) == 2 {
			items, _ := j[1].([]any)
			parts := make([]string, len(items))
			for i, e := range items {
				parts[i] = render(e)
			}
			return strings.Join(parts, render(j[0]))
		}
	}
	return fmt.Sprintf("%v", v)
}

// strs reads a string or a list of strings (IAM's Action and Resource).
func strs(v any) []string {
	switch v := v.(type) {
	case nil:
		return nil
	case []any:
		out := make([]string, len(v))
		for i, e := range v {
			out[i] = render(e)
		}
		return out
	default:
		return []string{render(v)}
	}
}

// grant is one allowed action on one resource, with the statement's
// conditions rendered.
type grant struct {
	Action, Resource, Condition string
}

// grants flattens a policy document into sorted grants; it reports
// anything but plain Allow statements.
func grants(doc map[string]any) ([]grant, error) {
	var out []grant
	stmts, _ := doc["Statement"].([]any)
	for _, raw := range stmts {
		st := raw.(map[string]any)
		for _, k := range []string{"NotAction", "NotResource", "NotPrincipal"} {
			if _, ok := st[k]; ok {
				return nil, fmt.Errorf("statement uses %s: %v", k, st)
			}
		}
		if st["Effect"] != "Allow" {
			return nil, fmt.Errorf("statement is not an Allow: %v", st)
		}
		cond := ""
		if c, ok := st["Condition"]; ok {
			cond = renderCondition(c)
		}
		for _, a := range strs(st["Action"]) {
			for _, r := range strs(st["Resource"]) {
				out = append(out, grant{a, r, cond})
			}
		}
	}
	slices.SortFunc(out, func(a, b grant) int {
		return strings.Compare(a.Action+"\x00"+a.Resource+"\x00"+a.Condition, b.Action+"\x00"+b.Resource+"\x00"+b.Condition)
	})
	return out, nil
}

// renderCondition renders a condition block as sorted op:key=value items.
func renderCondition(v any) string {
	m, _ := v.(map[string]any)
	var parts []string
	for op, kv := range m {
		for k, val := range kv.(map[string]any) {
			parts = append(parts, op+":"+k+"="+render(val))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ";")
}
