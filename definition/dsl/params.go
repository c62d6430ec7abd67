package dsl

import (
	"math"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/maestro-serverless/maestro/model"
)

// params translates DSL params (Maestro's ParamParser) into a JSON params
// object. A key is a name with optional annotations: "!name" makes the
// value an expression, "name<type>" gives the type (long, double, boolean,
// string, map for a string map, pmap for a param map, array<elem>), and
// "name(mode)" the mode. Without a type, a literal's type follows its YAML
// value and an expression is a STRING.
func (t *translator) params(ms []member, jp jpath) *object {
	out := &object{}
	for _, m := range ms {
		name, def, ok := t.param(m, jp)
		if !ok {
			continue
		}
		if out.has(name) {
			t.failf(m.k, m.dp, "param %q is defined twice", name)
			continue
		}
		out.set(name, def)
	}
	return out
}

// paramKey is a param key's name and annotations.
type paramKey struct {
	name    string
	literal bool
	typ     model.ParamType // "" when not given
	mode    model.ParamMode // "" when not given
}

// parseParamKey reads the annotations of a param key.
func parseParamKey(key string) (paramKey, string) {
	k := paramKey{name: strings.TrimSpace(key), literal: true}
	if strings.HasPrefix(k.name, "!") {
		k.literal = false
		k.name = k.name[1:]
	}
	if open, end := strings.LastIndexByte(k.name, '('), strings.LastIndexByte(k.name, ')'); open > 0 && end > open {
		s := strings.TrimSpace(k.name[open+1 : end])
		mode, ok := model.ParseParamMode(s)
		if !ok {
			return k, "invalid param mode [" + s + "] (want constant, immutable, mutable, mutable_on_start or mutable_on_start_restart)"
		}
		k.mode = mode
		k.name = strings.TrimSpace(k.name[:open])
	}
	if open, end := strings.IndexByte(k.name, '<'), strings.LastIndexByte(k.name, '>'); open > 0 && end > open {
		s := strings.ToUpper(strings.TrimSpace(k.name[open+1 : end]))
		typ, msg := parseParamType(s)
		if msg != "" {
			return k, msg
		}
		k.typ = typ
		k.name = strings.TrimSpace(k.name[:open])
	}
	if k.name == "" {
		return k, "param name cannot be empty after parsing name [" + key + "]"
	}
	return k, ""
}

// parseParamType reads a DSL type annotation (upper-cased).
func parseParamType(s string) (model.ParamType, string) {
	if strings.HasPrefix(s, "ARRAY<") && strings.HasSuffix(s, ">") {
		switch strings.TrimSpace(s[len("ARRAY<") : len(s)-1]) {
		case "STRING":
			return model.TypeStringArray, ""
		case "LONG":
			return model.TypeLongArray, ""
		case "DOUBLE":
			return model.TypeDoubleArray, ""
		case "BOOLEAN":
			return model.TypeBooleanArray, ""
		}
		return "", "unsupported type [" + s + "]: array elements are STRING, LONG, DOUBLE or BOOLEAN"
	}
	switch s {
	case "PMAP":
		return model.TypeMap, ""
	case "MAP":
		return model.TypeStringMap, ""
	}
	if typ, ok := model.ParseParamType(s); ok {
		return typ, ""
	}
	return "", "invalid param type [" + s + "] (want string, long, double, boolean, map, pmap or array<string|long|double|boolean>)"
}

// param translates one param.
func (t *translator) param(m member, jp jpath) (string, *object, bool) {
	v := deref(m.v)
	if isNull(v) {
		t.failf(m.k, m.dp, "param value for param [%s] cannot be null", m.key)
		return "", nil, false
	}
	k, msg := parseParamKey(m.key)
	if msg != "" {
		t.failf(m.k, m.dp, "%s", msg)
		return "", nil, false
	}
	pp := jp.key(k.name)
	def := &object{}
	if !k.literal {
		if v.Kind != yaml.ScalarNode {
			t.failf(v, m.dp, "the expression of param [%s] must be a string, got %s", k.name, describe(v))
			return "", nil, false
		}
		if strings.TrimSpace(v.Value) == "" {
			t.failf(v, m.dp, "the expression of param [%s] is empty", k.name)
			return "", nil, false
		}
		if k.typ == "" {
			k.typ = model.TypeString
		}
		def.set("expression", v.Value)
	} else {
		implied, ok := t.impliedType(v, m.dp)
		if !ok {
			return "", nil, false
		}
		switch {
		case implied == "" && k.typ == "":
			k.typ = model.TypeStringArray // an empty list
		case k.typ == "":
			k.typ = implied
		case implied != "" && k.typ != implied && !(k.typ == model.TypeMap && implied == model.TypeStringMap):
			t.failf(v, m.dp, "type mismatch for param [%s]: the type given is %s but its value is a %s", k.name, k.typ, implied)
			return "", nil, false
		}
		val, ok := t.literal(v, k.typ, m.dp, pp.key("value"))
		if !ok {
			return "", nil, false
		}
		def.set("value", val)
	}
	def.set("type", string(k.typ))
	if k.mode != "" {
		def.set("mode", string(k.mode))
	}
	t.src.record(pp, m.k.Line, m.dp)
	return k.name, def, true
}

