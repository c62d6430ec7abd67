// Package model is the workflow definition model of the serverless Maestro:
// Maestro-compatible JSON (and YAML of the same structure), validation with
// JSON-path errors, and the statuses, actions and run policies of workflow
// and step instances. It imports nothing from AWS.
//
// # Decoding and encoding
//
// ParseDefinition reads a create request ({"properties", "workflow", ...})
// or a stored definition ({"properties_snapshot", "workflow", "metadata",
// ...}) by walking an ordered JSON tree, so that it reports every shape error
// at once with its path (see Errors) and keeps the order of params,
// successors, signal names and map literals. Enum values and type names are
// read case-insensitively and written canonically; keys the model does not
// know are kept (Extra, Meta) and written back; numbers are written back with
// the text they were read with. ParseDefinitionYAML reads the same structure
// from YAML. Definition.MarshalJSON and the MarshalJSON/UnmarshalJSON methods
// of the parts write and read the same JSON, so that decoding the output of
// an encoding gives an equal model.
//
// # Validation
//
// Validate applies Maestro's create-time rules and reports every violation
// with the JSON path of the field and a message naming the rule and value:
//
//   - workflow: required; id [_a-zA-Z0-9][.\-_a-zA-Z0-9]*, at most 128
//     characters, no "maestro_" prefix or "_maestro" suffix (any case); name
//     at most 256 and descriptions at most 16384 characters; at least one
//     step; criticality and instance_step_concurrency (1..999).
//   - properties: run strategy rule; workflow_concurrency 1..1000 and above 1
//     only for PARALLEL; step_concurrency 1..1000.
//   - steps: id [_a-zA-Z][.\-_a-zA-Z0-9]*, at most 128 characters, no "__", no
//     "maestro_" prefix, unique across all nesting levels; typed steps need a
//     known type; successors must name steps of the same list; predecessors,
//     when given, must equal the computed ones; no cycles (the message names
//     the steps on the cycle); at most 300 steps with nested ones; foreach and
//     while nesting at most 10 deep.
//   - foreach: loop_params, a MAP of *_ARRAY params (at most 25,000
//     iterations when all are literals); concurrency 1..500. while: a
//     condition and loop_params, a MAP of scalar params. Loop param names are
//     unique across nesting levels. subworkflow: a STRING subworkflow_id.
//   - params: names follow the step id rules (reserved names such as AUTH_*
//     are allowed); a known type and mode; a literal value or an expression,
//     not both; literals fit their type, nested MAP params included.
//   - retries: limits 0..99, backoff seconds 1..86400, exponents >= 0;
//     timeouts above 0 and at most 120 days. "$param" strings are left to run
//     time.
//   - tags and signal names: [\w \.,:@&='(){}$+\[\]\-\/\\]+, not blank, no
//     reserved prefix or suffix; tag names unique in a list.
//   - time triggers: CRON expressions parse (see ParseCron) and fire at least
//     2 minutes apart; PREDEFINED is one of @hourly, @daily, @weekly, @monthly,
//     @yearly; INTERVAL is not supported; time zones load.
//   - signal triggers: 1..8 signals, join_keys of equal length and not among
//     the match params, valid operators and values. Signal dependencies need
//     a name, STRING or LONG params, and at most one range operator each.
//   - expressions, when ValidateOptions.Expressions is set: every param
//     expression (for its type), successor condition, while condition and
//     signal trigger condition (BOOLEAN), and dedup_expr (STRING), each with
//     the Scope of names it may use. Interpolations in literal strings
//     ("${p}") are resolved at run time and not checked here.
package model
