// Package expression is Maestro's expression language — SEL (package sel)
// beside a dialect on expr (github.com/expr-lang/expr) — the language of
// parameter expressions, edge (successor) conditions, while conditions,
// signal trigger conditions and dedup expressions.
//
// Maestro writes these in SEL, a Java-syntax language, and so may users
// here: two readers share the work, and the user writes one language.
//
//   - Source the expr dialect of this package compiles — everything the
//     project accepted before SEL came: operators, params.* and Util.*
//     helpers, x.toString(), a trailing ";" or a leading "return" — is
//     read in it, with the same results as before.
//   - Other source — statements (declarations, assignments, if / else,
//     for, while, break, continue, return, throw), Java objects (new
//     DateTime(..), new Map(), new long[]{..}), method calls on values
//     ('a,b'.split(','), m.put(..), Joda's withZone(..)) — is SEL, run by
//     package sel exactly as Maestro's netflix-sel module runs it: its
//     grammar, its types and their methods, its limits (loop and array
//     limits 25,001), Joda-Time on Go's time zone database. The params and
//     Util objects are this package's helpers, so params.getFromStep(..)
//     or Util.dateIntsBetween(..) mean the same in both.
//   - Source neither reads is refused with SEL's syntax error, which names
//     the line and column.
//
// Where the two differ on source both read, the dialect's result stands
// (it accepts more: true + '!' is "true!" here, an error in SEL). SEL
// programs are checked when a definition is created as far as can be
// known without running them: a class SEL lacks (new Thread()), a params
// or Util function that does not exist or gets the wrong number of
// arguments, params.get of an undefined param, a name that is neither a
// param nor assigned, a class used as a value, a result or an operator
// whose types cannot fit (x = 'a' + 1 where LONG is wanted, true + 1).
// What depends on run-time values (a method of a computed value, a
// date's text) fails when evaluated, naming the line and column.
//
// Every SEL evaluation is charged to the same Budget as the dialect's
// (WithBudget): each syntax node it visits, each string it builds, each
// input it reads, each helper's result, so statements and loops are no
// way around the decision's budget; and SEL's own limits stop a loop, an
// array or a map past Maestro's sizes.
//
// Semantics follow Java where the Maestro corpus relies on them: + with a
// string operand concatenates (sleep_seconds + '1' is "161" for 16), longs
// stay int64, / and % on two longs are integer operations (division by zero
// is an error), doubles print as Java's Double.toString (1.0, 1.0E7).
//
// Identifiers are parameters by bare name, including cross-step references
// "<stepId>__<param>"; the model.Scope passed to Compile lists them with
// their types (type "" means known only at run time). An identifier not in
// scope is a compile error: unknown parameter "foo".
//
// # Functions
//
//	function                                        result
//	params.get(name), params[name], params.name     the parameter's value (any name, e.g. 'job.2__param1')
//	params.containsKey(name)                        whether param name has a value here (an unknown name gives false)
//	params.getFromStep(stepId, name)                param of another step (Env.Step); name MAESTRO_STEP_STATUS or MAESTRO_STEP_END_TIME reads its status or end time (unix ms)
//	params.getFromStep(field)                       current step's runtime field, e.g. MAESTRO_STEP_ERROR_RETRIES (Env.StepFields)
//	params.getFromSignal(name)                      param of the triggering signal (Env.SignalParams)
//	params.getFromSignal(signalName, name)          param of a named triggering signal (Env.Signals)
//	params.getFromSignalOrDefault(sig, name, def)   as above, def when missing
//	params.getFromSignalDependency(index, name)     param of the signal matching the step's index-th dependency; index may be '0' (Env.SignalDependencies)
//	params.getFromForeach(foreachId, stepId, name)  array of the param over the foreach iterations (Env.Foreach)
//	params.getFromSubworkflow(subId, stepId, name)  param of a step of the subworkflow instance (Env.Subworkflow)
//	params.getFromInstance(field)                   instance field, e.g. RUN_POLICY, owner (Env.Instance)
//	Util.dateIntsBetween(from, to, step)            []int64 of dateInts (yyyyMMdd) from..to END-EXCLUSIVE, step in days (negative step: bounds swapped and result reversed, as in Maestro)
//	Util.intsBetween(from, to, step)                []int64 from..to END-EXCLUSIVE
//	Util.dateIntToTs(dateInt[, tz])                 epoch millis of the day's midnight (tz default UTC)
//	Util.dateIntHourToTs(dateInt, hour, tz, dayOffset, hourOffset)  epoch millis of that hour minus the offsets
//	Util.incrementDateInt(dateInt, days)            dateInt string days later
//	Util.tsToDateInt(tsMillis[, tz])                dateInt string of the instant (tz default UTC)
//	UUID.randomUUID(), UUID.randomUUID().toString() a UUID string derived from Env.Seed and a per-evaluation counter (deterministic)
//	Math.min(a, b), Math.max(a, b), Math.abs(a)     long for longs, double otherwise
//	x.toString()                                    x as Java prints it (arrays and maps as JSON)
//	x.size(), x.length()                            length of a string (UTF-16 units), array or map
//
// These are implemented by an expr AST patch (expr.Patch) that rewrites the
// calls into registered functions whose names contain a dot, so a user
// parameter named get, min or Util can never collide with them. A subset of
// expr's own builtins stays available (len, map, filter, all, any, upper,
// ...); those that could build unbounded strings or read the clock (repeat,
// join, replace, string, toJSON, now, date, reduce, ...) are disabled.
//
// # Types
//
// Compile checks the static result type against the wanted model.ParamType:
// LONG takes integers; DOUBLE integers and doubles; STRING any scalar (Maestro
// prints longs, doubles and booleans); BOOLEAN booleans; arrays arrays whose
// elements fit; STRING_MAP maps of strings; MAP maps. Results whose type is
// known only at run time are converted after evaluation by Coerce.
//
// # Limits
//
// Limits cap the source length, AST nodes, every string built and the
// result, array sizes (Util.intsBetween(0, 2000000000, 1) and 0..2000000000
// fail at once; a range of literal bounds past MaxArrayLen fails when the
// expression is compiled) and the memory of one evaluation; see Limits.
// expr has no loops; SEL's stop at the loop limit, and every evaluation
// at the Budget, so every evaluation terminates.
//
// Regular expressions (matches) are sized from their parse tree before
// anything compiles them — counted repeats multiply: a{1000} is 1,000
// instructions — and a pattern of more than MaxRegexInstructions (10,000)
// is refused: a literal one when the expression is compiled (a definition
// holding one is refused at create time), one computed at run time when it
// is evaluated.
//
// Work is bounded too, by a Budget that every evaluation under one context
// shares (WithBudget; the engine gives each decision one, the signal
// handler each workflow's triggers per signal, a definition check its
// compilations): each occurrence of a variable costs its size (a unit per
// string byte, 32 per array element or map entry), every helper result and
// every range its size, the string operators and builtins (matches,
// contains, startsWith, endsWith, upper, lower, trim*, indexOf, ...) the
// bytes they scan or build, and a regular expression 600 units per
// instruction to compile (once per budget, which keeps the program) and 4
// per subject byte and instruction to match, charged before it runs. The
// weights make a unit 0.3 to 3 ns of CPU whatever the construct, so the
// default 100,000,000 units are at most about 0.3 s. The VM's own memory
// budget is what is left of the Budget's. Past the budget the expression
// fails with ErrLimit, the same way on every replay, since costs are
// counted, not timed. Checking a definition (Language.Checker) charges each
// expression its bytes and its literal patterns' compilation.
//
// # Parameter sets and interpolation
//
// Interpolate expands $name, ${name} and $$ in literal strings. EvalParams
// (or CompileParams and ParamSet.Eval) evaluates a set of definitions that
// reference each other, in dependency order, and names any reference cycle.
package expression
