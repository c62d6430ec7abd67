package sel

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The acceptance table of SEL: each case is an expression as a Maestro
// definition holds it, its inputs, and what netflix-sel gives for it. The
// comment above a case names the Java it comes from (netflix-sel in
// Netflix/maestro: sel.jjt, SelParserEvaluationVisitor, SelVisitorState,
// type/*.java, their tests, docs/lang-guide/*.md). Every expected value was
// read off the Java and then confirmed by running netflix-sel itself
// (SelParser + SelParserEvaluationVisitor with Maestro's limits, joda-time
// 2.13, the clock fixed at selCaseNow) on the same source, sanitized as
// Maestro's ExprEvaluator does.
//
// Notes on what the table holds:
//   - JavaString of a result is Java's toString of the SelType, but NULL
//     prints "null" (not SelType.NULL's "NULL") and an ERROR (throw) prints
//     its message (not SelError's "ERROR: message").
//   - Maps are printed by Java's HashMap in hash order; the cases with more
//     than one key insert their keys in that order, so that insertion order
//     prints the same.
//   - Limits are set with clear margins on both sides: SEL stops a loop
//     when its count reaches loopLimit (>=) and refuses an array whose
//     length reaches arrayLimit, where machine.go's Limits are "at most";
//     the table does not pin that off-by-one.
//   - Limits.Length, a map over Limits.Array and the Meter have no Java
//     equivalent of the same shape (Java bounds them with MemoryCounter and
//     a timeout); those cases only require ErrLimit.
//   - Util and params are the host's (selbridge.go), not this package's:
//     Util's functions are not in this table.

var selCaseNow = time.Date(2021, 3, 4, 5, 6, 7, 89_000_000, time.UTC)

type selWant int

const (
	selWantValue       selWant = iota
	selWantSyntax              // Parse fails with a syntax error naming line and column
	selWantUnsupported         // the error wraps ErrUnsupported (Parse or Eval)
	selWantLimit               // Eval's error wraps ErrLimit
	selWantError               // any error, from Parse or Eval
)

type selCase struct {
	src    string
	vars   map[string]Value
	limits Limits
	// meter, when > 0, is the budget of a test Meter that refuses once
	// more than that many units (cpu + mem) are charged.
	meter int64
	want  selWant
	// kind and str are the result's Kind and JavaString; re, when set, is
	// a pattern JavaString must match instead of str; kindOnly checks the
	// kind alone.
	kind     Kind
	str      string
	re       string
	kindOnly bool
	errHas   string
}

// selCaseSanitize is Maestro's ExprEvaluator.sanitize: trim, and append
// ";" unless the expression is empty, ends in ";", or ends in "}" without
// starting with `{"`.
func selCaseSanitize(expr string) string {
	e := strings.TrimSpace(expr)
	if e == "" || strings.HasSuffix(e, ";") || (!strings.HasPrefix(e, `{"`) && strings.HasSuffix(e, "}")) {
		return e
	}
	return e + ";"
}

// selCaseMap builds a map input from key, value pairs.
func selCaseMap(kv ...any) *Map {
	m := NewMap()
	for i := 0; i+1 < len(kv); i += 2 {
		m.Put(kv[i].(string), kv[i+1].(Value))
	}
	return m
}

// selCaseMeter refuses once more than budget units are charged.
type selCaseMeter struct{ used, budget int64 }

func (m *selCaseMeter) Charge(cpu, mem int64) error {
	m.used += cpu + mem
	if m.used > m.budget {
		return fmt.Errorf("test meter: %d units over the budget of %d", m.used, m.budget)
	}
	return nil
}

