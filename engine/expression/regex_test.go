package expression

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"testing"
)

// regexPatterns are patterns of every shape the sizing must follow.
var regexPatterns = []string{
	"", "a", "abc", "^[a-z0-9_]+$", `\d{8}`, `(\d{4})-(\d{2})-(\d{2})`, "a|b|c", "(a|b)*c", "x{0}", "x{0,}", "x{1,}", "x{3,}",
	"x{2,5}", "(ab){3}", "((a{2}){3}){4}", "(?i)hello", "a*?b+?c??", `\bword\b`, "(?:a|bc|def){2,4}", ".*", "(?s).",
	"[^a]", "a{1000}", "(a|b){0,20}", "^$", "(|a)", "(a{2}){3}", `(\pL|\pN)+`, "(?m)^x$", "(a)(b)(c)(d)", "((((x))))",
	"prefix-(foo|foobar|food)", "[[:alpha:]]{1,3}", "a{0,0}", "(a{2,}){2}", "x{1,1}",
}

// TestRegexSizeBoundsTheProgram: the size computed from the parse tree is
// at least the program Go compiles, and not far above it.
func TestRegexSizeBoundsTheProgram(t *testing.T) {
	for _, p := range regexPatterns {
		got, err := regexSize(p)
		if err != nil {
			t.Fatalf("%q: %v", p, err)
		}
		re, _ := syntax.Parse(p, syntax.Perl)
		prog, err := syntax.Compile(re.Simplify())
		if err != nil {
			t.Fatal(err)
		}
		actual := int64(len(prog.Inst))
		if got < actual || got > 2*actual+4 {
			t.Errorf("%q: sized %d, compiles to %d", p, got, actual)
		}
	}
}

// TestRegexSizeOfRepeats: counted repeats multiply, nested ones too (Go's
// parser refuses nestings whose counts multiply past 1,000), and sizing a
// pattern does not build its program.
func TestRegexSizeOfRepeats(t *testing.T) {
	for pattern, want := range map[string]int64{
		strings.Repeat("a{1000}", 1400):   1_400_002,
		strings.Repeat("(a{30}){30}", 20): 20*(30*(30+2)) + 2,
	} {
		got, err := regexSize(pattern)
		if err != nil || got != want {
			t.Errorf("%.30s: sized %d, %v; want %d", pattern, got, err, want)
		}
	}
}

// BenchmarkRegexCompile measures what compiling a pattern costs per
// instruction of its program: regexCompileCost charges it.
func BenchmarkRegexCompile(b *testing.B) {
	for _, p := range []string{`^[a-z0-9_]+$`, strings.Repeat("a{1000}", 10), strings.Repeat("(a|b)", 2000), strings.Repeat("[a-z]{100}", 100)} {
		insts, err := regexSize(p)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("%d-instructions", insts), func(b *testing.B) {
			for b.Loop() {
				regexp.MustCompile(p)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(insts), "ns/instruction")
		})
	}
}
