package expression

import (
	"regexp"
	"regexp/syntax"
	"strings"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"
)

// Regular expressions (`s matches pattern`, RE2 syntax) are the costliest
// operation of the language: compiling one builds a program whose size is
// not its source's (a{1000} is 7 bytes and 1,000 instructions; repeats
// nest and multiply), and matching runs that program over every byte of
// the subject. So a pattern is sized from its parse tree, which costs its
// bytes, before anything compiles it; one over MaxRegexInstructions is
// refused — when the definition is checked for a literal pattern, at
// evaluation for one computed at run time — and the rest are charged
// before they run: compiling its instructions once per unit of work (the
// compiled program is kept in the Budget), matching the subject's bytes
// times its instructions times regexMatchCost.

// MaxRegexInstructions is the largest compiled program a pattern may have:
// 10,000 instructions, about 400 KB of program. Maestro's own patterns
// (dates, ids) have a few dozen.
const MaxRegexInstructions = 10_000

// Costs, in CPU units (about a nanosecond each), of the steps of a match.
const (
	// regexParseCost is charged per pattern byte to parse and size it.
	regexParseCost = 16
	// regexMatchCost is charged per subject byte and instruction: Go's
	// linear-time matcher takes about 4-5 ns for each (BenchmarkAdversarialDecide).
	regexMatchCost = 4
	// regexCompileCost is charged per instruction to compile a program,
	// once per pattern and unit of work; measured at 180-670 ns an
	// instruction (BenchmarkRegexCompile; alternations cost most).
	regexCompileCost = 600
)

// regexSize parses pattern and returns the size of its compiled program,
// computed from the parse tree without compiling it: at least the number of
// instructions Go's compiler emits (TestRegexSizeBoundsTheProgram). Sizes
// saturate past MaxRegexInstructions, so nested repeats cannot overflow.
func regexSize(pattern string) (int64, error) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return 0, err
	}
	// The program starts with a failure instruction and ends with a match.
	return satAdd(progSize(re), 2), nil
}

// sizeCap is where sizes saturate: far above the limit, far below overflow.
const sizeCap = 1 << 40

func satAdd(a, b int64) int64 { return min(a+b, sizeCap) }

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func satMul(a, b int64) int64 {
	if a != 0 && b > sizeCap/a {
		return sizeCap
	}
	return min(a*b, sizeCap)
}

// progSize is the number of instructions re compiles to once simplified
// (regexp/syntax's Simplify expands counted repeats into copies).
func progSize(re *syntax.Regexp) int64 {
	switch re.Op {
	case syntax.OpLiteral:
		return max(int64(len(re.Rune)), 1)
	case syntax.OpCapture:
		return satAdd(progSize(re.Sub[0]), 2)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
		return satAdd(progSize(re.Sub[0]), 1)
	case syntax.OpConcat:
		if len(re.Sub) == 0 {
			return 1
		}
		var n int64
		for _, s := range re.Sub {
			n = satAdd(n, progSize(s))
		}
		return n
	case syntax.OpAlternate:
		// One alternation instruction between each two branches.
		n := int64(len(re.Sub) - 1)
		for _, s := range re.Sub {
			n = satAdd(n, progSize(s))
		}
		return n
	case syntax.OpRepeat:
		// Simplify turns x{n} into n copies of x, x{n,m} into n copies and
		// m-n nested optional copies (one instruction more each), x{n,}
		// into n copies and a loop instruction.
		sub := progSize(re.Sub[0])
		switch {
		case re.Max < 0:
			return satAdd(satMul(int64(re.Min), sub), 1) + boolInt(re.Min == 0)*sub
		case re.Max == 0:
			return 1
		}
		return satAdd(satMul(int64(re.Min), sub), satMul(int64(re.Max-re.Min), satAdd(sub, 1)))
	default:
		// Character classes, any character, empty matches and assertions
		// are one instruction each.
		return 1
	}
}

// compileRegex returns the program of pattern, charged to st's unit of
// work: its bytes to size it, then — unless this unit of work already
// compiled it — its instructions to compile it. It also returns the
// program's size, what each subject byte costs to match.
func compileRegex(st *evalState, pattern string) (*regexp.Regexp, int64, error) {
	if re, insts, ok := st.budget.regex(pattern); ok {
		return re, insts, nil
	}
	if err := st.chargeCPU(int64(len(pattern)+1) * regexParseCost); err != nil {
		return nil, 0, err
	}
	insts, err := regexSize(pattern)
	if err != nil {
		return nil, 0, failf(ErrEval, "matches: invalid regular expression %q: %v", truncate(pattern, 100), err)
	}
	if insts > MaxRegexInstructions {
		return nil, 0, failf(ErrLimit, "matches: %s", regexTooLarge(insts))
	}
	if err := st.chargeCPU(insts * regexCompileCost); err != nil {
		return nil, 0, err
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, 0, failf(ErrEval, "matches: invalid regular expression %q: %v", truncate(pattern, 100), err)
	}
	st.budget.keepRegex(pattern, re, insts)
	return re, insts, nil
}

// regexTooLarge says that a pattern of insts instructions is over the limit.
func regexTooLarge(insts int64) string {
	return "regular expression of " + units(insts) + " instructions, more than the limit of " +
		units(MaxRegexInstructions) + " (counted repeats multiply: a{1000} is 1,000 instructions)"
}

// literalPatterns sizes the literal patterns of matches in norm, the
// normalised form of src, and returns their instructions in all; one that
// does not parse or is over MaxRegexInstructions is an error. Source that
// does not parse is left to the compiler to report.
func literalPatterns(src, norm string) (int64, error) {
	if !strings.Contains(norm, "matches") {
		return 0, nil
	}
	tree, err := parser.Parse(norm)
	if err != nil {
		return 0, nil
	}
	v := &patternSizer{src: src}
	ast.Walk(&tree.Node, v)
	return v.insts, v.err
}

// patternSizer is the AST visitor of literalPatterns.
type patternSizer struct {
	src   string
	insts int64
	err   error
}

func (v *patternSizer) Visit(node *ast.Node) {
	n, ok := (*node).(*ast.BinaryNode)
	if !ok || n.Operator != "matches" || v.err != nil {
		return
	}
	lit, ok := n.Right.(*ast.StringNode)
	if !ok {
		return
	}
	insts, err := regexSize(lit.Value)
	switch {
	case err != nil:
		v.err = newError(v.src, ErrSyntax, err, "invalid regular expression %q: %v", truncate(lit.Value, 100), err)
	case insts > MaxRegexInstructions:
		v.err = newError(v.src, ErrLimit, nil, "%s", regexTooLarge(insts))
	default:
		v.insts = satAdd(v.insts, insts)
	}
}