var selCases = []selCase{
	// ---- statements and the value of an expression
	// SelParserEvaluationVisitorTest.testExpressions
	{src: "x=1+1;", kind: KindLong, str: "2"},
	// SelParserEvaluationVisitorTest.testExpressions: a declaration is VOID
	{src: "int x = 1;", kind: KindVoid, str: "VOID"},
	// SelParserEvaluationVisitorTest.testExpressions
	{src: "x=1; for(i=2; i<10; i+=1) { x+=1; x+=1;} return x;", kind: KindLong, str: "17"},
	// SelParserEvaluationVisitorTest.testExpressions
	{src: "x=1; for(i=2; i<10; i+=1) { x+=1; if (x>10) continue; x+=1;} return x;", kind: KindLong, str: "14"},
	// SelParserEvaluationVisitorTest.testExpressions
	{src: "x=1; for(i=2; i<10; i+=1) { x+=1; if (x>10) return x; x+=1;} return x;", kind: KindLong, str: "12"},
	// SelParserEvaluationVisitorTest.testExpressions
	{src: "x=1; for(i=2; i<10; i+=1) { x+=1; if (x>10) break; x+=1;} return x;", kind: KindLong, str: "12"},
	// SelParserEvaluationVisitorTest.testExpressions
	{src: "x=1; if (x>1) x=3; else if (x<1) x=-3; else x=-x; return x;", kind: KindLong, str: "-1"},
	// SelParserEvaluationVisitorTest.testExpressions
	{src: "x=1; while (x<5) {x+=1; x+=1; x+=1;} return x;", kind: KindLong, str: "7"},
	// SelParserEvaluationVisitorTest.testExpressions
	{src: "x=1; x>0 && x<10;", kind: KindBoolean, str: "true"},
	// SelParserEvaluationVisitorTest.testExpressions
	{src: "x=1; x<=0 || x>=10 ? x : -x;", kind: KindLong, str: "-1"},
	// SelParserEvaluationVisitorTest.testExpressions
	{src: "x=1; for(;;){x+=1; if (x>10) break; x+=1;} return x;", kind: KindLong, str: "12"},
	// SelParserEvaluationVisitorTest.testExpressions
	{src: "x=1; while(true){x+=1; if (x>10) break; x+=1;} return x;", kind: KindLong, str: "12"},
	// SelParserEvaluationVisitorTest.testExpressions
	{src: "x=1; //x>0 && x<10;", kind: KindLong, str: "1"},
	// SelParserEvaluationVisitorTest.testExpressions: an unknown name is null
	{src: "zzzzz;", kind: KindNull, str: "null"},
	// SelParserEvaluationVisitorTest.testExpressions: null < and > are false
	{src: "/* x=1; */ z>0 && z<10;", kind: KindBoolean, str: "false"},
	// SelParserEvaluationVisitorTest.testExpressions
	{src: "int[] x = new int[]{1,2}; x[1];", kind: KindLong, str: "2"},
	// SelParserEvaluationVisitorTest.testExpressions (params['foo'] as a bare input, data-type.md Notes)
	{src: "foo;", vars: map[string]Value{"foo": String("bar")}, kind: KindString, str: "bar"},
	// SelParserEvaluationVisitorTest.testLargeNestedForLoopExpr (scaled down)
	{src: "m=0; for(i = 0;i < 50;i += 1) { for(j = 0; j < 40; j += 1) { for(k = 0; k < 30; k += 1) { m += 1; }}} return m;", kind: KindLong, str: "60000"},
	// statement.md block statement: a block's value is its last statement's
	{src: "{ x = 10; x += 10; }", kind: KindLong, str: "20"},
	// statement.md if statement: an if is VOID (visit(ASTIfStatement) pops DATA)
	{src: "if (2 > 1) x = 10; else x = -10;", kind: KindVoid, str: "VOID"},
	// statement.md if statement
	{src: "if (2 > 1) x = 10; else x = -10; x", kind: KindLong, str: "10"},
	// statement.md if statement
	{src: "int x=10; if(x>0) x+=10; else x-=10; return x;", kind: KindLong, str: "20"},
	// statement.md while statement
	{src: "int x = 0; while(x<10) x+=3; return x;", kind: KindLong, str: "12"},
	// statement.md for statement
	{src: "for(x=0; x<10; x+=1) x+=1; return x;", kind: KindLong, str: "10"},
	// statement.md break statement
	{src: "for(x=0; x<10; x+=1) break; return x;", kind: KindLong, str: "0"},
	// statement.md continue statement
	{src: "for(x=0; x<10; x+=1) {x+=10; continue; x+=10;} return x;", kind: KindLong, str: "11"},
	// statement.md return statement
	{src: "for(x=0; x<10; x+=1) {x+=10; return x; x+=10;}", kind: KindLong, str: "10"},
	// statement.md throw statement: the value is an ERROR
	{src: "x = 5; throw \"invalid variable value: \" + x;", kind: KindError, str: "invalid variable value: 5"},
	// SelParserEvaluationVisitor.visit(ASTIfStatement): an if ends as VOID
	{src: "x = 1; if (x > 0) { x = 2; }", kind: KindVoid, str: "VOID"},
	// SelParserEvaluationVisitor.visit(ASTIfStatement)
	{src: "if (true) { 5; }", kind: KindVoid, str: "VOID"},
	// SelParserEvaluationVisitor.visit(ASTStatement)/(ASTBlock)
	{src: "{ 1; 2; }", kind: KindLong, str: "2"},
	// SelParserEvaluationVisitor.processLoopBlock: a loop ends as VOID
	{src: "x = 1; while (x < 3) x += 1;", kind: KindVoid, str: "VOID"},
	// SelParserEvaluationVisitor.processLoopBlock
	{src: "for (x = 0; x < 3; x += 1) {}", kind: KindVoid, str: "VOID"},
	// SelParserEvaluationVisitor.visit(ASTLocalVariableDeclaration): NONE
	{src: "x = 5; int y = 1;", kind: KindVoid, str: "VOID"},
	// SelParserEvaluationVisitor.visit(ASTExecute)
	{src: "x = 1; x;", kind: KindLong, str: "1"},
	// SelParserEvaluationVisitor.visit(ASTExecute): no statement is VOID
	{src: "", kind: KindVoid, str: "VOID"},
	// SelParserEvaluationVisitor.visit(ASTBlock): an empty block
	{src: "{}", kind: KindVoid, str: "VOID"},
	// SelParserEvaluationVisitor.visit(ASTReturnStatement)
	{src: "x = 3; if (x > 1) return 1; else return 2;", kind: KindLong, str: "1"},
	// SelParserEvaluationVisitor.visit(ASTExecute): return ends the expression
	{src: "return 5; 6", kind: KindLong, str: "5"},
	// SelParserEvaluationVisitor.visit(ASTExecute)
	{src: "x = 1; return x; x = 2;", kind: KindLong, str: "1"},
	// SelParserEvaluationVisitor.visit(ASTThrowStatement)
	{src: "throw 'a' + 1;", kind: KindError, str: "a1"},
	// SelParserEvaluationVisitor.visit(ASTThrowStatement): only a string
	{src: "throw 1;", want: selWantError},
	// sel.jjt ReturnStatement: MUST return something
	{src: "return;", want: selWantSyntax},
	// sel.jjt ThrowStatement
	{src: "throw;", want: selWantSyntax},
	// sel.jjt Statement: no empty statement
	{src: "x = 1;;", want: selWantSyntax},
	// SelParserEvaluationVisitor.visit(ASTExecute): wrong return type BREAK
	{src: "x = 1; break;", want: selWantError},
	// sel.jjt IfStatement: else binds to the innermost if
	{src: "x = 0; if (true) if (false) x = 1; else x = 2; x", kind: KindLong, str: "2"},
	// statement.md if ... else if ... else
	{src: "x = 15; if (x < 10) r = 'low'; else if (x < 20) r = 'mid'; else r = 'high'; r", kind: KindString, str: "mid"},
	// statement.md if ... else if ... else
	{src: "x = 25; if (x < 10) r = 'low'; else if (x < 20) r = 'mid'; else r = 'high'; r", kind: KindString, str: "high"},
	// SelParserEvaluationVisitor.processLoopBlock: break leaves the inner loop
	{src: "c = 0; for (i = 0; i < 3; i += 1) { for (j = 0; j < 10; j += 1) { if (j == 2) break; c += 1; } } c", kind: KindLong, str: "6"},
	// statement.md continue statement (while)
	{src: "x = 0; s = 0; while (x < 5) { x += 1; if (x % 2 == 0) continue; s += x; } s", kind: KindLong, str: "9"},
	// SelParserEvaluationVisitor.processLoopBlock: RETURN propagates
	{src: "for (i = 0; i < 10; i += 1) { for (j = 0; j < 10; j += 1) { if (i * j == 12) return i * 10 + j; } } return -1;", kind: KindLong, str: "26"},
	// SelParserEvaluationVisitor.visit(ASTThrowStatement) in a loop
	{src: "for (i = 0; i < 5; i += 1) { if (i == 3) throw 'stop at ' + i; } 'done'", kind: KindError, str: "stop at 3"},
	// sel.jjt ForInit: LocalVariableDeclaration
	{src: "for (int i = 0, j = 5; i < 3; i += 1) { j += 1; } return j;", kind: KindLong, str: "8"},
	// SelParserEvaluationVisitor.visit(ASTForStatement): missing parts
	{src: "x = 0; for (; x < 5;) x += 1; x", kind: KindLong, str: "5"},
	// SelParserEvaluationVisitor.visit(ASTForStatement): missing condition is true
	{src: "i = 0; for (;; i += 1) { if (i >= 4) break; } i", kind: KindLong, str: "4"},
	// SelParserEvaluationVisitor.visit(ASTWhileStatement)
	{src: "while (false) {}", kind: KindVoid, str: "VOID"},
	// statement.md break statement (while)
	{src: "x = 0; while (x < 10) { x += 1; if (x == 5) break; } x", kind: KindLong, str: "5"},
	// sel.jjt ForUpdate: an assignment
	{src: "for (i = 0; i < 5; i = i + 1) {} i", kind: KindLong, str: "5"},
	// grammar header: variables are global to the expression
	{src: "if (true) { y = 5; } y", kind: KindLong, str: "5"},
	// grammar header: variables are global to the expression
	{src: "for (i = 0; i < 3; i += 1) { z = i; } z", kind: KindLong, str: "2"},
	// grammar header: variables are global to the expression
	{src: "for (i = 0; i < 3; i += 1) {} i", kind: KindLong, str: "3"},
	// SelVisitorState: one symbol table
	{src: "{ int q = 7; } q", kind: KindLong, str: "7"},
	// SelVisitorState: one symbol table
	{src: "if (true) { int k = 3; } k", kind: KindLong, str: "3"},
	// SelParserEvaluationVisitor: operators fail when evaluated, not before
	{src: "x = 1; if (x > 5) { y = 'a' * 2; } x", kind: KindLong, str: "1"},

	// ---- comments and imports
	// sel.jjt SINGLE_LINE_COMMENT
	{src: "x = 1; // comment", kind: KindLong, str: "1"},
	// sel.jjt MULTI_LINE_COMMENT
	{src: "/* a */ 1 + /* b */ 2", kind: KindLong, str: "3"},
	// sel.jjt FORMAL_COMMENT
	{src: "/** doc */ 5", kind: KindLong, str: "5"},
	// sel.jjt SINGLE_LINE_COMMENT ends at the line end
	{src: "x = 1; // c\nx + 1", kind: KindLong, str: "2"},
	// sel.jjt MULTI_LINE_COMMENT
	{src: "/* multi\nline */ 4", kind: KindLong, str: "4"},
	// sel.jjt IN_MULTI_LINE_COMMENT
	{src: "x = 1 /* unterminated", want: selWantSyntax},
	// sel.jjt ImportDeclaration: a no-op
	{src: "import java.lang.Runtime; 5", kind: KindLong, str: "5"},
	// sel.jjt ImportDeclaration
	{src: "import static java.lang.Math.*; 5", kind: KindLong, str: "5"},
	// sel.jjt Execute: imports come first
	{src: "x = 1; import java.util.List;", want: selWantSyntax},

	// ---- operators and precedence
	// operator.md
	{src: "x = 2 > 1 ? 10 : -10;", kind: KindLong, str: "10"},
	// operator.md
	{src: "x = 2 > 1;", kind: KindBoolean, str: "true"},
	// operator.md
	{src: "x = 2 < 1;", kind: KindBoolean, str: "false"},
	// operator.md
	{src: "x = !true;", kind: KindBoolean, str: "false"},
	// operator.md
	{src: "x = 2 == 1;", kind: KindBoolean, str: "false"},
	// operator.md
	{src: "x = 2 <= 1;", kind: KindBoolean, str: "false"},
	// operator.md
	{src: "x = 2 >= 1;", kind: KindBoolean, str: "true"},
	// operator.md
	{src: "x = 2 != 1;", kind: KindBoolean, str: "true"},
	// operator.md
	{src: "x = true || false;", kind: KindBoolean, str: "true"},
	// operator.md
	{src: "x = true && false;", kind: KindBoolean, str: "false"},
	// operator.md
	{src: "x = 1 + 2;", kind: KindLong, str: "3"},
	// operator.md
	{src: "x = 1 - 2;", kind: KindLong, str: "-1"},
	// operator.md
	{src: "x = 1 * 2;", kind: KindLong, str: "2"},
	// operator.md
	{src: "x = 1 / 2;", kind: KindLong, str: "0"},
	// operator.md
	{src: "x = 1.0 / 2;", kind: KindDouble, str: "0.5"},
	// operator.md
	{src: "x = 1 % 2;", kind: KindLong, str: "1"},
	// operator.md
	{src: "x = 1;\nx += 2;", kind: KindLong, str: "3"},
	// operator.md
	{src: "x = 1;\nx -= 2;", kind: KindLong, str: "-1"},
	// operator.md
	{src: "x = 1;\nx *= 2;", kind: KindLong, str: "2"},
	// operator.md
	{src: "x = 1;\nx /= 2;", kind: KindLong, str: "0"},
	// operator.md
	{src: "x = 1;\nx %= 2;", kind: KindLong, str: "1"},
	// operator.md Notes: compare strings with compareTo
	{src: "'hello'.compareTo('world') > 0", kind: KindBoolean, str: "false"},
	// operator.md Notes: no String multiply (SelString.binaryOps)
	{src: "'a' * 3", want: selWantError},
	// expression.md ternary
	{src: "x = -3; x > 0 ? x : -x;", kind: KindLong, str: "3"},
	// expression.md relational
	{src: "x = 5; x < 1 || x > 10;", kind: KindBoolean, str: "false"},
	// expression.md relational
	{src: "x = 5; x > 1 && x < 10;", kind: KindBoolean, str: "true"},
	// expression.md relational
	{src: "x = 1; x==1;", kind: KindBoolean, str: "true"},
	// expression.md relational
	{src: "x = 1; x!=1;", kind: KindBoolean, str: "false"},
	// expression.md arithmetic
	{src: "6/2;", kind: KindLong, str: "3"},
	// expression.md unary
	{src: "x = 4; +x;", kind: KindLong, str: "4"},
	// expression.md unary
	{src: "x = 4; -x;", kind: KindLong, str: "-4"},
	// sel.jjt MultiplicativeExpression binds tighter
	{src: "1 + 2 * 3", kind: KindLong, str: "7"},
	// sel.jjt PrimaryPrefix ( Expression )
	{src: "(1 + 2) * 3", kind: KindLong, str: "9"},
	// sel.jjt AdditiveExpression: left to right
	{src: "10 - 4 - 3", kind: KindLong, str: "3"},
	// sel.jjt MultiplicativeExpression: left to right
	{src: "100 / 10 / 5", kind: KindLong, str: "2"},
	// sel.jjt precedence
	{src: "2 + 3 > 4 && 1 < 2", kind: KindBoolean, str: "true"},
	// sel.jjt EqualityExpression below RelationalExpression
	{src: "1 < 2 == true", kind: KindBoolean, str: "true"},
	// sel.jjt ConditionalAndExpression binds tighter
	{src: "true || false && false", kind: KindBoolean, str: "true"},
	// sel.jjt UnaryExpression
	{src: "!true || true", kind: KindBoolean, str: "true"},
	// sel.jjt UnaryExpression
	{src: "-2 * -3", kind: KindLong, str: "6"},
	// SelLong.binaryOps then SelString.binaryOps, left to right
	{src: "1 + 2 + '3'", kind: KindString, str: "33"},
	// SelString.binaryOps ADD, left to right
	{src: "'1' + 2 + 3", kind: KindString, str: "123"},
	// SelString.binaryOps ADD
	{src: "'1' + (2 + 3)", kind: KindString, str: "15"},
	// sel.jjt ConditionalExpression nests to the right
	{src: "false ? 1 : true ? 2 : 3", kind: KindLong, str: "2"},
	// sel.jjt MultiplicativeExpression
	{src: "10 % 3 * 2", kind: KindLong, str: "2"},
	// sel.jjt MultiplicativeExpression
	{src: "2 * 3 % 4", kind: KindLong, str: "2"},
	// sel.jjt AdditiveExpression
	{src: "1 - 2 + 3", kind: KindLong, str: "2"},
	// sel.jjt precedence
	{src: "2 + 3 * 4 - 6 / 2 % 4", kind: KindLong, str: "11"},
	// sel.jjt precedence
	{src: "(1 + 2) * (3 + 4) / 3", kind: KindLong, str: "7"},
	// SelBoolean.binaryOps: BOOLEAN < LONG is a type mismatch
	{src: "1 < 2 < 3", want: selWantError},
	// sel.jjt ConditionalExpression
	{src: "x = 5; x > 3 ? x * 2 : x", kind: KindLong, str: "10"},
	// sel.jjt Assignment: Expression on the right is an Assignment
	{src: "x = y = 3; x + y", kind: KindLong, str: "6"},
	// SelParserEvaluationVisitor.processConditionBlock: only the chosen branch
	{src: "x = 0; true ? 1 : 1 / x", kind: KindLong, str: "1"},
	// SelParserEvaluationVisitor.processConditionBlock: (SelBoolean) cast
	{src: "1 ? 2 : 3", want: selWantError},
	// SelParserEvaluationVisitor.visit(ASTBinaryExpr): both sides are evaluated (no short circuit)
	{src: "false && 1 / 0 > 0", want: selWantError},
	// SelParserEvaluationVisitor.visit(ASTBinaryExpr): both sides are evaluated (no short circuit)
	{src: "true || 1 / 0 > 0", want: selWantError},

	// ---- long and double arithmetic, literals
	// SelLong.binaryOps ADD: Java long overflow wraps
	{src: "9223372036854775807L + 1", kind: KindLong, str: "-9223372036854775808"},
	// SelLong.binaryOps SUB wraps
	{src: "-9223372036854775807L - 2", kind: KindLong, str: "9223372036854775807"},
	// SelLong.binaryOps MUL wraps
	{src: "9223372036854775807 * 2", kind: KindLong, str: "-2"},
	// SelLong: int is a long
	{src: "2147483647 + 1", kind: KindLong, str: "2147483648"},
	// sel.jjt Literal: Long.parseLong fails
	{src: "9223372036854775808L", want: selWantError},
	// sel.jjt Literal: OCTAL_LITERAL is read by Long.parseLong, in decimal
	{src: "017", kind: KindLong, str: "17"},
	// sel.jjt OCTAL_LITERAL
	{src: "00", kind: KindLong, str: "0"},
	// sel.jjt OCTAL_LITERAL with L, Long.parseLong("010")
	{src: "010L", kind: KindLong, str: "10"},
	// sel.jjt HEX_LITERAL: Long.parseLong("0x1F") fails
	{src: "0x1F", want: selWantError},
	// sel.jjt HEX_LITERAL: Long.parseLong fails
	{src: "0XffL", want: selWantError},
	// sel.jjt OCTAL_LITERAL: 0 then 8 are two literals
	{src: "08", want: selWantSyntax},
	// sel.jjt FLOATING_POINT_LITERAL
	{src: "08.5", kind: KindDouble, str: "8.5"},
	// SelLong.binaryOps DIV
	{src: "5 / 2", kind: KindLong, str: "2"},
	// SelLong.binaryOps DIV truncates
	{src: "-5 / 2", kind: KindLong, str: "-2"},
	// SelLong.binaryOps MOD
	{src: "5 % -3", kind: KindLong, str: "2"},
	// SelLong.binaryOps MOD takes the dividend's sign
	{src: "-5 % 3", kind: KindLong, str: "-2"},
	// SelLong.binaryOps DIV: ArithmeticException
	{src: "1 / 0", want: selWantError},
	// SelLong.binaryOps MOD: ArithmeticException
	{src: "1 % 0", want: selWantError},
	// sel.jjt UnaryExpression
	{src: "7 - -3", kind: KindLong, str: "10"},
	// sel.jjt FLOATING_POINT_LITERAL f suffix
	{src: "1.5f", kind: KindDouble, str: "1.5"},
	// sel.jjt FLOATING_POINT_LITERAL F suffix
	{src: "2F", kind: KindDouble, str: "2.0"},
	// sel.jjt FLOATING_POINT_LITERAL d suffix
	{src: "3d", kind: KindDouble, str: "3.0"},
	// sel.jjt FLOATING_POINT_LITERAL D suffix
	{src: "3D", kind: KindDouble, str: "3.0"},
	// sel.jjt FLOATING_POINT_LITERAL exponent
	{src: "1e3", kind: KindDouble, str: "1000.0"},
	// sel.jjt FLOATING_POINT_LITERAL leading point
	{src: ".5", kind: KindDouble, str: "0.5"},
	// sel.jjt FLOATING_POINT_LITERAL trailing point
	{src: "5.", kind: KindDouble, str: "5.0"},
	// sel.jjt FLOATING_POINT_LITERAL
	{src: "1.5e2", kind: KindDouble, str: "150.0"},
	// SelDouble.toString: Double.toString
	{src: "1e10", kind: KindDouble, str: "1.0E10"},
	// SelDouble.toString: Double.toString
	{src: "1e7", kind: KindDouble, str: "1.0E7"},
	// SelDouble.toString: Double.toString
	{src: "9999999.0", kind: KindDouble, str: "9999999.0"},
	// SelDouble.toString: Double.toString
	{src: "0.0001", kind: KindDouble, str: "1.0E-4"},
	// SelDouble.toString: Double.toString
	{src: "123456789.0", kind: KindDouble, str: "1.23456789E8"},
	// SelDouble.binaryOps ADD
	{src: "0.1 + 0.2", kind: KindDouble, str: "0.30000000000000004"},
	// SelDouble.binaryOps DIV
	{src: "1.0 / 0", kind: KindDouble, str: "Infinity"},
	// SelDouble.binaryOps DIV
	{src: "-1.0 / 0", kind: KindDouble, str: "-Infinity"},
	// SelDouble.binaryOps DIV
	{src: "0.0 / 0", kind: KindDouble, str: "NaN"},
	// SelDouble.binaryOps MOD
	{src: "5.5 % 2", kind: KindDouble, str: "1.5"},
	// SelDouble.binaryOps MOD
	{src: "-7.5 % 2", kind: KindDouble, str: "-1.5"},
	// SelDouble.binaryOps DIV
	{src: "10.0 / 4", kind: KindDouble, str: "2.5"},
	// SelDouble.binaryOps EQUAL with a long
	{src: "1.0 == 1", kind: KindBoolean, str: "true"},
	// SelDouble.binaryOps GT
	{src: "2.5 > 2", kind: KindBoolean, str: "true"},
	// SelLong.binaryOps: a double rhs makes it a double
	{src: "2 < 2.5", kind: KindBoolean, str: "true"},
	// SelLong.binaryOps: a double rhs
	{src: "2 >= 2.0", kind: KindBoolean, str: "true"},
	// SelLongTest.testBinaryOps (ADD a double)
	{src: "1 + 1.5", kind: KindDouble, str: "2.5"},
	// SelDouble.binaryOps ADD a long
	{src: "1.5 + 1", kind: KindDouble, str: "2.5"},
	// SelLong.binaryOps MUL a double
	{src: "3 * 1.5", kind: KindDouble, str: "4.5"},
	// SelDoubleTest.testInvalidBinaryOp: ClassCastException
	{src: "1.5 + true", want: selWantError},
	// SelDoubleTest.testInvalidBinaryOpType
	{src: "1.5 < null", want: selWantError},
	// SelDoubleTest.testBinaryOps (EQUAL NULL)
	{src: "1.5 == null", kind: KindBoolean, str: "false"},
	// SelDoubleTest.testBinaryOps (ADD a string)
	{src: "1.1 + '2'", kind: KindString, str: "1.12"},
	// SelLongTest.testBinaryOps (ADD a string)
	{src: "1 + '2'", kind: KindString, str: "12"},
	// SelLongTest.testInvalidBinaryOp
	{src: "1 == true", want: selWantError},
	// SelLongTest.testInvalidBinaryOpType
	{src: "1 + null", want: selWantError},
	// SelLongTest.testBinaryOps (EQUAL NULL)
	{src: "1 == null", kind: KindBoolean, str: "false"},
	// SelLongTest.testBinaryOps (NOT_EQUAL NULL)
	{src: "1 != null", kind: KindBoolean, str: "true"},
	// SelLong.binaryOps: checkTypeMatch
	{src: "1 < null", want: selWantError},
	// SelLongTest.testBinaryOps
	{src: "1 <= 2", kind: KindBoolean, str: "true"},
	// SelLongTest.testBinaryOps
	{src: "1 >= 2", kind: KindBoolean, str: "false"},
	// SelLong.binaryOps
	{src: "-9223372036854775807L - 1", kind: KindLong, str: "-9223372036854775808"},
	// SelLong.binaryOps MINUS wraps
	{src: "-(-9223372036854775807L - 1)", kind: KindLong, str: "-9223372036854775808"},
	// SelLong.binaryOps PLUS
	{src: "+5", kind: KindLong, str: "5"},
	// SelDouble.binaryOps MINUS
	{src: "-1.5", kind: KindDouble, str: "-1.5"},

	// ---- strings, quotes, escapes, == and !=
	// data-type.md: single quoted
	{src: "'hello world'", kind: KindString, str: "hello world"},
	// data-type.md: double quoted
	{src: "\"hello world\"", kind: KindString, str: "hello world"},
	// SelTypeUtil.preprocess: \'
	{src: "'it\\'s'", kind: KindString, str: "it's"},
	// SelTypeUtil.preprocess: \"
	{src: "\"say \\\"hi\\\"\"", kind: KindString, str: "say \"hi\""},
	// sel.jjt SINGLE_QUOTED_STRING
	{src: "'say \"hi\"'", kind: KindString, str: "say \"hi\""},
	// sel.jjt DOUBLE_QUOTED_STRING
	{src: "\"it's\"", kind: KindString, str: "it's"},
	// SelTypeUtil.preprocess: \t
	{src: "'a\\tb'", kind: KindString, str: "a\tb"},
	// SelTypeUtil.preprocess: \n
	{src: "'a\\nb'", kind: KindString, str: "a\nb"},
	// SelTypeUtil.preprocess: \\
	{src: "'a\\\\b'", kind: KindString, str: "a\\b"},
	// SelTypeUtil.preprocess: both quote styles unescape alike
	{src: "\"a\\tb\" == 'a\\tb'", kind: KindBoolean, str: "true"},
	// sel.jjt options JAVA_UNICODE_ESCAPE: \u escapes are read before lexing
	{src: "'\\u0041BC'", kind: KindString, str: "ABC"},
	// sel.jjt SINGLE_QUOTED_STRING: no \q escape
	{src: "'a\\qb'", want: selWantSyntax},
	// sel.jjt STRING_LITERAL: unterminated
	{src: "'abc", want: selWantSyntax},
	// SelTypeUtil.preprocess: octal escapes are refused
	{src: "'\\101'", want: selWantError},
	// SelString.binaryOps ADD
	{src: "'' + 1 + 2", kind: KindString, str: "12"},
	// SelLong.binaryOps ADD
	{src: "1 + 2 + ''", kind: KindString, str: "3"},
	// SelString.binaryOps ADD
	{src: "'a' + 1", kind: KindString, str: "a1"},
	// SelLong.binaryOps: a string rhs
	{src: "1 + 'a'", kind: KindString, str: "1a"},
	// SelString.binaryOps ADD
	{src: "'a' + true", kind: KindString, str: "atrue"},
	// SelBooleanTest.testInvalidBinaryOpType
	{src: "true + 'a'", want: selWantError},
	// SelString.binaryOps ADD: getInternalVal() is null
	{src: "'a' + null", kind: KindString, str: "anull"},
	// SelType.NULL.binaryOps ADD
	{src: "null + 'a'", kind: KindString, str: "nulla"},
	// SelString.binaryOps ADD
	{src: "'x' + 1.5", kind: KindString, str: "x1.5"},
	// SelString.binaryOps ADD: Double.toString
	{src: "'a' + 1e7", kind: KindString, str: "a1.0E7"},
	// SelStringTest.testBinaryOps
	{src: "'abc' == 'abc'", kind: KindBoolean, str: "true"},
	// SelStringTest.testBinaryOps
	{src: "'abc' != 'abd'", kind: KindBoolean, str: "true"},
	// SelString.binaryOps EQUAL: Objects.equals, by value
	{src: "s = 'ab'; t = 'a' + 'b'; s == t", kind: KindBoolean, str: "true"},
	// SelString.binaryOps NOT_EQUAL: by value
	{src: "s = 'ab'; t = 'a' + 'b'; s != t", kind: KindBoolean, str: "false"},
	// SelString.binaryOps: checkTypeMatch on == with a non-null rhs
	{src: "'1' == 1", want: selWantError},
	// SelLong.binaryOps: a string rhs compares String.valueOf(lhs)
	{src: "1 == '1'", kind: KindBoolean, str: "true"},
	// SelDouble.binaryOps: a string rhs
	{src: "1.5 == '1.5'", kind: KindBoolean, str: "true"},
	// SelDouble.binaryOps: String.valueOf(1.0) is 1.0
	{src: "1.0 == '1'", kind: KindBoolean, str: "false"},
	// SelString.binaryOps: no LT
	{src: "'a' < 'b'", want: selWantError},
	// SelString.binaryOps: no SUB
	{src: "'a' - 'b'", want: selWantError},
	// SelString.binaryOps EQUAL NULL
	{src: "'a' == null", kind: KindBoolean, str: "false"},
	// SelType.NULL.binaryOps EQUAL
	{src: "null == 'a'", kind: KindBoolean, str: "false"},
	// SelType.NULL.binaryOps NOT_EQUAL
	{src: "null != 'a'", kind: KindBoolean, str: "true"},
	// SelTypes.newSelTypeObj: STRING is SelString.of(null)
	{src: "String s; return s;", kind: KindString, str: "null"},
	// SelString.binaryOps EQUAL: Objects.equals(null, null)
	{src: "String s; s == null", kind: KindBoolean, str: "true"},
	// SelString.binaryOps ADD
	{src: "String s; s + 'x'", kind: KindString, str: "nullx"},
	// sel.jjt LocalVariableDeclaration: two declarators
	{src: "String a = 'p', b; a + b", kind: KindString, str: "pnull"},
	// SelString.assignOps ADD_ASSIGN
	{src: "s = 'a'; s += 1; s += true; s", kind: KindString, str: "a1true"},
	// SelStringTest.testInvalidAssignOp
	{src: "s = 'a'; s -= 'a';", want: selWantError},
	// SelStringTest.testInvalidAssignOpType
	{src: "s = 'a'; s = 1;", want: selWantError},
	// SelString length0: String.length counts UTF-16 units
	{src: "'héllo'.length()", kind: KindLong, str: "5"},

	// ---- null and boolean
	// expression.md literals
	{src: "null;", kind: KindNull, str: "null"},
	// SelType.NULL.binaryOps EQUAL
	{src: "null == null", kind: KindBoolean, str: "true"},
	// SelType.NULL.binaryOps NOT_EQUAL
	{src: "null != null", kind: KindBoolean, str: "false"},
	// SelType.NULL.binaryOps LT is false
	{src: "null < 1", kind: KindBoolean, str: "false"},
	// SelType.NULL.binaryOps GT is false
	{src: "null > 1", kind: KindBoolean, str: "false"},
	// SelType.NULL.binaryOps: no LTE
	{src: "null <= 1", want: selWantError},
	// SelType.NULL.binaryOps ADD
	{src: "null + 1", kind: KindString, str: "null1"},
	// SelType.NULL.binaryOps ADD
	{src: "null + null", kind: KindString, str: "nullnull"},
	// SelType.NULL.binaryOps: no SUB
	{src: "null - 1", want: selWantError},
	// SelVisitorState.get: an unknown name is NULL
	{src: "undefinedVar + 1", kind: KindString, str: "null1"},
	// SelVisitorState.get: an unknown name is NULL
	{src: "x == null", kind: KindBoolean, str: "true"},
	// SelType.NULL.binaryOps EQUAL
	{src: "null == 0", kind: KindBoolean, str: "false"},
	// SelType.NULL.binaryOps: no NOT
	{src: "!null", want: selWantError},
	// SelType.NULL.binaryOps: no MINUS
	{src: "-null", want: selWantError},
	// SelVisitorState.createIfMissing: NULL has no empty object
	{src: "x = null;", want: selWantError},
	// SelVisitorState.createIfMissing: NULL has no empty object
	{src: "x = undefinedVar;", want: selWantError},
	// expression.md literals
	{src: "true;", kind: KindBoolean, str: "true"},
	// SelBooleanTest.testBinaryOps
	{src: "true == false", kind: KindBoolean, str: "false"},
	// SelBooleanTest.testBinaryOps
	{src: "true != false", kind: KindBoolean, str: "true"},
	// SelBoolean.binaryOps: checkTypeMatch
	{src: "true && 1", want: selWantError},
	// SelBooleanTest.testBinaryOps (EQUAL NULL)
	{src: "true == null", kind: KindBoolean, str: "false"},
	// SelBooleanTest.testBinaryOps (NOT_EQUAL NULL)
	{src: "true != null", kind: KindBoolean, str: "true"},
	// SelBoolean.binaryOps NOT
	{src: "!!true", kind: KindBoolean, str: "true"},
	// SelBooleanTest.testInvalidBinaryOp
	{src: "true + true", want: selWantError},
	// SelBooleanTest.testInvalidBinaryOpRhs
	{src: "true + null", want: selWantError},
	// SelBoolean.binaryOps: no MINUS
	{src: "-true", want: selWantError},
	// SelLong.binaryOps: no NOT
	{src: "!1", want: selWantError},
	// SelString.binaryOps: no MINUS
	{src: "-'a'", want: selWantError},
	// SelParserEvaluationVisitor.processConditionBlock: (SelBoolean) cast
	{src: "if (1) 2;", want: selWantError},
	// SelParserEvaluationVisitor.processLoopBlock: (SelBoolean) cast
	{src: "while (1) {}", want: selWantError},
	// SelBoolean.assignOps: only ASSIGN
	{src: "b = true; b += true;", want: selWantError},
	// SelTypes.newSelTypeObj: BOOLEAN is false
	{src: "boolean b; b", kind: KindBoolean, str: "false"},

	// ---- declarations and assignment
	// SelParserEvaluationVisitor.visit(ASTVariableDeclarator): no initializer is the empty object
	{src: "int x = 1, y; y", kind: KindLong, str: "0"},
	// sel.jjt LocalVariableDeclaration
	{src: "int x = 1, y = 2; x + y", kind: KindLong, str: "3"},
	// SelVisitorState.put: a declaration replaces
	{src: "int x = 1; int x = 2; x", kind: KindLong, str: "2"},
	// SelParserEvaluationVisitor.visit(ASTVariableDeclarator): checkTypeMatch
	{src: "int x = 'a';", want: selWantError},
	// SelParserEvaluationVisitor.visit(ASTVariableDeclarator): checkTypeMatch
	{src: "String s = 1;", want: selWantError},
	// SelParserEvaluationVisitor.visit(ASTVariableDeclarator): checkTypeMatch
	{src: "boolean b = 1;", want: selWantError},
	// SelParserEvaluationVisitor.visit(ASTVariableDeclarator): LONG is not DOUBLE
	{src: "double d = 1;", want: selWantError},
	// SelParserEvaluationVisitor.visit(ASTVariableDeclarator): checkTypeMatch
	{src: "long l = 1.0;", want: selWantError},
	// SelParserEvaluationVisitor.visit(ASTVariableDeclarator): checkTypeMatch
	{src: "Map m = 'x';", want: selWantError},
	// SelTypes.newSelTypeObj: DOUBLE is 0.0
	{src: "double d; d", kind: KindDouble, str: "0.0"},
	// SelTypes.newSelTypeObj: an empty array
	{src: "long[] a; a.length", kind: KindLong, str: "0"},
	// SelLong.assignOps: checkTypeMatch
	{src: "x = 1; x = 'a';", want: selWantError},
	// SelLong.assignOps: checkTypeMatch
	{src: "x = 1; x = 2.5;", want: selWantError},
	// SelVisitorState.createIfMissing: an assignment copies a long
	{src: "x = 1; y = x; y += 1; x", kind: KindLong, str: "1"},
	// SelType.NULL.assignOps: an unknown name
	{src: "x += 1;", want: selWantError},
	// SelDouble.assignOps ADD_ASSIGN
	{src: "d = 1.5; d += 2.5; d", kind: KindDouble, str: "4.0"},
	// SelDouble.assignOps: checkTypeMatch
	{src: "d = 1.5; d += 1;", want: selWantError},
	// SelLong.assignOps: checkTypeMatch
	{src: "x = 1; x += 1.5;", want: selWantError},
	// SelLongTest.testAssignOps
	{src: "x = 17; x -= 2; x *= 3; x /= 4; x %= 4; x", kind: KindLong, str: "3"},
	// SelDoubleTest.testAssignOps
	{src: "d = 10.0; d /= 4.0; d", kind: KindDouble, str: "2.5"},
	// SelDoubleTest.testAssignOps
	{src: "d = 7.5; d %= 2.0; d", kind: KindDouble, str: "1.5"},
	// SelDoubleTest.testAssignOps
	{src: "d = 2.0; d *= 1.5; d -= 0.5; d", kind: KindDouble, str: "2.5"},
	// data-type.md String
	{src: "String s = \"hello world\"; s", kind: KindString, str: "hello world"},
	// data-type.md String
	{src: "s = \"hello \" + \"world\";", kind: KindString, str: "hello world"},
	// data-type.md Long
	{src: "long l = 123; l", kind: KindLong, str: "123"},
	// data-type.md Long
	{src: "Long l = 123; l", kind: KindLong, str: "123"},
	// data-type.md Long
	{src: "l = 12 - 3;", kind: KindLong, str: "9"},
	// data-type.md Double
	{src: "double d = 12.3; d", kind: KindDouble, str: "12.3"},
	// data-type.md Double
	{src: "Double d = 12.3; d", kind: KindDouble, str: "12.3"},
	// data-type.md Double
	{src: "d = 1 + 2.3;", kind: KindDouble, str: "3.3"},
	// data-type.md Boolean
	{src: "boolean b = true; b", kind: KindBoolean, str: "true"},
	// data-type.md Boolean
	{src: "Boolean b = false; b", kind: KindBoolean, str: "false"},
	// data-type.md Boolean
	{src: "b = 2 > 1;", kind: KindBoolean, str: "true"},
	// data-type.md int
	{src: "int l = 123; l", kind: KindLong, str: "123"},
	// data-type.md Integer
	{src: "Integer l = 123; l", kind: KindLong, str: "123"},
	// data-type.md float
	{src: "float d = 12.3f; d", kind: KindDouble, str: "12.3"},
	// data-type.md Float
	{src: "Float d = 12.3f; d", kind: KindDouble, str: "12.3"},
	// data-type.md float
	{src: "d = 1.0f + 2.3f;", kind: KindDouble, str: "3.3"},
	// SelVisitorState.get: an input is copied into the expression
	{src: "x += 1; x", vars: map[string]Value{"x": Long(5)}, kind: KindLong, str: "6"},
	// data-type.md Notes: inputs by bare name
	{src: "x * 2", vars: map[string]Value{"x": Long(5)}, kind: KindLong, str: "10"},
	// SelString.assignOps: an input keeps its type
	{src: "s = 1;", vars: map[string]Value{"s": String("a")}, want: selWantError},
	// data-type.md Notes: inputs by bare name
	{src: "foo + 1", vars: map[string]Value{"foo": String("bar")}, kind: KindString, str: "bar1"},
	// SelDouble input
	{src: "d + 1", vars: map[string]Value{"d": Double(1.25)}, kind: KindDouble, str: "2.25"},
	// SelBoolean input
	{src: "!b", vars: map[string]Value{"b": Boolean(true)}, kind: KindBoolean, str: "false"},
	// SelTypeUtil.fromStringToSelType: no class var
	{src: "var x = 1;", want: selWantUnsupported},
	// SelTypeUtil.fromStringToSelType: no class Object
	{src: "Object o = 1;", want: selWantUnsupported},

	// ---- arrays
	// sel.jjt AllocationExpression
	{src: "new long[]{1,2};", kind: KindLongArray, str: "[1, 2]"},
	// ExprEvaluator.sanitize: no ";" is added after a closing brace
	{src: "new long[]{1,2}", want: selWantSyntax},
	// SelArray: a new String array holds nulls
	{src: "new String[3]", kind: KindStringArray, str: "[null, null, null]"},
	// SelArray: a new boolean array holds false
	{src: "new boolean[2]", kind: KindBooleanArray, str: "[false, false]"},
	// SelArray: a new double array holds 0.0
	{src: "new double[2]", kind: KindDoubleArray, str: "[0.0, 0.0]"},
	// SelTypesTest.testCreateSelArray
	{src: "new int[3]", kind: KindLongArray, str: "[0, 0, 0]"},
	// sel.jjt Assignment with [ Expression ]
	{src: "int[] a = new int[]{1,2,3}; a[0] = 10; a", kind: KindLongArray, str: "[10, 2, 3]"},
	// SelArray.field length
	{src: "int[] a = new int[]{1,2,3}; a.length", kind: KindLong, str: "3"},
	// SelArray: no methods
	{src: "int[] a = new int[]{1,2,3}; a.length()", want: selWantUnsupported},
	// SelArrayTest.invalidField
	{src: "int[] a = new int[]{1,2,3}; a.size", want: selWantUnsupported},
	// SelArrayTest.testInvalidGet
	{src: "int[] a = new int[]{1,2,3}; a[3]", want: selWantError},
	// SelArray.get: ArrayIndexOutOfBounds
	{src: "int[] a = new int[]{1,2,3}; a[-1]", want: selWantError},
	// SelParserEvaluationVisitor.visit(ASTArrayIdx): a string index is for params
	{src: "int[] a = new int[]{1,2,3}; a['x']", want: selWantError},
	// SelParserEvaluationVisitor.visit(ASTAssignment) on an element
	{src: "a = new long[]{1,2}; a[1] += 5; a[1]", kind: KindLong, str: "7"},
	// SelArrayTest.testInvalidSet
	{src: "a = new long[]{1}; a[0] = 'x';", want: selWantError},
	// SelArrayTest.testGet
	{src: "String[] s = new String[]{'a', 'b'}; s[1]", kind: KindString, str: "b"},
	// SelArray.set: checkTypeMatch
	{src: "new long[]{1, 'a'};", want: selWantError},
	// data-type.md Double Array
	{src: "new double[]{1.5, 2.0};", kind: KindDoubleArray, str: "[1.5, 2.0]"},
	// SelArray.set: a long is not a double
	{src: "new double[]{1, 2};", want: selWantError},
	// SelArrayTest.testInvalidAssignType
	{src: "String[] a = new int[]{1};", want: selWantError},
	// SelArray.assignOps: shares the elements
	{src: "a = new long[]{1,2}; b = a; b[0] = 9; a[0]", kind: KindLong, str: "9"},
	// SelParserEvaluationVisitor.visit(ASTAssignment): (SelArray) cast of null
	{src: "b[0] = 1;", want: selWantError},
	// sel.jjt ArrayInitializer: a trailing comma
	{src: "new int[]{1,2,};", kind: KindLongArray, str: "[1, 2]"},
	// sel.jjt ArrayInitializer: empty
	{src: "new int[]{};", kind: KindLongArray, str: "[]"},
	// SelMiscFuncTest.testCallArraysAsList
	{src: "Arrays.asList(new long[]{1})", kind: KindLongArray, str: "[1]"},
	// SelParserEvaluationVisitor.visit(ASTArrayIdx): Invalid index type
	{src: "a = new long[]{1}; a[1.0]", want: selWantError},
	// sel.jjt ArrayInitializer of expressions
	{src: "x = 1; a = new long[]{x, x + 1}; a", kind: KindLongArray, str: "[1, 2]"},
	// SelParserEvaluationVisitor.visit(ASTArrayDims): NegativeArraySize
	{src: "new int[-1]", want: selWantError},
	// SelArray: no binaryOps
	{src: "a = new int[]{1}; a == a", want: selWantError},
	// SelTypes.newSelTypeObjArray: no MAP array
	{src: "new Map[2]", want: selWantError},
	// sel.jjt PrimaryExpression: a suffix after an allocation
	{src: "new long[]{4, 5, 6}[2]", kind: KindLong, str: "6"},
	// sel.jjt Type: one dimension only
	{src: "int[][] a;", want: selWantSyntax},
	// sel.jjt: the second [2] indexes the new array
	{src: "new int[2][2]", want: selWantError},
	// sel.jjt: the second [1] indexes the new array
	{src: "new int[3][1]", kind: KindLong, str: "0"},
	// sel.jjt ArrayInitializer: no nested initializer
	{src: "new int[]{{1},{2}}", want: selWantSyntax},
	// data-type.md String Array
	{src: "String[] sa = new String[]{'hello', 'world'}; sa", kind: KindStringArray, str: "[hello, world]"},
	// data-type.md String Array
	{src: "sa = 'hello world'.split(' ');", kind: KindStringArray, str: "[hello, world]"},
	// data-type.md Long Array
	{src: "long[] l = new long[]{1, 2, 3}; l", kind: KindLongArray, str: "[1, 2, 3]"},
	// data-type.md Long Array
	{src: "Long[] l = new Long[]{1, 2, 3}; l", kind: KindLongArray, str: "[1, 2, 3]"},
	// data-type.md Long Array
	{src: "l = new Long[]{1, 2, 3};", kind: KindLongArray, str: "[1, 2, 3]"},
	// data-type.md Double Array
	{src: "double[] d = new double[]{1.2, 3.0}; d", kind: KindDoubleArray, str: "[1.2, 3.0]"},
	// data-type.md Double Array
	{src: "Double[] d = new double[]{1.2, 3.0}; d", kind: KindDoubleArray, str: "[1.2, 3.0]"},
	// data-type.md Double Array
	{src: "d = new Double[]{1.2, 3.0};", kind: KindDoubleArray, str: "[1.2, 3.0]"},
	// data-type.md Boolean Array
	{src: "boolean[] b = new boolean[]{true, false}; b", kind: KindBooleanArray, str: "[true, false]"},
	// data-type.md Boolean Array
	{src: "b = new Boolean[]{2 > 1, 2 < 1};", kind: KindBooleanArray, str: "[true, false]"},
	// data-type.md int array
	{src: "int[] l = new int[]{1, 2, 3}; l", kind: KindLongArray, str: "[1, 2, 3]"},
	// data-type.md Integer array
	{src: "Integer[] l = new Integer[]{1, 2, 3}; l", kind: KindLongArray, str: "[1, 2, 3]"},
	// data-type.md float array
	{src: "float[] d = new float[]{1.2f, 3.0f}; d", kind: KindDoubleArray, str: "[1.2, 3.0]"},
	// data-type.md Float array
	{src: "Float[] d = new Float[]{1.2f, 3.0f}; d", kind: KindDoubleArray, str: "[1.2, 3.0]"},
	// expression.md array
	{src: "int[] arr = new int[]{1,2,3}; arr[0];", kind: KindLong, str: "1"},
	// SelJailbreakTest.testExpressionCannotMutateCallerArrayParam (the copy changes)
	{src: "xs[0] = 99; xs", vars: map[string]Value{"xs": &Array{Of: KindLongArray, Items: []Value{Long(1), Long(2), Long(3)}}}, kind: KindLongArray, str: "[99, 2, 3]"},
	// SelArray input
	{src: "xs.length", vars: map[string]Value{"xs": &Array{Of: KindStringArray, Items: []Value{String("a"), String("b")}}}, kind: KindLong, str: "2"},

	// ---- maps
	// SelParserEvaluationVisitorTest.testMapExpressions
	{src: "x=new Map(); x.put('bar', 'baz'); x.put('foo', 123); return x;", kind: KindMap, str: "{bar=baz, foo=123}"},
	// SelParserEvaluationVisitorTest.testMapExpressions
	{src: "x=new Map(); x.put('foo', 123); x.put('bar', 'baz'); return x.get('bar');", kind: KindString, str: "baz"},
	// SelParserEvaluationVisitorTest.testMapExpressions
	{src: "x=new Map(); x.put('bar', new Map()); x.put('foo', 123); x.get('bar').put('bat', 123); return x;", kind: KindMap, str: "{bar={bat=123}, foo=123}"},
	// SelParserEvaluationVisitorTest.testMapExpressions: put keeps the variable's object
	{src: "x=new Map(); y=123; x.put('foo', y); y=111; return x;", kind: KindMap, str: "{foo=111}"},
	// SelParserEvaluationVisitorTest.testMapExpressions
	{src: "x=new Map(); x.put('foo', 123); x.put('bar', new Map()); x.get('bar').put('bat', 123); return x.get('bar').get('bat');", kind: KindLong, str: "123"},
	// SelParserEvaluationVisitorTest.testMapExpressions
	{src: "x=new Map(); x.put('bar', new long[]{1,2,3}); x.put('foo', 123); return x;", kind: KindMap, str: "{bar=[1, 2, 3], foo=123}"},
	// SelParserEvaluationVisitorTest.testMapExpressions
	{src: "x=new Map(); x.put('foo', 123); x.put('bar', new long[]{1,2,3}); return x.get('bar')[1];", kind: KindLong, str: "2"},
	// SelParserEvaluationVisitorTest.testMapExpressions
	{src: "x=new Map(); x.put('bar', new Map()); x.put('foo', 123); x.get('bar').put('bat', new Map()); x.get('bar').get('bat').put('bat', new boolean[]{true, false}); return x;", kind: KindMap, str: "{bar={bat={bat=[true, false]}}, foo=123}"},
	// SelParserEvaluationVisitorTest.testMapExpressions
	{src: "x=new Map(); x.put('foo', 123); x.put('bar', new Map()); x.get('bar').put('bat', new Map()); x.get('bar').get('bat').put('bat', new boolean[]{true, false}); return x.get('bar').get('bat').get('bat')[0];", kind: KindBoolean, str: "true"},
	// SelMapTest.testCallPut: put returns the previous value
	{src: "m = new HashMap(); m.put('a', 1); m.put('a', 2)", kind: KindLong, str: "1"},
	// SelMapTest.testCallPut: put of a new key returns NULL
	{src: "m = new Map(); m.put('a', 1)", kind: KindNull, str: "null"},
	// SelMapTest.testCallContainsKey
	{src: "m = new Map(); m.put('num', 123); m.containsKey('num')", kind: KindBoolean, str: "true"},
	// SelMapTest.testCallContainsKey
	{src: "m = new Map(); m.put('num', 123); m.containsKey('not-existing')", kind: KindBoolean, str: "false"},
	// SelMapTest.testCallSize
	{src: "m = new Map(); m.put('foo', 'bar'); m.put('num', 123); m.size()", kind: KindLong, str: "2"},
	// SelMapTest.testCallGetOrDefault
	{src: "m = new Map(); m.put('num', 123); m.getOrDefault('num', 1)", kind: KindLong, str: "123"},
	// SelMapTest.testCallGetOrDefault
	{src: "m = new Map(); m.put('num', 123); m.getOrDefault('fuu', 1)", kind: KindLong, str: "1"},
	// SelMapTest.testCallGet
	{src: "m = new Map(); m.put('num', 123); m.get('fuu')", kind: KindNull, str: "null"},
	// SelMapTest.testCallGetInvalidTypeKey
	{src: "m = new Map(); m.get(1)", want: selWantError},
	// SelMapTest.testCallGetNullKey
	{src: "m = new Map(); m.get(null)", want: selWantError},
	// SelMapTest.testCallGetInvalidArgs
	{src: "m = new Map(); m.get()", want: selWantUnsupported},
	// SelMapTest.testCallPutInvalidTypeKey
	{src: "m = new Map(); m.put(1, 1)", want: selWantError},
	// SelMapTest.testCallPutInvalidArgs
	{src: "m = new Map(); m.put('a')", want: selWantUnsupported},
	// SelMap.call: no remove
	{src: "m = new Map(); m.put('a', 1); m.remove('a')", want: selWantUnsupported},
	// SelMap.call: no keySet
	{src: "m = new Map(); m.keySet()", want: selWantUnsupported},
	// SelMap.call: no isEmpty
	{src: "m = new Map(); m.isEmpty()", want: selWantUnsupported},
	// SelMapTest.testAssignOp: assignment shares the map
	{src: "a = new Map(); b = a; b.put('k', 1); a.size()", kind: KindLong, str: "1"},
	// SelTypeUtil: LinkedHashMap is MAP
	{src: "m = new LinkedHashMap(); m.put('a', 1); m.size()", kind: KindLong, str: "1"},
	// SelMap.create: no arguments only
	{src: "new Map(1)", want: selWantError},
	// SelMapTest.testCallPut: a null value
	{src: "m = new Map(); m.put('foo', true); m.put('foo', null); m.get('foo')", kind: KindNull, str: "null"},
	// SelMap.call containsKey
	{src: "m = new Map(); m.put('a', null); m.containsKey('a')", kind: KindBoolean, str: "true"},
	// SelMap.call size of an empty Map declaration
	{src: "Map m; m.size()", kind: KindLong, str: "0"},
	// SelMap.call containsKey of an empty Map declaration
	{src: "Map m; m.containsKey('a')", kind: KindBoolean, str: "false"},
	// SelMap.call get returns the value itself
	{src: "m = new Map(); m.put('k', 'v'); m.get('k').length()", kind: KindLong, str: "1"},
	// SelMapTest.testInvalidAssignOp
	{src: "m = new Map(); m += 1;", want: selWantError},
	// data-type.md Map
	{src: "Map m = new Map(); m.put('foo', 'bar'); m", kind: KindMap, str: "{foo=bar}"},
	// data-type.md Map
	{src: "Map m = new HashMap(); m.size()", kind: KindLong, str: "0"},
	// expression.md map (visit(ASTArrayIdx) casts a string-indexed value to SelParams)
	{src: "Map m = new Map(); m['foo'];", want: selWantError},
	// SelMapTest: a map input
	{src: "cfg.get('k')", vars: map[string]Value{"cfg": selCaseMap("k", String("original"))}, kind: KindString, str: "original"},
	// SelJailbreakTest.testExpressionCannotMutateCallerMapParam (the copy changes)
	{src: "cfg.put('k', 'tampered'); cfg.get('k')", vars: map[string]Value{"cfg": selCaseMap("k", String("original"))}, kind: KindString, str: "tampered"},

	// ---- String, Long, Double, Boolean, Math, UUID, System methods
	// SelStringTest.testSupportedNoArgCalls
	{src: "'FooBar '.toUpperCase()", kind: KindString, str: "FOOBAR "},
	// SelStringTest.testSupportedNoArgCalls
	{src: "'FooBar '.toLowerCase()", kind: KindString, str: "foobar "},
	// SelStringTest.testSupportedNoArgCalls
	{src: "'FooBar '.length()", kind: KindLong, str: "7"},
	// SelStringTest.testSupportedNoArgCalls
	{src: "'FooBar '.isEmpty()", kind: KindBoolean, str: "false"},
	// SelStringTest.testSupportedNoArgCalls
	{src: "'FooBar '.trim()", kind: KindString, str: "FooBar"},
	// SelStringTest.testSupportedOneArgCalls
	{src: "'FooBar '.lastIndexOf('oBa')", kind: KindLong, str: "2"},
	// SelStringTest.testSupportedOneArgCalls
	{src: "'FooBar '.equals('oBa')", kind: KindBoolean, str: "false"},
	// SelStringTest.testSupportedOneArgCalls
	{src: "'FooBar '.compareTo('oBa')", kind: KindLong, str: "-41"},
	// SelStringTest.testSupportedOneArgCalls
	{src: "'FooBar '.startsWith('oBa')", kind: KindBoolean, str: "false"},
	// SelStringTest.testSupportedOneArgCalls
	{src: "'FooBar '.endsWith('oBa')", kind: KindBoolean, str: "false"},
	// SelStringTest.testSupportedOneArgCalls
	{src: "'FooBar '.contains('oBa')", kind: KindBoolean, str: "true"},
	// SelStringTest.testSupportedCallReplaceAll
	{src: "'a-B- c'.replaceAll(' b', '-B-')", kind: KindString, str: "a-B- c"},
	// SelStringTest.testSupportedCallReplace
	{src: "'a-B- c'.replace(' b', '-B-')", kind: KindString, str: "a-B- c"},
	// SelString replaceAll2: a regex
	{src: "'a.b.c'.replaceAll('\\\\.', '-')", kind: KindString, str: "a-b-c"},
	// SelString replace2: literal
	{src: "'a.b.c'.replace('.', '-')", kind: KindString, str: "a-b-c"},
	// SelStringTest.testSupportedStaticCalls
	{src: "String.valueOf('abc')", kind: KindString, str: "abc"},
	// SelStringTest.testSupportedStaticCalls
	{src: "String.valueOf(123)", kind: KindString, str: "123"},
	// SelStringTest.testSupportedStaticCalls
	{src: "String.valueOf(true)", kind: KindString, str: "true"},
	// SelStringTest.testSupportedStaticCalls
	{src: "String.valueOf(1.1)", kind: KindString, str: "1.1"},
	// SelStringTest.testSupportedStaticCalls
	{src: "String.valueOf(9223372036854775807)", kind: KindString, str: "9223372036854775807"},
	// expression.md calling methods
	{src: "String.valueOf(1);", kind: KindString, str: "1"},
	// SelStringTest.testSupportedCallSplits
	{src: "'a b c'.split('\\\\ ')", kind: KindStringArray, str: "[a, b, c]"},
	// SelStringTest.testSupportedCallSplits
	{src: "'a b c'.split('\\\\ ').length", kind: KindLong, str: "3"},
	// SelStringTest.testSupportedCallSplits
	{src: "'a b c'.split('\\\\ ', 2)", kind: KindStringArray, str: "[a, b c]"},
	// SelString split1: String.split drops trailing empty strings
	{src: "'a,b,,'.split(',')", kind: KindStringArray, str: "[a, b]"},
	// SelString split1: String.split keeps a leading empty string
	{src: "',a'.split(',')", kind: KindStringArray, str: "[, a]"},
	// SelString split1: a regex
	{src: "'a1b22c'.split('[0-9]+')", kind: KindStringArray, str: "[a, b, c]"},
	// SelStringTest.testSupportedCallSubstrings
	{src: "'a b c'.substring(3)", kind: KindString, str: " c"},
	// SelStringTest.testSupportedCallSubstrings
	{src: "'a b c'.substring(1, 3)", kind: KindString, str: " b"},
	// SelStringTest.testInvalidArgs
	{src: "'a b c'.substring(4, 3)", want: selWantError},
	// SelStringTest.testInvalidNotImplementedCall
	{src: "'a b c'.splits('\\\\ ')", want: selWantUnsupported},
	// SelStringTest.testInvalidWrongArgsCall
	{src: "'a b c'.isEmpty('\\\\ ')", want: selWantUnsupported},
	// SelString: no indexOf
	{src: "'abc'.indexOf('b')", want: selWantUnsupported},
	// SelString: no charAt
	{src: "'abc'.charAt(0)", want: selWantUnsupported},
	// SelString isEmpty0
	{src: "''.isEmpty()", kind: KindBoolean, str: "true"},
	// SelString equals1: Object argument
	{src: "'abc'.equals(1)", kind: KindBoolean, str: "false"},
	// SelString equals1
	{src: "'abc'.equals('abc')", kind: KindBoolean, str: "true"},
	// SelLong: no fields
	{src: "Long.MAX_VALUE", want: selWantUnsupported},
	// SelJavaMath: no fields
	{src: "Math.PI", want: selWantUnsupported},
	// SelStringTest.testFormat
	{src: "String.format('%s-%s', 'ab', 'c')", kind: KindString, str: "ab-c"},
	// SelStringTest.testFormat
	{src: "String.format('%s-%d', 'ab', 123)", kind: KindString, str: "ab-123"},
	// SelString.varArgsFormat: String.format
	{src: "String.format('%05d', 42)", kind: KindString, str: "00042"},
	// SelString.varArgsFormat: String.format
	{src: "String.format('%.2f', 3.14159)", kind: KindString, str: "3.14"},
	// SelStringTest.testJoin
	{src: "String.join(',', 'ab', 'c')", kind: KindString, str: "ab,c"},
	// SelStringTest.testJoin
	{src: "String.join(',')", kind: KindString, str: ""},
	// SelStringTest.testJoin
	{src: "'abc'.join(',', 'ab', 'c')", kind: KindString, str: "ab,c"},
	// SelStringTest.testJoin
	{src: "String.join(',', new String[]{'z', 'ab', 'c'})", kind: KindString, str: "z,ab,c"},
	// SelStringTest.testEscape
	{src: "String.escape('{\"foo\"}')", kind: KindString, str: "{\\\"foo\\\"}"},
	// SelStringTest.testEscape
	{src: "'{\"foo\"}'.escape()", kind: KindString, str: "{\\\"foo\\\"}"},
	// SelStringTest.testEscape
	{src: "'{\"foo\"}'.escape('{\"bar\"}')", kind: KindString, str: "{\\\"bar\\\"}"},
	// SelStringTest.testInvalidEscapeArgLengthCall
	{src: "'{\"foo\"}'.escape('a', 'b')", want: selWantError},
	// SelStringTest.testInvalidEscapeArgTypeCall
	{src: "'{\"foo\"}'.escape(123)", want: selWantError},
	// SelString.escapeJava
	{src: "'a\\tb\\n'.escape()", kind: KindString, str: "a\\tb\\n"},
	// SelStringTest.testCreateValid
	{src: "new String()", kind: KindString, str: ""},
	// SelStringTest.testCreateValid
	{src: "new String('foo')", kind: KindString, str: "foo"},
	// expression.md creating a new object
	{src: "new String(\"hello\");", kind: KindString, str: "hello"},
	// SelString.create: a long
	{src: "new String(12)", kind: KindString, str: "12"},
	// SelStringTest.testCreateInValid
	{src: "new String('foo', 'bar')", want: selWantError},
	// SelStringTest.testCreateInValidType
	{src: "new String(123.2)", want: selWantError},
	// SelLongTest.testCalls
	{src: "x = 1; x.toString()", kind: KindString, str: "1"},
	// SelLongTest.testCalls
	{src: "Long.toString(12)", kind: KindString, str: "12"},
	// SelLongTest.testCalls
	{src: "Long.valueOf(123)", kind: KindLong, str: "123"},
	// SelLongTest.testCalls
	{src: "Long.valueOf('123')", kind: KindLong, str: "123"},
	// SelLongTest.testCalls
	{src: "Long.parseLong('123')", kind: KindLong, str: "123"},
	// SelLongTest.testCalls
	{src: "x = 1; x.intValue()", kind: KindLong, str: "1"},
	// SelLongTest.testInvalidCall
	{src: "Long.valueOf('foo')", want: selWantError},
	// SelLongTest.testNotSupportedCall
	{src: "Long.parse(1)", want: selWantUnsupported},
	// SelTypeUtil: Integer is LONG (example.md Example 3)
	{src: "Integer.valueOf('7') + 1", kind: KindLong, str: "8"},
	// SelLong.call: no parseInt
	{src: "Integer.parseInt('7')", want: selWantUnsupported},
	// SelLong.create
	{src: "new Long('12')", kind: KindLong, str: "12"},
	// SelLong.create
	{src: "new Long(1.5)", want: selWantError},
	// SelDoubleTest.testCalls
	{src: "d = 1.1; d.toString()", kind: KindString, str: "1.1"},
	// SelDoubleTest.testCalls
	{src: "Double.toString(2.2)", kind: KindString, str: "2.2"},
	// SelDoubleTest.testCalls
	{src: "Double.valueOf(12.3)", kind: KindDouble, str: "12.3"},
	// SelDoubleTest.testCalls
	{src: "Double.valueOf('12.3')", kind: KindDouble, str: "12.3"},
	// SelDouble.call parseDouble
	{src: "Double.parseDouble('2')", kind: KindDouble, str: "2.0"},
	// SelDoubleTest.testCalls
	{src: "d = 3.9; d.intValue()", kind: KindLong, str: "3"},
	// SelDoubleTest.testCalls
	{src: "d = -3.9; d.longValue()", kind: KindLong, str: "-3"},
	// SelDoubleTest.testInvalidCall
	{src: "Double.valueOf('foo')", want: selWantError},
	// SelDoubleTest.testNotSupportedCall
	{src: "Double.parse(1)", want: selWantUnsupported},
	// SelTypeUtil: Float is DOUBLE
	{src: "Float.valueOf('1.5')", kind: KindDouble, str: "1.5"},
	// SelDouble.create
	{src: "new Double('1.5')", kind: KindDouble, str: "1.5"},
	// SelDouble.create: a long is refused
	{src: "new Double(1)", want: selWantError},
	// SelBoolean.create: Boolean.parseBoolean
	{src: "new Boolean('TRUE')", kind: KindBoolean, str: "true"},
	// SelBoolean.create: Boolean.parseBoolean
	{src: "new Boolean('yes')", kind: KindBoolean, str: "false"},
	// SelBoolean.create
	{src: "new Boolean(true)", kind: KindBoolean, str: "true"},
	// SelBoolean: no methods
	{src: "Boolean.valueOf('true')", want: selWantUnsupported},
	// SelJavaMathTest.call
	{src: "Math.min(1, 2)", kind: KindLong, str: "1"},
	// SelJavaMathTest.call
	{src: "Math.max(1, 2)", kind: KindLong, str: "2"},
	// SelJavaMathTest.call
	{src: "Math.pow(3, 2)", kind: KindDouble, str: "9.0"},
	// SelJavaMath.call pow
	{src: "Math.pow(2.0, 0.5)", kind: KindDouble, str: "1.4142135623730951"},
	// class-function.md Math
	{src: "return Math.pow(2, 3);", kind: KindDouble, str: "8.0"},
	// class-function.md Math
	{src: "return Math.random();", kind: KindDouble, re: `^0\.[0-9]+(E-[0-9]+)?$`},
	// SelJavaMathTest.testInvalidCallArg
	{src: "Math.random(null)", want: selWantUnsupported},
	// SelJavaMathTest.testInvalidCallArgType
	{src: "Math.min(null, null)", want: selWantError},
	// SelJavaMath.call min: (SelLong) cast
	{src: "Math.min(1.5, 2)", want: selWantError},
	// SelJavaMathTest.testInvalidCallMethod
	{src: "Math.invalid()", want: selWantUnsupported},
	// class-function.md UUID (new UUID(rnd.nextLong(), rnd.nextLong()))
	{src: "return UUID.randomUUID().toString();", kind: KindString, re: `^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`},
	// SelJavaUUIDTest.testCalls (SelJavaUUID has no toString: the kind only)
	{src: "UUID.randomUUID()", kind: KindUUID, kindOnly: true},
	// SelJavaUUIDTest.testCalls
	{src: "UUID.randomUUID().toString().length()", kind: KindLong, str: "36"},
	// SelJavaUUIDTest.testInvalidCallArg
	{src: "UUID.randomUUID(null)", want: selWantUnsupported},
	// SelJavaUUIDTest.testInvalidCallMethod
	{src: "UUID.uuid()", want: selWantUnsupported},
	// SelTypes.call: no UUID constructor
	{src: "new UUID()", want: selWantUnsupported},
	// SelMiscFuncTest.testCallCurrentTimeMillis (the fixed clock)
	{src: "System.currentTimeMillis()", kind: KindLong, str: "1614834367089"},
	// SelMiscFuncTest.testCallCurrentTimeMillisWithWrongArgs
	{src: "System.currentTimeMillis(1)", want: selWantUnsupported},
	// SelMiscFuncTest.testCallOtherMethods
	{src: "System.nonExisting()", want: selWantUnsupported},
	// SelMiscFuncTest.testSundayField
	{src: "DateTimeConstants.SUNDAY", kind: KindLong, str: "7"},
	// SelMiscFuncTest.testInvalidField
	{src: "DateTimeConstants.Tomorrow", want: selWantUnsupported},

	// ---- sandbox
	// SelJailbreakTest.testRejectsFullyQualifiedClassName (a parse error)
	{src: "new java.io.File('x')", want: selWantSyntax},
	// SelJailbreakTest.testRejectsFullyQualifiedClassName
	{src: "new java.io.FileWriter('/tmp/x');", want: selWantSyntax},
	// SelJailbreakTest.testRejectsFullyQualifiedClassName (NULL DO NOT support accessing field: lang)
	{src: "java.lang.Runtime.getRuntime();", want: selWantUnsupported},
	// SelParserEvaluationVisitorTest.testInvalidExpr4
	{src: "java.util.UUID.randomUUID();", want: selWantUnsupported},
	// SelJailbreakTest CAPABILITY_CHAINS
	{src: "Runtime.getRuntime().exec('ls')", want: selWantUnsupported},
	// SelJailbreakTest CAPABILITY_CHAINS
	{src: "Runtime.getRuntime().halt(0);", want: selWantUnsupported},
	// SelJailbreakTest.testRejectsConstructingUnknownClass
	{src: "new ProcessBuilder('sh');", want: selWantUnsupported},
	// SelJailbreakTest CAPABILITY_CHAINS
	{src: "new ProcessBuilder('sh').start();", want: selWantUnsupported},
	// SelJailbreakTest.testImportDoesNotEnableArbitraryClass
	{src: "import java.lang.Runtime; Runtime.getRuntime().exec('id');", want: selWantUnsupported},
	// SelJailbreakTest.testSystemStandInRejectsDangerousMethods
	{src: "System.exit(0)", want: selWantUnsupported},
	// SelJailbreakTest SYSTEM_MATH_ABUSE
	{src: "System.setProperty('a','b');", want: selWantUnsupported},
	// SelJailbreakTest SYSTEM_MATH_ABUSE
	{src: "System.getProperty('user.home');", want: selWantUnsupported},
	// SelJailbreakTest SYSTEM_MATH_ABUSE
	{src: "System.getenv('PATH');", want: selWantUnsupported},
	// SelJailbreakTest SYSTEM_MATH_ABUSE
	{src: "System.gc();", want: selWantUnsupported},
	// SelJailbreakTest SYSTEM_MATH_ABUSE
	{src: "System.out.println('x');", want: selWantUnsupported},
	// SelJailbreakTest SYSTEM_MATH_ABUSE
	{src: "System.loadLibrary('x');", want: selWantUnsupported},
	// SelJailbreakTest.testMathStandInRejectsNonWhitelistedMethods / SYSTEM_MATH_ABUSE
	{src: "Math.sqrt(2.0);", want: selWantUnsupported},
	// SelJailbreakTest.testMathStandInRejectsNonWhitelistedMethods / SYSTEM_MATH_ABUSE
	{src: "Math.abs(-1);", want: selWantUnsupported},
	// SelJailbreakTest.testMathStandInRejectsNonWhitelistedMethods / SYSTEM_MATH_ABUSE
	{src: "Math.floor(1.5);", want: selWantUnsupported},
	// SelJailbreakTest.testMathStandInRejectsNonWhitelistedMethods / SYSTEM_MATH_ABUSE
	{src: "Math.getClass();", want: selWantUnsupported},
	// SelJailbreakTest CAPABILITY_CHAINS (Class is not a SEL class: null)
	{src: "Class.forName('x')", want: selWantUnsupported},
	// SelJailbreakTest CAPABILITY_CHAINS
	{src: "Class.forName('java.lang.Runtime').getMethod('exec');", want: selWantUnsupported},
	// SelJailbreakTest.testRejectsReflection
	{src: "''.getClass()", want: selWantUnsupported},
	// SelJailbreakTest.testRejectsReflection
	{src: "'abc'.getClass();", want: selWantUnsupported},
	// SelJailbreakTest FORBIDDEN_METHODS on RECEIVERS
	{src: "1L.getClass();", want: selWantUnsupported},
	// SelJailbreakTest FORBIDDEN_METHODS on RECEIVERS
	{src: "1L.hashCode();", want: selWantUnsupported},
	// SelJailbreakTest FORBIDDEN_METHODS on RECEIVERS
	{src: "1L.wait();", want: selWantUnsupported},
	// SelJailbreakTest FORBIDDEN_METHODS on RECEIVERS
	{src: "new Map().getClass();", want: selWantUnsupported},
	// SelJailbreakTest FORBIDDEN_METHODS on RECEIVERS
	{src: "new Map().hashCode();", want: selWantUnsupported},
	// SelJailbreakTest FORBIDDEN_METHODS on RECEIVERS
	{src: "new Map().wait();", want: selWantUnsupported},
	// SelJailbreakTest FORBIDDEN_METHODS on RECEIVERS
	{src: "new DateTime(0L).getClass();", want: selWantUnsupported},
	// SelJailbreakTest FORBIDDEN_METHODS on RECEIVERS
	{src: "new DateTime(0L).hashCode();", want: selWantUnsupported},
	// SelJailbreakTest FORBIDDEN_METHODS on RECEIVERS
	{src: "new DateTime(0L).wait();", want: selWantUnsupported},
	// SelJailbreakTest FORBIDDEN_METHODS on RECEIVERS
	{src: "new int[]{1}.getClass();", want: selWantUnsupported},
	// SelJailbreakTest FORBIDDEN_METHODS on RECEIVERS
	{src: "new int[]{1}.hashCode();", want: selWantUnsupported},
	// SelJailbreakTest FORBIDDEN_METHODS on RECEIVERS
	{src: "new int[]{1}.wait();", want: selWantUnsupported},
	// SelJailbreakTest FORBIDDEN_METHODS on RECEIVERS
	{src: "true.getClass();", want: selWantUnsupported},
	// SelJailbreakTest FORBIDDEN_METHODS on RECEIVERS
	{src: "true.hashCode();", want: selWantUnsupported},
	// SelJailbreakTest FORBIDDEN_METHODS on RECEIVERS
	{src: "true.wait();", want: selWantUnsupported},
	// SelJailbreakTest FORBIDDEN_METHODS
	{src: "'abc'.getClass().forName('java.lang.Runtime');", want: selWantUnsupported},
	// SelJailbreakTest FORBIDDEN_CLASSES (new C('arg'))
	{src: "new Runtime('arg');", want: selWantUnsupported},
	// SelJailbreakTest FORBIDDEN_CLASSES (new C('arg'))
	{src: "new File('arg');", want: selWantUnsupported},
	// SelJailbreakTest FORBIDDEN_CLASSES (new C('arg'))
	{src: "new Thread('arg');", want: selWantUnsupported},
	// SelJailbreakTest FORBIDDEN_CLASSES (new C('arg'))
	{src: "new Socket('arg');", want: selWantUnsupported},
	// SelJailbreakTest FORBIDDEN_CLASSES (new C('arg'))
	{src: "new URL('arg');", want: selWantUnsupported},
	// SelJailbreakTest FORBIDDEN_CLASSES (new C('arg'))
	{src: "new ClassLoader('arg');", want: selWantUnsupported},
	// SelJailbreakTest FORBIDDEN_CLASSES (new C('arg'))
	{src: "new System('arg');", want: selWantUnsupported},
	// SelJailbreakTest FORBIDDEN_CLASSES (C x = new C())
	{src: "File x = new File(); return x;", want: selWantUnsupported},
	// SelJailbreakTest CAPABILITY_CHAINS
	{src: "Thread.currentThread().setContextClassLoader(null);", want: selWantUnsupported},
	// SelJailbreakTest NETWORK_TARGETS
	{src: "InetAddress.getByName('169.254.169.254');", want: selWantUnsupported},
	// SelJailbreakTest NETWORK_TARGETS
	{src: "new Socket('localhost', 80);", want: selWantUnsupported},
	// SelJailbreakTest NETWORK_TARGETS
	{src: "new URL('http://localhost/').openStream();", want: selWantUnsupported},
	// SelJailbreakTest CAPABILITY_CHAINS
	{src: "Files.readAllBytes(Paths.get('/etc/passwd'));", want: selWantUnsupported},
	// SelJailbreakTest CAPABILITY_CHAINS
	{src: "new ScriptEngineManager().getEngineByName('js');", want: selWantUnsupported},
	// SelJailbreakTest.testRejectsUnknownTimeZoneIdWithoutDiskAccess
	{src: "DateTimeZone.forID('../../etc/passwd');", want: selWantError},
	// SelJailbreakTest.testAllowsBenignExpression
	{src: "DateTime d = new DateTime(0L); d.getYear();", kind: KindLong, kindOnly: true},
	// SelParserEvaluationVisitorTest.testInvalidExpr3
	{src: "method();", want: selWantSyntax},
	// SelParserEvaluationVisitorTest.testInvalidExpr2
	{src: "int x=1+1=3;", want: selWantSyntax},
	// SelParserEvaluationVisitorTest.testInvalidFor
	{src: "x=1; for(i=2, j=1; i<10; i+=1) x+=1; return x;", want: selWantSyntax},
	// SelParserEvaluationVisitorTest.testInvalidIndexAccess
	{src: "param['ab'];", want: selWantError},
	// sel.jjt header: no ++
	{src: "x = 1; x++;", want: selWantSyntax},
	// sel.jjt header: no ++
	{src: "x = 1; ++x;", want: selWantSyntax},
	// sel.jjt header: no --
	{src: "x = 1; x--;", want: selWantSyntax},
	// sel.jjt header: no --
	{src: "x = 1; --x;", want: selWantSyntax},
	// sel.jjt header: no ~
	{src: "~1", want: selWantSyntax},
	// sel.jjt header: no &
	{src: "1 & 2", want: selWantSyntax},
	// sel.jjt header: no |
	{src: "1 | 2", want: selWantSyntax},
	// sel.jjt header: no ^
	{src: "1 ^ 2", want: selWantSyntax},
	// sel.jjt header: no <<
	{src: "1 << 2", want: selWantSyntax},
	// sel.jjt header: no >>
	{src: "8 >> 1", want: selWantSyntax},
	// sel.jjt header: no >>>
	{src: "8 >>> 1", want: selWantSyntax},
	// sel.jjt AssignmentOperator: no &=
	{src: "x = 1; x &= 1;", want: selWantSyntax},
	// sel.jjt AssignmentOperator: no <<=
	{src: "x = 1; x <<= 1;", want: selWantSyntax},
	// sel.jjt header: no switch
	{src: "switch (1) { case 1: x = 1; }", want: selWantSyntax},
	// sel.jjt header: no do...while
	{src: "do { x = 1; } while (false);", want: selWantSyntax},
	// sel.jjt Statement: no try
	{src: "try { x = 1; } catch (Exception e) { x = 2; }", want: selWantSyntax},
	// sel.jjt: no lambdas
	{src: "f = x -> x + 1;", want: selWantSyntax},
	// sel.jjt: no lambdas
	{src: "() -> 1", want: selWantSyntax},
	// sel.jjt header: no generics
	{src: "Map<String, String> m = new HashMap<>();", want: selWantSyntax},
	// sel.jjt AllocationExpression: no generics
	{src: "m = new HashMap<String, String>();", want: selWantSyntax},
	// sel.jjt: no casts
	{src: "(int) 1.5", want: selWantSyntax},
	// sel.jjt: no instanceof
	{src: "x = 'a'; x instanceof String", want: selWantSyntax},
	// sel.jjt header: no final
	{src: "final int x = 1;", want: selWantSyntax},
	// sel.jjt header: no class
	{src: "class A {}", want: selWantSyntax},
	// sel.jjt header: no method
	{src: "int f() { return 1; }", want: selWantSyntax},
	// sel.jjt: no this
	{src: "this.x", want: selWantSyntax},
	// sel.jjt Statement: no synchronized
	{src: "synchronized (x) { x = 1; }", want: selWantSyntax},
	// sel.jjt header: no label
	{src: "label: for (;;) { break label; }", want: selWantSyntax},
	// sel.jjt header: no goto
	{src: "goto x;", want: selWantSyntax},

	// ---- Joda DateTime, DateTimeZone, DateTimeFormat, Days, Property
	// SelJodaDateTimeTest.testIntArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.minusYears(1)", kind: KindDateTime, str: "1969-01-01T00:00:12.345Z"},
	// SelJodaDateTimeTest.testIntArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.plusYears(1)", kind: KindDateTime, str: "1971-01-01T00:00:12.345Z"},
	// SelJodaDateTimeTest.testIntArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.minusMonths(1)", kind: KindDateTime, str: "1969-12-01T00:00:12.345Z"},
	// SelJodaDateTimeTest.testIntArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.plusMonths(1)", kind: KindDateTime, str: "1970-02-01T00:00:12.345Z"},
	// SelJodaDateTimeTest.testIntArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.minusWeeks(1)", kind: KindDateTime, str: "1969-12-25T00:00:12.345Z"},
	// SelJodaDateTimeTest.testIntArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.plusWeeks(1)", kind: KindDateTime, str: "1970-01-08T00:00:12.345Z"},
	// SelJodaDateTimeTest.testIntArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.minusDays(1)", kind: KindDateTime, str: "1969-12-31T00:00:12.345Z"},
	// SelJodaDateTimeTest.testIntArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.plusDays(1)", kind: KindDateTime, str: "1970-01-02T00:00:12.345Z"},
	// SelJodaDateTimeTest.testIntArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.minusHours(1)", kind: KindDateTime, str: "1969-12-31T23:00:12.345Z"},
	// SelJodaDateTimeTest.testIntArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.plusHours(1)", kind: KindDateTime, str: "1970-01-01T01:00:12.345Z"},
	// SelJodaDateTimeTest.testIntArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.minusMinutes(1)", kind: KindDateTime, str: "1969-12-31T23:59:12.345Z"},
	// SelJodaDateTimeTest.testIntArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.plusMinutes(1)", kind: KindDateTime, str: "1970-01-01T00:01:12.345Z"},
	// SelJodaDateTimeTest.testIntArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.minusSeconds(1)", kind: KindDateTime, str: "1970-01-01T00:00:11.345Z"},
	// SelJodaDateTimeTest.testIntArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.plusSeconds(1)", kind: KindDateTime, str: "1970-01-01T00:00:13.345Z"},
	// SelJodaDateTimeTest.testIntArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.minusMillis(1)", kind: KindDateTime, str: "1970-01-01T00:00:12.344Z"},
	// SelJodaDateTimeTest.testIntArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.plusMillis(1)", kind: KindDateTime, str: "1970-01-01T00:00:12.346Z"},
	// SelJodaDateTimeTest.testIntArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.withYear(1)", kind: KindDateTime, str: "0001-01-01T00:00:12.345Z"},
	// SelJodaDateTimeTest.testIntArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.withWeekyear(1)", kind: KindDateTime, str: "0001-01-04T00:00:12.345Z"},
	// SelJodaDateTimeTest.testIntArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.withMonthOfYear(1)", kind: KindDateTime, str: "1970-01-01T00:00:12.345Z"},
	// SelJodaDateTimeTest.testIntArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.withWeekOfWeekyear(1)", kind: KindDateTime, str: "1970-01-01T00:00:12.345Z"},
	// SelJodaDateTimeTest.testIntArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.withDayOfYear(1)", kind: KindDateTime, str: "1970-01-01T00:00:12.345Z"},
	// SelJodaDateTimeTest.testIntArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.withDayOfMonth(1)", kind: KindDateTime, str: "1970-01-01T00:00:12.345Z"},
	// SelJodaDateTimeTest.testIntArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.withDayOfWeek(1)", kind: KindDateTime, str: "1969-12-29T00:00:12.345Z"},
	// SelJodaDateTimeTest.testIntArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.withHourOfDay(1)", kind: KindDateTime, str: "1970-01-01T01:00:12.345Z"},
	// SelJodaDateTimeTest.testIntArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.withMinuteOfHour(1)", kind: KindDateTime, str: "1970-01-01T00:01:12.345Z"},
	// SelJodaDateTimeTest.testIntArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.withSecondOfMinute(1)", kind: KindDateTime, str: "1970-01-01T00:00:01.345Z"},
	// SelJodaDateTimeTest.testIntArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.withMillisOfSecond(1)", kind: KindDateTime, str: "1970-01-01T00:00:12.001Z"},
	// SelJodaDateTimeTest.testIntArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.withMillisOfDay(1)", kind: KindDateTime, str: "1970-01-01T00:00:00.001Z"},
	// SelJodaDateTimeTest.testNoArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.monthOfYear()", kind: KindDateTimeProperty, str: "Property[monthOfYear]"},
	// SelJodaDateTimeTest.testNoArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.dayOfWeek()", kind: KindDateTimeProperty, str: "Property[dayOfWeek]"},
	// SelJodaDateTimeTest.testNoArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.getMillis()", kind: KindLong, str: "12345"},
	// SelJodaDateTimeTest.testNoArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.getYear()", kind: KindLong, str: "1970"},
	// SelJodaDateTimeTest.testNoArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.getHourOfDay()", kind: KindLong, str: "0"},
	// SelJodaDateTimeTest.testNoArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.getWeekOfWeekyear()", kind: KindLong, str: "1"},
	// SelJodaDateTimeTest.testNoArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.getWeekyear()", kind: KindLong, str: "1970"},
	// SelJodaDateTimeTest.testNoArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.getDayOfWeek()", kind: KindLong, str: "4"},
	// SelJodaDateTimeTest.testNoArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.getDayOfMonth()", kind: KindLong, str: "1"},
	// SelJodaDateTimeTest.testNoArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.getDayOfYear()", kind: KindLong, str: "1"},
	// SelJodaDateTimeTest.testNoArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.getMillisOfDay()", kind: KindLong, str: "12345"},
	// SelJodaDateTimeTest.testNoArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.getMillisOfSecond()", kind: KindLong, str: "345"},
	// SelJodaDateTimeTest.testNoArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.getMinuteOfDay()", kind: KindLong, str: "0"},
	// SelJodaDateTimeTest.testNoArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.getMinuteOfHour()", kind: KindLong, str: "0"},
	// SelJodaDateTimeTest.testNoArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.getSecondOfMinute()", kind: KindLong, str: "12"},
	// SelJodaDateTimeTest.testNoArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.getMonthOfYear()", kind: KindLong, str: "1"},
	// SelJodaDateTimeTest.testNoArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.getSecondOfDay()", kind: KindLong, str: "12"},
	// SelJodaDateTimeTest.testNoArgCalls (fixed millis 12345)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.toString()", kind: KindString, str: "1970-01-01T00:00:12.345Z"},
	// SelJodaDateTimeTest.testOneArgCalls
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.toString('yyyy')", kind: KindString, str: "1970"},
	// SelJodaDateTimeTest.testOneArgCalls
	{src: "DateTime.parse('20190101', DateTimeFormat.forPattern('yyyyMMdd').withZone(DateTimeZone.UTC))", kind: KindDateTime, str: "2019-01-01T00:00:00.000Z"},
	// SelJodaDateTimeTest.testOneArgCalls
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.withZone(DateTimeZone.forID('UTC'))", kind: KindDateTime, str: "1970-01-01T00:00:12.345Z"},
	// SelJodaDateTimeTest.testOneArgCalls
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.isAfter(new DateTime('2019-01-01', DateTimeZone.UTC))", kind: KindBoolean, str: "false"},
	// SelJodaDateTimeTest.testOneArgCalls
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.isBefore(new DateTime('2019-01-01', DateTimeZone.UTC))", kind: KindBoolean, str: "true"},
	// SelJodaDateTimeTest.testOneArgCalls
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.isEqual(new DateTime('2019-01-01', DateTimeZone.UTC))", kind: KindBoolean, str: "false"},
	// SelJodaDateTimeTest.testOneArgCalls
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.withTimeAtStartOfDay()", kind: KindDateTime, str: "1970-01-01T00:00:00.000Z"},
	// SelJodaDateTimeTest.testOneArgCalls
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.toDateTime(DateTimeZone.forID('UTC'))", kind: KindDateTime, str: "1970-01-01T00:00:12.345Z"},
	// SelJodaDateTimeTest.testInvalidCallArg
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.minusYears(null)", want: selWantError},
	// SelJodaDateTimeTest.testInvalidCallMethod
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.invalid()", want: selWantUnsupported},
	// SelJodaDateTime SUPPORTED_METHODS: no now (use new DateTime())
	{src: "DateTime.now()", want: selWantUnsupported},
	// SelJodaDateTimeTest.setUp
	{src: "new DateTime('2019-01-01', DateTimeZone.UTC)", kind: KindDateTime, str: "2019-01-01T00:00:00.000Z"},
	// SelJodaDateTimeTest.assignOps
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d = new DateTime('2019-01-01', DateTimeZone.UTC); d", kind: KindDateTime, str: "2019-01-01T00:00:00.000Z"},
	// SelJodaDateTimeTest.testInvalidAssignType
	{src: "d = new DateTime(0); d = 'foo';", want: selWantError},
	// SelJodaDateTimeTest.testInvalidAssignOps
	{src: "d = new DateTime(0); d += 1;", want: selWantError},
	// SelJodaDateTime.create (8 arguments)
	{src: "new DateTime(2019, 1, 2, 3, 4, 5, 6, DateTimeZone.UTC)", kind: KindDateTime, str: "2019-01-02T03:04:05.006Z"},
	// SelJodaDateTime.create (2 arguments)
	{src: "new DateTime('2019-01-01T10:00:00Z', DateTimeZone.forID('America/Los_Angeles'))", kind: KindDateTime, str: "2019-01-01T02:00:00.000-08:00"},
	// SelJodaDateTime toString0
	{src: "new DateTime(0).withZone(DateTimeZone.forID('America/Los_Angeles')).toString()", kind: KindString, str: "1969-12-31T16:00:00.000-08:00"},
	// SelJodaDateTime toString
	{src: "new DateTime(0).withZone(DateTimeZone.forID('Asia/Kolkata'))", kind: KindDateTime, str: "1970-01-01T05:30:00.000+05:30"},
	// SelJodaDateTime plusMonths1
	{src: "new DateTime('2019-01-31', DateTimeZone.UTC).plusMonths(1).toString('yyyy-MM-dd')", kind: KindString, str: "2019-02-28"},
	// SelJodaDateTimeProperty withMaximumValue
	{src: "new DateTime('2020-02-10', DateTimeZone.UTC).dayOfMonth().withMaximumValue()", kind: KindDateTime, str: "2020-02-29T00:00:00.000Z"},
	// SelJodaDateTime getWeekyear0
	{src: "new DateTime('2021-01-01', DateTimeZone.UTC).getWeekyear()", kind: KindLong, str: "2020"},
	// SelJodaDateTime getWeekOfWeekyear0
	{src: "new DateTime('2021-01-01', DateTimeZone.UTC).getWeekOfWeekyear()", kind: KindLong, str: "53"},
	// SelJodaDateTimePropertyTest.testCalls
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.dayOfWeek().getAsText()", kind: KindString, str: "Thursday"},
	// SelJodaDateTimePropertyTest.testCalls
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.dayOfWeek().withMinimumValue()", kind: KindDateTime, str: "1969-12-29T00:00:12.345Z"},
	// SelJodaDateTimePropertyTest.testCalls
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.dayOfWeek().withMaximumValue()", kind: KindDateTime, str: "1970-01-04T00:00:12.345Z"},
	// SelJodaDateTimePropertyTest.testCalls
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.dayOfWeek().get()", kind: KindLong, str: "4"},
	// SelJodaDateTimePropertyTest.testInvalidCallArg
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.dayOfWeek().getAsText(null)", want: selWantUnsupported},
	// SelJodaDateTimePropertyTest.testInvalidCallMethod
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.dayOfWeek().getAsString()", want: selWantUnsupported},
	// SelJodaDateTimeProperty getAsText (Locale.US)
	{src: "d = new DateTime(12345).withZone(DateTimeZone.UTC); d.monthOfYear().getAsText()", kind: KindString, str: "January"},
	// SelJodaDateTimeDaysTest.testCalls
	{src: "Days.daysBetween(new DateTime('2019-01-01', DateTimeZone.UTC), new DateTime('2019-02-01', DateTimeZone.UTC))", kind: KindDays, str: "P31D"},
	// SelJodaDateTimeDaysTest.testCalls
	{src: "Days.daysBetween(new DateTime('2019-01-01', DateTimeZone.UTC), new DateTime('2019-02-01', DateTimeZone.UTC)).getDays()", kind: KindLong, str: "31"},
	// SelJodaDateTimeDays daysBetween
	{src: "Days.daysBetween(new DateTime('2019-02-01', DateTimeZone.UTC), new DateTime('2019-01-01', DateTimeZone.UTC)).getDays()", kind: KindLong, str: "-31"},
	// class-function.md Days
	{src: "dt1 = new DateTime('2019-01-01', DateTimeZone.UTC); dt2 = new DateTime('2019-02-01', DateTimeZone.UTC); days = Days.daysBetween(dt1, dt2); return days.getDays();", kind: KindLong, str: "31"},
	// SelJodaDateTimeDaysTest.testInvalidCallMethod
	{src: "Days.daysBetween(new DateTime(0), new DateTime(0)).getWeeks()", want: selWantUnsupported},
	// SelJodaDateTimeFormatterTest.testCalls
	{src: "DateTimeFormat.forPattern('yyyy').withZone(DateTimeZone.UTC).parseDateTime('2019')", kind: KindDateTime, str: "2019-01-01T00:00:00.000Z"},
	// SelJodaDateTimeFormatterTest.testCalls
	{src: "DateTimeFormat.forPattern('yyyy').withZone(DateTimeZone.UTC).parseDateTime(2019)", kind: KindDateTime, str: "2019-01-01T00:00:00.000Z"},
	// SelJodaDateTimeFormatterTest.testCalls
	{src: "DateTimeFormat.forPattern('yyyy').withZone(DateTimeZone.UTC).parseMillis('2019')", kind: KindLong, str: "1546300800000"},
	// SelJodaDateTimeFormatterTest.testCalls
	{src: "DateTimeFormat.forPattern('yyyy').withZone(DateTimeZone.UTC).print(12345)", kind: KindString, str: "1970"},
	// SelJodaDateTimeFormatterTest.testCalls
	{src: "DateTimeFormat.forPattern('yyyyMMdd').withZone(DateTimeZone.UTC).print(new DateTime(12345))", kind: KindString, str: "19700101"},
	// SelJodaDateTimeFormatterTest.testInvalidCallArg
	{src: "DateTimeFormat.forPattern('yyyy').withZone(null)", want: selWantError},
	// SelJodaDateTimeFormatterTest.testInvalidCallMethod
	{src: "DateTimeFormat.forPattern('yyyy').invalid()", want: selWantUnsupported},
	// brief: forPattern(...).withZone(...).parseDateTime(...).plusDays(...).toString(...)
	{src: "DateTimeFormat.forPattern('yyyyMMdd').withZone(DateTimeZone.UTC).parseDateTime('20210304').plusDays(1).toString('yyyy-MM-dd')", kind: KindString, str: "2021-03-05"},
	// SelJodaDateTimeFormatter print
	{src: "DateTimeFormat.forPattern('yyyy-MM-dd HH:mm').withZone(DateTimeZone.forID('Asia/Tokyo')).print(0)", kind: KindString, str: "1970-01-01 09:00"},
	// SelJodaDateTimeZoneTest.testCalls
	{src: "DateTimeZone.forID('UTC')", kind: KindDateTimeZone, str: "UTC"},
	// class-function.md DateTimeZone
	{src: "return DateTimeZone.forID('UTC');", kind: KindDateTimeZone, str: "UTC"},
	// SelJodaDateTimeZoneTest.testCalls
	{src: "DateTimeZone.UTC.getOffset(new DateTime(0))", kind: KindLong, str: "0"},
	// SelJodaDateTimeZoneTest.testCalls
	{src: "DateTimeZone.forID('America/Los_Angeles').getOffset(new DateTime(0))", kind: KindLong, str: "-28800000"},
	// class-function.md DateTimeZone
	{src: "return DateTimeZone.UTC.getOffset(new DateTime());", kind: KindLong, str: "0"},
	// SelJodaDateTimeZoneTest.testField
	{src: "return DateTimeZone.UTC;", kind: KindDateTimeZone, str: "UTC"},
	// SelJodaDateTimeZoneTest.testInvalidField
	{src: "DateTimeZone.ABC", want: selWantUnsupported},
	// SelJodaDateTimeZoneTest.testInvalidCall
	{src: "DateTimeZone.UTC.invalid(123)", want: selWantUnsupported},
	// SelJodaDateTimeZoneTest.testAssignOps
	{src: "z = DateTimeZone.UTC; z = DateTimeZone.forID('America/Los_Angeles'); z", kind: KindDateTimeZone, str: "America/Los_Angeles"},
	// SelTypesTest.testFailedCallConstructor
	{src: "new DateTimeZone()", want: selWantUnsupported},
	// SelJodaDateTime.create (0 arguments: now)
	{src: "new DateTime().withZone(DateTimeZone.UTC).toString()", kind: KindString, str: "2021-03-04T05:06:07.089Z"},
	// SelJodaDateTime.create (0 arguments: now)
	{src: "new DateTime().getMillis()", kind: KindLong, str: "1614834367089"},
	// SelJodaDateTimeProperty getAsText of now
	{src: "new DateTime().withZone(DateTimeZone.UTC).dayOfWeek().getAsText()", kind: KindString, str: "Thursday"},
	// brief: monthOfYear().getAsText()
	{src: "new DateTime().withZone(DateTimeZone.UTC).monthOfYear().getAsText()", kind: KindString, str: "March"},
	// example.md Example 4
	{src: "new DateTime(System.currentTimeMillis()).withZone(DateTimeZone.UTC).toString(\"yyyy-MM-dd HH:mm:ss.SSSSSS\");", kind: KindString, str: "2021-03-04 05:06:07.089000"},
	// example.md Example 5
	{src: "DateTime dt = new DateTime().withZone(DateTimeZone.forID('US/Pacific'));\nreturn String.format('Q%s-%s', ((dt.getMonthOfYear() - 1) / 3) + 1, dt.getYear());", kind: KindString, str: "Q1-2021"},

	// ---- doc examples with inputs
	// example.md Example 1
	{src: "for (int i = 0; i < strParam.length; i += 1) {\n  if (strParam[i].isEmpty()) {\n    throw i + '-th element in the array is empty. Please check the input.';\n  }\n}\nreturn String.join(',', strParam);", vars: map[string]Value{"strParam": &Array{Of: KindStringArray, Items: []Value{String("a"), String("b"), String("c")}}}, kind: KindString, str: "a,b,c"},
	// example.md Example 1 (an empty element)
	{src: "for (int i = 0; i < strParam.length; i += 1) {\n  if (strParam[i].isEmpty()) {\n    throw i + '-th element in the array is empty. Please check the input.';\n  }\n}\nreturn String.join(',', strParam);", vars: map[string]Value{"strParam": &Array{Of: KindStringArray, Items: []Value{String("a"), String(""), String("c")}}}, kind: KindError, str: "1-th element in the array is empty. Please check the input."},
	// example.md Example 3
	{src: "DateTimeFormatter fmt = DateTimeFormat.forPattern('yyyyMMdd').withZone(DateTimeZone.forID('UTC'));\nDateTime d1 = fmt.parseDateTime(String.valueOf(startDateTime));\nDateTime d2 = fmt.parseDateTime(String.valueOf(endDateTime));\n\nif (!d1.isBefore(d2)) {\n  return new int[0];\n}\n\nint months = 12 * (d2.getYear() - d1.getYear()) + (d2.getMonthOfYear() - d1.getMonthOfYear());\nmonths += d1.getDayOfMonth() == 1 ? 0 : -1; // adjust months for the start\nmonths += d2.getDayOfMonth() == 1 ? 0 : 1;  // adjust months for the end\n\nif (d1.getDayOfMonth() > 1) {\n  d1 = d1.withDayOfMonth(1).plusMonths(1);  // adjust the start month\n}\n\nint[] ret = new int[months];\nfor(int i=0; i < months; i+=1) {\n   ret[i] = Integer.valueOf(d1.plusMonths(i).toString(\"yyyyMMdd\"));\n}\nreturn ret;", vars: map[string]Value{"startDateTime": Long(20190115), "endDateTime": Long(20190320)}, kind: KindLongArray, str: "[20190201, 20190301]"},
	// example.md Example 3
	{src: "DateTimeFormatter fmt = DateTimeFormat.forPattern('yyyyMMdd').withZone(DateTimeZone.forID('UTC'));\nDateTime d1 = fmt.parseDateTime(String.valueOf(startDateTime));\nDateTime d2 = fmt.parseDateTime(String.valueOf(endDateTime));\n\nif (!d1.isBefore(d2)) {\n  return new int[0];\n}\n\nint months = 12 * (d2.getYear() - d1.getYear()) + (d2.getMonthOfYear() - d1.getMonthOfYear());\nmonths += d1.getDayOfMonth() == 1 ? 0 : -1; // adjust months for the start\nmonths += d2.getDayOfMonth() == 1 ? 0 : 1;  // adjust months for the end\n\nif (d1.getDayOfMonth() > 1) {\n  d1 = d1.withDayOfMonth(1).plusMonths(1);  // adjust the start month\n}\n\nint[] ret = new int[months];\nfor(int i=0; i < months; i+=1) {\n   ret[i] = Integer.valueOf(d1.plusMonths(i).toString(\"yyyyMMdd\"));\n}\nreturn ret;", vars: map[string]Value{"startDateTime": Long(20190101), "endDateTime": Long(20191101)}, kind: KindLongArray, str: "[20190101, 20190201, 20190301, 20190401, 20190501, 20190601, 20190701, 20190801, 20190901, 20191001]"},
	// example.md Example 3 (start after end)
	{src: "DateTimeFormatter fmt = DateTimeFormat.forPattern('yyyyMMdd').withZone(DateTimeZone.forID('UTC'));\nDateTime d1 = fmt.parseDateTime(String.valueOf(startDateTime));\nDateTime d2 = fmt.parseDateTime(String.valueOf(endDateTime));\n\nif (!d1.isBefore(d2)) {\n  return new int[0];\n}\n\nint months = 12 * (d2.getYear() - d1.getYear()) + (d2.getMonthOfYear() - d1.getMonthOfYear());\nmonths += d1.getDayOfMonth() == 1 ? 0 : -1; // adjust months for the start\nmonths += d2.getDayOfMonth() == 1 ? 0 : 1;  // adjust months for the end\n\nif (d1.getDayOfMonth() > 1) {\n  d1 = d1.withDayOfMonth(1).plusMonths(1);  // adjust the start month\n}\n\nint[] ret = new int[months];\nfor(int i=0; i < months; i+=1) {\n   ret[i] = Integer.valueOf(d1.plusMonths(i).toString(\"yyyyMMdd\"));\n}\nreturn ret;", vars: map[string]Value{"startDateTime": Long(20190301), "endDateTime": Long(20190101)}, kind: KindLongArray, str: "[]"},

	// ---- limits and the meter
	// SelParserEvaluationVisitorTest.testLoopOverLimit
	{src: "while(true) 1+1;", limits: Limits{Loop: 10}, want: selWantLimit},
	// statement.md: for(;;) {} is an infinite loop (processLoopBlock loop limit)
	{src: "for(;;) {}", limits: Limits{Loop: 100}, want: selWantLimit},
	// SelParserEvaluationVisitor.processLoopBlock: loopCnt >= loopLimit
	{src: "x = 0; while (x < 1000) x += 1; x", limits: Limits{Loop: 100}, want: selWantLimit},
	// SelParserEvaluationVisitor.processLoopBlock: continue counts
	{src: "for (i = 0; i < 1000; i += 1) { continue; }", limits: Limits{Loop: 100}, want: selWantLimit},
	// SelParserEvaluationVisitor.processLoopBlock: under the limit
	{src: "x = 0; while (x < 50) x += 1; x", limits: Limits{Loop: 100}, kind: KindLong, str: "50"},
	// SelParserEvaluationVisitor.processLoopBlock: the count is per loop run
	{src: "c = 0; for (i = 0; i < 50; i += 1) { for (j = 0; j < 50; j += 1) { c += 1; } } c", limits: Limits{Loop: 100}, kind: KindLong, str: "2500"},
	// SelParserEvaluationVisitorTest.testArrayOverLimit1
	{src: "int[] x = new int[100];", limits: Limits{Array: 10}, want: selWantLimit},
	// SelParserEvaluationVisitorTest.testArrayOverLimit2
	{src: "int[] x = new int[]{1,2,3,4,5};", limits: Limits{Array: 1}, want: selWantLimit},
	// SelParserEvaluationVisitor.visit(ASTArrayInitializer)
	{src: "x = new long[]{1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20};", limits: Limits{Array: 10}, want: selWantLimit},
	// SelParserEvaluationVisitor.visit(ASTArrayDims)
	{src: "n = 50; x = new String[n];", limits: Limits{Array: 10}, want: selWantLimit},
	// SelParserEvaluationVisitor.visit(ASTArrayDims): under the limit
	{src: "int[] x = new int[5]; x.length", limits: Limits{Array: 10}, kind: KindLong, str: "5"},
	// SelParserEvaluationVisitorTest.testVisitOverLimit
	{src: "j=0; for (i = 0; i < 100; i += 1) j+=1; return j;", limits: Limits{Visits: 10}, want: selWantLimit},
	// SelParserEvaluationVisitorTest.testMapOverLimit (Java's memory limit; here Limits.Array bounds a map, machine.go CheckMap)
	{src: "m = new HashMap(); for (i = 0; i < 100; i += 1) m.put(String.valueOf(i), String.valueOf(i)); return m;", limits: Limits{Array: 10}, want: selWantLimit},
	// MemoryCounter (SelString counts its length); here Limits.Length, machine.go CheckString
	{src: "s = ''; for (i = 0; i < 50; i += 1) { s += 'abcdefghij'; } s", limits: Limits{Length: 100}, want: selWantLimit},
	// MemoryCounter: a doubling string stops
	{src: "s = 'x'; while (true) { s = s + s; }", want: selWantLimit},
	// Limits.Length: under the limit
	{src: "s = ''; for (i = 0; i < 5; i += 1) { s += 'abcdefghij'; } s.length()", limits: Limits{Length: 100}, kind: KindLong, str: "50"},
	// SelEvaluator timeout; here the Meter (brief)
	{src: "while(true){}", limits: Limits{Loop: 1 << 62, Visits: 1 << 62}, meter: 1000000, want: selWantLimit},
	// SelEvaluator timeout; here the Meter (brief)
	{src: "for(;;){}", limits: Limits{Loop: 1 << 62, Visits: 1 << 62}, meter: 1000000, want: selWantLimit},
	// SelEvaluator timeout; here the Meter (brief)
	{src: "x = 0; while (true) { x += 1; }", limits: Limits{Loop: 1 << 62, Visits: 1 << 62}, meter: 1000000, want: selWantLimit},
	// the Meter does not stop a short expression
	{src: "1 + 1", meter: 1000000000, kind: KindLong, str: "2"},
}

