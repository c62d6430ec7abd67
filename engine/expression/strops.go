package expression

import (
	"reflect"
	"strings"

	"github.com/expr-lang/expr/ast"
)

// String operations whose cost grows with their operands. The patcher maps
// expr's operators (matches, contains, startsWith, endsWith) and string
// builtins (upper, trim, indexOf, ...) onto these helpers, which charge the
// unit of work's Budget before doing the work: a regular expression costs
// the subject's bytes times the pattern's instructions, the others the bytes
// they scan or build.

// stringOperators maps expr's string operators to their helpers.
var stringOperators = map[string]string{
	"matches":    "java.matches",
	"contains":   "java.contains",
	"startsWith": "java.startsWith",
	"endsWith":   "java.endsWith",
}

// stringBuiltins maps the allowed string builtins to their helpers.
var stringBuiltins = map[string]string{
	"upper": "java.upper", "lower": "java.lower", "trim": "java.trim",
	"trimPrefix": "java.trimPrefix", "trimSuffix": "java.trimSuffix",
	"indexOf": "java.indexOf", "lastIndexOf": "java.lastIndexOf",
	"hasPrefix": "java.hasPrefix", "hasSuffix": "java.hasSuffix",
}

// stringHelpers returns the helpers of the string operations.
func stringHelpers() []*helper {
	str := func(name string, min, max int, usage string, fn func(*evalState, []string) (any, error), result reflect.Type) *helper {
		return &helper{
			name: name, min: min, max: max, usage: usage,
			fn: func(st *evalState, args []any) (any, error) {
				ss, err := argStrings(usage, args)
				if err != nil {
					return nil, err
				}
				return fn(st, ss)
			},
			result: stringArgs(usage, result),
		}
	}
	// scan charges the bytes an operation reads.
	scan := func(op func(a, b string) any) func(*evalState, []string) (any, error) {
		return func(st *evalState, s []string) (any, error) {
			if err := st.chargeCPU(int64(len(s[0]) + len(s[1]))); err != nil {
				return nil, err
			}
			return op(s[0], s[1]), nil
		}
	}
	// build charges the bytes an operation reads and the string it builds.
	build := func(op func(s []string) string) func(*evalState, []string) (any, error) {
		return func(st *evalState, s []string) (any, error) {
			n := 0
			for _, x := range s {
				n += len(x)
			}
			if err := st.chargeCPU(int64(n)); err != nil {
				return nil, err
			}
			out := op(s)
			if err := st.checkStringLen(len(out)); err != nil {
				return nil, err
			}
			return out, nil
		}
	}
	return []*helper{
		str("java.matches", 2, 2, "s matches pattern", javaMatches, boolType),
		str("java.contains", 2, 2, "s contains t", scan(func(a, b string) any { return strings.Contains(a, b) }), boolType),
		str("java.startsWith", 2, 2, "s startsWith t", scan(func(a, b string) any { return strings.HasPrefix(a, b) }), boolType),
		str("java.endsWith", 2, 2, "s endsWith t", scan(func(a, b string) any { return strings.HasSuffix(a, b) }), boolType),
		str("java.hasPrefix", 2, 2, "hasPrefix(s, prefix)", scan(func(a, b string) any { return strings.HasPrefix(a, b) }), boolType),
		str("java.hasSuffix", 2, 2, "hasSuffix(s, suffix)", scan(func(a, b string) any { return strings.HasSuffix(a, b) }), boolType),
		str("java.indexOf", 2, 2, "indexOf(s, t)", scan(func(a, b string) any { return int64(strings.Index(a, b)) }), int64Type),
		str("java.lastIndexOf", 2, 2, "lastIndexOf(s, t)", scan(func(a, b string) any { return int64(strings.LastIndex(a, b)) }), int64Type),
		str("java.upper", 1, 1, "upper(s)", build(func(s []string) string { return strings.ToUpper(s[0]) }), stringType),
		str("java.lower", 1, 1, "lower(s)", build(func(s []string) string { return strings.ToLower(s[0]) }), stringType),
		str("java.trim", 1, 2, "trim(s[, cutset])", build(func(s []string) string {
			if len(s) == 1 {
				return strings.TrimSpace(s[0])
			}
			return strings.Trim(s[0], s[1])
		}), stringType),
		str("java.trimPrefix", 2, 2, "trimPrefix(s, prefix)", build(func(s []string) string { return strings.TrimPrefix(s[0], s[1]) }), stringType),
		str("java.trimSuffix", 2, 2, "trimSuffix(s, suffix)", build(func(s []string) string { return strings.TrimSuffix(s[0], s[1]) }), stringType),
	}
}

// stringArgs is the static typing of a helper over strings: known argument
// types must be strings.
func stringArgs(usage string, result reflect.Type) func([]reflect.Type) (reflect.Type, error) {
	return func(args []reflect.Type) (reflect.Type, error) {
		for i, t := range args {
			if !isUnknownType(t) && t.Kind() != reflect.String {
				return nil, failf(ErrType, "%s: argument %d must be a string, got %s", usage, i+1, t)
			}
		}
		return result, nil
	}
}

// javaMatches is expr's `s matches pattern` (RE2 syntax, unanchored). It
// charges the pattern's compilation (see compileRegex) and the subject's
// bytes times the program's instructions, before running it.
func javaMatches(st *evalState, s []string) (any, error) {
	subject, pattern := s[0], s[1]
	re, insts, err := compileRegex(st, pattern)
	if err != nil {
		return nil, err
	}
	if err := st.chargeCPU(int64(len(subject)+1) * insts * regexMatchCost); err != nil {
		return nil, err
	}
	return re.MatchString(subject), nil
}

// patchStringOp rewrites the string operators and builtins onto their
// charged helpers; it reports whether it did. (A literal pattern of matches
// was sized before: see literalPatterns.)
func (p *patcher) patchStringOp(node *ast.Node) bool {
	switch n := (*node).(type) {
	case *ast.BinaryNode:
		h, ok := stringOperators[n.Operator]
		if !ok {
			return false
		}
		p.replace(node, h, n.Left, n.Right)
		return true
	case *ast.BuiltinNode:
		h, ok := stringBuiltins[n.Name]
		if !ok {
			return false
		}
		p.replace(node, h, n.Arguments...)
		return true
	}
	return false
}