// scalarType is the param type a YAML scalar implies, "" if none.
func scalarType(n *yaml.Node) model.ParamType {
	switch n.ShortTag() {
	case "!!str", "!!timestamp":
		return model.TypeString
	case "!!int":
		return model.TypeLong
	case "!!float":
		return model.TypeDouble
	case "!!bool":
		return model.TypeBoolean
	}
	return ""
}

// impliedType derives a literal's type from its YAML value, as
// ParamParser.deriveParamType: "" for an empty list.
func (t *translator) impliedType(v *yaml.Node, dp jpath) (model.ParamType, bool) {
	switch v.Kind {
	case yaml.ScalarNode:
		if typ := scalarType(v); typ != "" {
			return typ, true
		}
		t.failf(v, dp, "invalid param value %s (YAML tag %s)", describe(v), v.ShortTag())
		return "", false
	case yaml.MappingNode:
		for i := 1; i < len(v.Content); i += 2 {
			if e := deref(v.Content[i]); e.Kind != yaml.ScalarNode || scalarType(e) != model.TypeString {
				return model.TypeMap, true
			}
		}
		if len(v.Content) == 0 {
			return model.TypeMap, true
		}
		return model.TypeStringMap, true
	case yaml.SequenceNode:
		if len(v.Content) == 0 {
			return "", true
		}
		first := deref(v.Content[0])
		if first.Kind == yaml.ScalarNode {
			switch scalarType(first) {
			case model.TypeString:
				return model.TypeStringArray, true
			case model.TypeLong:
				return model.TypeLongArray, true
			case model.TypeDouble:
				return model.TypeDoubleArray, true
			case model.TypeBoolean:
				return model.TypeBooleanArray, true
			}
		}
		t.failf(first, dp, "invalid element for an array param: %s (want strings, integers, numbers or booleans)", describe(first))
		return "", false
	}
	t.failf(v, dp, "invalid param value %s", describe(v))
	return "", false
}

// literal translates a literal value of type typ.
func (t *translator) literal(v *yaml.Node, typ model.ParamType, dp, vp jpath) (any, bool) {
	switch typ {
	case model.TypeString, model.TypeLong, model.TypeDouble, model.TypeBoolean:
		return t.scalar(v, typ, dp)
	case model.TypeStringArray, model.TypeLongArray, model.TypeDoubleArray, model.TypeBooleanArray:
		elem := map[model.ParamType]model.ParamType{
			model.TypeStringArray: model.TypeString, model.TypeLongArray: model.TypeLong,
			model.TypeDoubleArray: model.TypeDouble, model.TypeBooleanArray: model.TypeBoolean,
		}[typ]
		out := make([]any, 0, len(v.Content))
		for i, e := range v.Content {
			x, ok := t.scalar(deref(e), elem, dp.at(i))
			if !ok {
				return nil, false
			}
			out = append(out, x)
		}
		return out, true
	case model.TypeStringMap:
		out := &object{}
		for _, m := range t.members(v, dp) {
			x, ok := t.scalar(deref(m.v), model.TypeString, m.dp)
			if !ok {
				return nil, false
			}
			out.set(m.key, x)
		}
		return out, true
	case model.TypeMap:
		return t.params(t.members(v, dp), vp), true
	}
	t.failf(v, dp, "internal: no literal of type %s", typ)
	return nil, false
}

// scalar translates one scalar of a simple type; a DOUBLE takes integers too.
func (t *translator) scalar(v *yaml.Node, typ model.ParamType, dp jpath) (any, bool) {
	got := model.ParamType("")
	if v.Kind == yaml.ScalarNode {
		got = scalarType(v)
	}
	switch {
	case got == typ:
	case typ == model.TypeDouble && got == model.TypeLong:
	default:
		t.failf(v, dp, "want a %s value, got %s", strings.ToLower(string(typ)), describe(v))
		return nil, false
	}
	switch got {
	case model.TypeString:
		return v.Value, true
	case model.TypeLong:
		var x int64
		if err := v.Decode(&x); err != nil {
			t.failf(v, dp, "integer %s does not fit in 64 bits", v.Value)
			return nil, false
		}
		return number(strconv.FormatInt(x, 10)), true
	case model.TypeDouble:
		var x float64
		if err := v.Decode(&x); err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
			t.failf(v, dp, "number %s is not a finite double", v.Value)
			return nil, false
		}
		return number(strconv.FormatFloat(x, 'g', -1, 64)), true
	case model.TypeBoolean:
		var x bool
		if err := v.Decode(&x); err != nil {
			t.failf(v, dp, "invalid boolean %s", v.Value)
			return nil, false
		}
		return x, true
	}
	return nil, false
}