func TestSELCases(t *testing.T) {
	if len(selCases) < 220 {
		t.Fatalf("only %d cases", len(selCases))
	}
	for i, tc := range selCases {
		name := strings.Join(strings.Fields(tc.src), " ")
		if len(name) > 48 {
			name = name[:48]
		}
		t.Run(fmt.Sprintf("%03d %s", i, name), func(t *testing.T) {
			selCaseCheck(t, tc)
		})
	}
}

func selCaseCheck(t *testing.T, tc selCase) {
	before := map[string]string{}
	for k, v := range tc.vars {
		before[k] = JavaString(v)
	}
	cfg := Config{Vars: tc.vars, Now: selCaseNow, Seed: "sel-cases", Limits: tc.limits}
	if tc.meter > 0 {
		cfg.Meter = &selCaseMeter{budget: tc.meter}
	}
	src := selCaseSanitize(tc.src)

	type result struct {
		v        Value
		parseErr error
		evalErr  error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		defer func() {
			if p := recover(); p != nil {
				r.evalErr = fmt.Errorf("panic: %v", p)
			}
			done <- r
		}()
		p, err := Parse(src)
		if err != nil {
			r.parseErr = err
			return
		}
		r.v, r.evalErr = p.Eval(cfg)
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%q did not return within 10 s", tc.src)
	}
	if r.evalErr != nil && strings.HasPrefix(r.evalErr.Error(), "panic: ") {
		t.Fatalf("%q: %v", tc.src, r.evalErr)
	}
	for k, v := range tc.vars {
		if got := JavaString(v); got != before[k] {
			t.Errorf("%q changed its input %s: %s, was %s", tc.src, k, got, before[k])
		}
	}
	err := r.parseErr
	if err == nil {
		err = r.evalErr
	}

	switch tc.want {
	case selWantValue:
		if err != nil {
			t.Fatalf("%q: want %s %q, got error: %v", tc.src, tc.kind, tc.str, err)
		}
		if r.v == nil {
			t.Fatalf("%q: want %s %q, got a nil Value", tc.src, tc.kind, tc.str)
		}
		got := JavaString(r.v)
		if r.v.Kind() != tc.kind {
			t.Errorf("%q: want kind %s, got %s (%q)", tc.src, tc.kind, r.v.Kind(), got)
		}
		switch {
		case tc.kindOnly:
		case tc.re != "":
			if !regexp.MustCompile(tc.re).MatchString(got) {
				t.Errorf("%q: want a string matching %s, got %q", tc.src, tc.re, got)
			}
		case got != tc.str:
			t.Errorf("%q: want %s %q, got %s %q", tc.src, tc.kind, tc.str, r.v.Kind(), got)
		}
		return
	case selWantSyntax:
		if r.parseErr == nil {
			t.Fatalf("%q: want a syntax error from Parse, got value %v, error %v", tc.src, selCaseShow(r.v), r.evalErr)
		}
		if msg := r.parseErr.Error(); !strings.Contains(msg, "line ") || !strings.Contains(msg, "column ") {
			t.Errorf("%q: a syntax error should name line and column: %v", tc.src, msg)
		}
	case selWantUnsupported:
		if err == nil {
			t.Fatalf("%q: want an error wrapping ErrUnsupported, got %s", tc.src, selCaseShow(r.v))
		}
		if !errors.Is(err, ErrUnsupported) {
			t.Errorf("%q: want an error wrapping ErrUnsupported, got: %v", tc.src, err)
		}
	case selWantLimit:
		if err == nil {
			t.Fatalf("%q: want an error wrapping ErrLimit, got %s", tc.src, selCaseShow(r.v))
		}
		if !errors.Is(err, ErrLimit) {
			t.Errorf("%q: want an error wrapping ErrLimit, got: %v", tc.src, err)
		}
	case selWantError:
		if err == nil {
			t.Fatalf("%q: want an error, got %s", tc.src, selCaseShow(r.v))
		}
	}
	if tc.errHas != "" && err != nil && !strings.Contains(err.Error(), tc.errHas) {
		t.Errorf("%q: want an error containing %q, got: %v", tc.src, tc.errHas, err)
	}
}

