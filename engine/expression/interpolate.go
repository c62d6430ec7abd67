package expression

import (
	"strings"
)

// Interpolate expands parameter references in a literal string, as Maestro
// does for STRING values, STRING_ARRAY elements and STRING_MAP keys and
// values:
//
//	$name     name is a letter followed by letters, digits and _
//	${name}   name is a letter followed by letters, digits and _ . - /
//	          (so ${job.2__param1} and ${job1__sleep_seconds} work)
//	$$        a literal $ (so $$name and $${name} stay unexpanded)
//
// A $ that starts none of these forms is kept as is ("$", "a$", "$1",
// "${}", "${" all stay literal). Values are printed as Java prints them
// (15, 1.5, 1.0E7, true); arrays and maps as JSON. lookup returns a
// parameter's value; a name it does not know is an error naming it.
func Interpolate(s string, lookup func(name string) (any, bool)) (string, error) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	err := scanRefs(s, func(lit string) { b.WriteString(lit) }, func(name string) error {
		v, ok := lookup(name)
		if !ok {
			return failf(ErrUnknownParam, "cannot interpolate %q: unknown parameter %q", truncate(s, quoteLimit), name)
		}
		str, err := formatValue(v)
		if err != nil {
			return failf(ErrType, "cannot interpolate %q: parameter %q: %v", truncate(s, quoteLimit), name, err)
		}
		b.WriteString(str)
		return nil
	})
	if err != nil {
		return "", err
	}
	return b.String(), nil
}

// InterpolationRefs returns the parameter names s references, in order of
// first use, without duplicates.
func InterpolationRefs(s string) []string {
	if !strings.Contains(s, "$") {
		return nil
	}
	var names []string
	_ = scanRefs(s, func(string) {}, func(name string) error {
		if !contains(names, name) {
			names = append(names, name)
		}
		return nil
	})
	return names
}

// scanRefs walks s, passing literal text to lit and each reference to ref.
func scanRefs(s string, lit func(string), ref func(string) error) error {
	start := 0 // start of the pending literal text
	i := 0
	for i < len(s) {
		if s[i] != '$' {
			i++
			continue
		}
		if i+1 < len(s) && s[i+1] == '$' {
			lit(s[start:i] + "$")
			i += 2
			start = i
			continue
		}
		name, end := refAt(s, i)
		if name == "" {
			i++
			continue
		}
		lit(s[start:i])
		if err := ref(name); err != nil {
			return err
		}
		i = end
		start = i
	}
	lit(s[start:])
	return nil
}

// refAt parses a reference at s[i] == '$'; it returns the name and the end
// of the reference, or "" when none starts there.
func refAt(s string, i int) (string, int) {
	j := i + 1
	braced := j < len(s) && s[j] == '{'
	if braced {
		j++
	}
	if j >= len(s) || !isASCIILetter(s[j]) {
		return "", 0
	}
	k := j + 1
	for k < len(s) && isNameByte(s[k], braced) {
		k++
	}
	if !braced {
		return s[j:k], k
	}
	if k >= len(s) || s[k] != '}' {
		return "", 0
	}
	return s[j:k], k + 1
}

func isASCIILetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

func isNameByte(c byte, braced bool) bool {
	if isASCIILetter(c) || (c >= '0' && c <= '9') || c == '_' {
		return true
	}
	return braced && (c == '.' || c == '-' || c == '/')
}
