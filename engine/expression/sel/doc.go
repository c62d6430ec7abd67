// Package sel is Maestro's SEL — its Simple/Secure/Safe Scheduler
// Expression Language, a sandboxed subset of Java — in Go, after the
// netflix-sel module of github.com/Netflix/maestro, whose grammar (sel.jjt),
// evaluation visitor, types and tests are the specification.
//
// Parse reads a program — optional imports (ignored), then statements:
// typed and untyped declarations, assignments (= += -= *= /= %=), if /
// else, for, while, break, continue, return, throw, blocks, expression
// statements ending in ";" — with Java's operator precedence. Program.Eval
// runs it: its value is its return's, else its last statement's (Void
// after a declaration, an if or a loop); `throw "message"` ends it with an
// Error value.
//
// Values are SEL's: String, Long (every integer), Double, Boolean, their
// one-dimensional arrays, Map (string keys), null, the Joda types
// DateTime, DateTimeZone, DateTimeFormatter, DateTime.Property and Days,
// and UUID. Variables are global to the program and hold a typed box, as
// SEL's symbol table does: a declaration from another variable shares its
// box, and a map keeps the box a variable put into it. Operators follow
// SEL's types (ops.go): longs wrap on overflow, / and % on longs are
// integer operations, + concatenates when either side is a string, &&
// and || evaluate both sides, == on strings refuses a number.
//
// Methods are dispatched by the receiver's kind (dispatch.go) to
// basic.go (String, Long, Double, Map, Math, UUID, ...) and joda.go; the
// host's objects (Maestro's params and Util) come in through Config.Hosts.
//
// The sandbox: no class but those SEL has, no qualified names, no
// reflection, nothing that reads the clock but new DateTime() and
// System.currentTimeMillis(), which read Config.Now, and nothing random
// but UUID.randomUUID() and Math.random(), derived from Config.Seed. Every
// evaluation is bounded by Limits (loop iterations, array and map sizes,
// string length, nodes visited, nesting) and charged to its Meter: each
// node visited, each string built or scanned, each regular expression by
// its size, so a program stops at its budget whatever it does.
//
// Errors name where: a SyntaxError its line and column, an EvalError the
// line and column of the node that failed.
package sel