func selCaseShow(v Value) string {
	if v == nil {
		return "no value"
	}
	return fmt.Sprintf("%s %q", v.Kind(), JavaString(v))
}

// TestSELCasesIsolation ports SelJailbreakTest's isolation cases: an
// evaluation does not see another's variables (testReusedEvaluatorDoes
// NotLeakVariablesAcrossEvaluations), a program gives the same result each
// time it runs (SelThread parses anew for each evaluation), and concurrent
// evaluations of one program with distinct inputs each see their own
// (testConcurrentEvaluationsAreIsolated).
func TestSELCasesIsolation(t *testing.T) {
	eval := func(p *Program, vars map[string]Value) (Value, error) {
		return p.Eval(Config{Vars: vars, Now: selCaseNow})
	}
	set, err := Parse(selCaseSanitize("x = 5; return x;"))
	if err != nil {
		t.Fatal(err)
	}
	get, err := Parse(selCaseSanitize("return x;"))
	if err != nil {
		t.Fatal(err)
	}
	if v, err := eval(set, nil); err != nil || JavaString(v) != "5" {
		t.Fatalf("x = 5; return x; gave %v, %v", v, err)
	}
	if v, err := eval(get, nil); err != nil || v.Kind() != KindNull {
		t.Fatalf("return x; after another evaluation set x gave %v, %v; want NULL", v, err)
	}

	// A declaration's initializer is evaluated afresh on every run.
	again, err := Parse(selCaseSanitize("int x = 10; x += 5; long[] a = new long[]{1, 2}; a[0] += x; return a;"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if v, err := eval(again, nil); err != nil || JavaString(v) != "[16, 2]" {
			t.Fatalf("run %d gave %v, %v; want [16, 2]", i, v, err)
		}
	}

	secret, err := Parse(selCaseSanitize("s = secret; for (i = 0; i < 20; i += 1) { s += ''; } return s;"))
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	for d := 0; d < 8; d++ {
		go func(d int) {
			for i := 0; i < 50; i++ {
				want := fmt.Sprintf("driver-%d-%d", d, i)
				v, err := eval(secret, map[string]Value{"secret": String(want)})
				if err != nil || JavaString(v) != want {
					errs <- fmt.Errorf("want %s, got %v, %v", want, v, err)
					return
				}
			}
			errs <- nil
		}(d)
	}
	for d := 0; d < 8; d++ {
		select {
		case err := <-errs:
			if err != nil {
				t.Error(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("concurrent evaluations did not end within 10 s")
		}
	}
}
