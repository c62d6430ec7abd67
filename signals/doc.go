// Package signals is the pure logic of Maestro's signals: the signal and
// announce shapes, parsing and validating an announcement, matching a signal
// against a trigger's or a dependency's match params, joining the signals of
// a trigger on its join keys, the deterministic request ids that make a
// trigger start a workflow exactly once per signal set, and the mapping of
// S3 object notifications and SNS messages to announcements.
//
// It does no I/O and imports nothing from AWS: the store, the orchestrator
// and the Lambda handlers call it with what they have read.
//
// # Values
//
// Signal params are LONG or STRING only, held as int64 or string. Comparison
// is numeric for LONG and byte-wise (Unicode code point order) for STRING; a
// LONG never matches a STRING, and a missing param never matches. Normalize
// brings values from other sources (int, json.Number, integral float64) to
// these two types.
//
// Payload values are any JSON, decoded with encoding/json's UseNumber: nil,
// bool, string, json.Number, []any and map[string]any. json.Number keeps the
// number's text exactly, so a payload is written back as it was read.
//
// # Triggers
//
// A trigger names up to eight signals. A signal matches its definition when
// every match param is present and satisfies its operator. The trigger fires
// when every name has a matching signal and the join keys agree positionally:
// the i-th join key of one name's definition holds the same value (same type)
// as the i-th join key of every other name's. Complete finds that set for a
// newly arrived signal; TriggerRequestID names it so that concurrent arrivals
// of the same set start one instance.
package signals
