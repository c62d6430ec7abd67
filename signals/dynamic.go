package signals

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/maestro-serverless/maestro/jsonnum"
)

// DynamicOutputKey is the artifact key of a job's dynamic signal outputs
// (Maestro's Artifact.Type.DYNAMIC_OUTPUT).
const DynamicOutputKey = "maestro_dynamic_output"

// MaxDynamicOutputs bounds the signal outputs of one dynamic output
// artifact.
const MaxDynamicOutputs = 20

// ParseDynamicOutput reads a maestro_dynamic_output artifact, Maestro's
// DynamicOutputArtifact:
//
//	{"type": "DYNAMIC_OUTPUT", "signal_outputs": [<MAP param>, ...], "info": {...}}
//
// Each signal output is a MAP param: an object whose "evaluated_result"
// (or, without one, "value": literals or {"value": v} param definitions)
// maps "name" to the signal name and other keys to its values. As Maestro's
// SignalTransformer does, a STRING value or a whole number becomes a param
// and any other value payload. "info" (a timeline note in Maestro) is
// accepted and not used. Problems are returned as "<path>: <rule>" with
// path under at (the artifact's own path), sorted; the announcements are
// usable only when there are none.
func ParseDynamicOutput(raw json.RawMessage, at string) ([]Announce, []string) {
	var errs fieldErrors
	if kind := jsonKind(raw); kind != "an object" {
		errs.addf(at, "must be an object with signal_outputs, got %s", kind)
		return nil, errs.strings()
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		errs.addf(at, "invalid JSON: %v", err)
		return nil, errs.strings()
	}
	var outs []json.RawMessage
	for k, v := range fields {
		p := pathKey(at, k)
		switch k {
		case "type":
			if s, ok := decodeString(v, p, &errs); ok && s != "DYNAMIC_OUTPUT" {
				errs.addf(p, "must be DYNAMIC_OUTPUT, got %q", clip(s))
			}
		case "info":
		case "signal_outputs":
			if isNull(v) {
				continue
			}
			if kind := jsonKind(v); kind != "an array" {
				errs.addf(p, "must be an array of MAP params, got %s", kind)
				continue
			}
			if err := json.Unmarshal(v, &outs); err != nil {
				errs.addf(p, "invalid JSON: %v", err)
				continue
			}
			if len(outs) > MaxDynamicOutputs {
				errs.addf(p, "must have at most %d signal outputs, got %d", MaxDynamicOutputs, len(outs))
				outs = nil
			}
		default:
			errs.add(p, "unknown field (want signal_outputs, info, type)")
		}
	}
	var anns []Announce
	for i, o := range outs {
		p := pathKey(at, "signal_outputs") + "[" + strconv.Itoa(i) + "]"
		if a, ok := dynamicOutput(o, p, &errs); ok {
			anns = append(anns, a)
		}
	}
	if len(errs) > 0 {
		return nil, errs.strings()
	}
	return anns, nil
}

// dynamicOutput reads one signal output, a MAP param, at path p.
func dynamicOutput(raw json.RawMessage, p string, errs *fieldErrors) (Announce, bool) {
	n := len(*errs)
	var param map[string]json.RawMessage
	if jsonKind(raw) != "an object" || json.Unmarshal(raw, &param) != nil {
		errs.addf(p, "must be a MAP param (an object with evaluated_result or value), got %s", jsonKind(raw))
		return Announce{}, false
	}
	if t, ok := param["type"]; ok {
		if s, ok := decodeString(t, p+".type", errs); ok && s != "MAP" {
			errs.addf(p+".type", "must be MAP, got %q", clip(s))
		}
	}
	values, from := param["evaluated_result"], "evaluated_result"
	if values == nil || isNull(values) {
		values, from = param["value"], "value"
	}
	if values == nil || isNull(values) {
		errs.add(p, "needs evaluated_result or value")
		return Announce{}, false
	}
	vp := p + "." + from
	var entries map[string]json.RawMessage
	if jsonKind(values) != "an object" || json.Unmarshal(values, &entries) != nil {
		errs.addf(vp, "must be an object with name, got %s", jsonKind(values))
		return Announce{}, false
	}
	a := Announce{Params: map[string]any{}}
	for k, v := range entries {
		ep := pathKey(vp, k)
		if from == "value" && jsonKind(v) == "an object" {
			// A param definition: {"value": v, "type": ...}.
			var def map[string]json.RawMessage
			if json.Unmarshal(v, &def) == nil && def["value"] != nil {
				v, ep = def["value"], ep+".value"
			}
		}
		if k == keyName {
			a.Name, _ = decodeString(v, ep, errs)
			continue
		}
		switch jsonKind(v) {
		case "a string":
			if s, ok := decodeString(v, ep, errs); ok {
				a.Params[k] = s
			}
			continue
		case "a number":
			if l, ok := jsonnum.Long(string(v)); ok {
				a.Params[k] = l
				continue
			}
		}
		val, err := decodeAny(v)
		if err != nil {
			errs.addf(ep, "invalid JSON: %v", err)
			continue
		}
		if a.Payload == nil {
			a.Payload = map[string]any{}
		}
		a.Payload[k] = val
	}
	for _, e := range a.validate() {
		// Paths of the announcement (name, params.k, params["k"]) are
		// paths of the MAP's entries.
		path := vp
		switch {
		case e.path == keyName:
			if errs.has(pathKey(vp, keyName)) {
				continue // not a string: said already
			}
			path = pathKey(vp, keyName)
		case strings.HasPrefix(e.path, keyParams+"."):
			path = vp + e.path[len(keyParams):]
		case strings.HasPrefix(e.path, keyParams+"["):
			path = vp + e.path[len(keyParams):]
		}
		errs.add(path, e.msg)
	}
	if b, err := json.Marshal(a.Payload); err == nil && len(b) > maxPayloadBytes {
		errs.addf(vp, "the values other than params are %d bytes of JSON, more than %d", len(b), maxPayloadBytes)
	}
	return a, len(*errs) == n
}

// maxPayloadBytes bounds the payload of one dynamic signal output.
const maxPayloadBytes = 8 << 10
