package definition_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/maestro-serverless/maestro/definition"
)

// manyParams builds a definition with n step params, each the expression
// term (quoted for JSON by the caller).
func manyParams(n int, term string) []byte {
	var ps []string
	for i := 0; i < n; i++ {
		ps = append(ps, fmt.Sprintf(`"p%04d":{"type":"BOOLEAN","expression":%q}`, i, term))
	}
	return []byte(`{"properties":{"owner":"probe"},"workflow":{"id":"probe","steps":[{"step":{"id":"s","type":"NoOp","params":{` +
		strings.Join(ps, ",") + `}}}]}}`)
}

// TestRegexLiteralsAreSizedAtPush: the security review's push probe, 25
// literal patterns of 1.4 million instructions each in a 248 KB definition,
// took 23.7 s and 515 MB to validate, past the API function's memory and
// time. Patterns are now sized from their parse tree, so the check answers
// at once, refusing each param by its path and naming the limit.
func TestRegexLiteralsAreSizedAtPush(t *testing.T) {
	data := manyParams(25, "'' matches '"+strings.Repeat("a{1000}", 1400)+"'")
	if len(data) < 240_000 {
		t.Fatalf("the probe is %d bytes", len(data))
	}
	_, err := definition.NewChecker().Check(data, definition.JSON)
	var errs definition.Errors
	if !errors.As(err, &errs) {
		t.Fatalf("want validation errors, got %v", err)
	}
	if len(errs) != 25 {
		t.Fatalf("want one error per param, got %d: %v", len(errs), err)
	}
	for i, e := range errs {
		if want := fmt.Sprintf("workflow.steps[0].step.params.p%04d.expression", i); e.Path != want {
			t.Errorf("error %d at %s, want %s", i, e.Path, want)
		}
		if !strings.Contains(e.Msg, "regular expression of 1,400,002 instructions, more than the limit of 10,000") {
			t.Errorf("error %d: %s", i, e.Msg)
		}
	}
}

// TestConstantRangesAreSizedAtPush: a constant range past the array limit
// is refused when the definition is checked.
func TestConstantRangesAreSizedAtPush(t *testing.T) {
	_, err := definition.NewChecker().Check(manyParams(3, "len(0..999998) > 0"), definition.JSON)
	if err == nil || !strings.Contains(err.Error(), "range 0..999998 would produce 999999 values, more than the limit of 25001") {
		t.Fatalf("got %v", err)
	}
}

// TestCheckingIsBudgeted: patterns under the limit each cost their
// compilation; a definition whose patterns cost more than a decision's CPU
// budget to compile is refused at the expression that passes it.
func TestCheckingIsBudgeted(t *testing.T) {
	// 9,998 instructions and 2 more: 6 million units to compile.
	pattern := strings.Repeat("a{1000}", 9) + "a{998}"
	data := manyParams(40, "'' matches '"+pattern+"'")
	_, err := definition.NewChecker().Check(data, definition.JSON)
	var errs definition.Errors
	if !errors.As(err, &errs) {
		t.Fatalf("want validation errors, got %v", err)
	}
	first := 40 - len(errs)
	if first < 10 || first > 20 {
		t.Fatalf("%d of 40 patterns checked before the budget ran out", first)
	}
	if want := fmt.Sprintf("workflow.steps[0].step.params.p%04d.expression", first); errs[0].Path != want {
		t.Errorf("first error at %s, want %s", errs[0].Path, want)
	}
	if !strings.Contains(errs[0].Msg, "checking the definition's expressions costs more than 100,000,000 units") {
		t.Errorf("got %s", errs[0].Msg)
	}
	// Each check has a budget of its own.
	if _, err := definition.NewChecker().Check(manyParams(10, "'' matches '"+pattern+"'"), definition.JSON); err != nil {
		t.Fatal(err)
	}
}
