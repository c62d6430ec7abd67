package model

import (
	"fmt"
	"math"
	"strconv"
	"time"

	yaml "go.yaml.in/yaml/v2"
)

// ParseDefinitionYAML decodes a workflow definition written as a YAML document
// of the same structure as the JSON form (Maestro's YAML DSL is translated to
// that structure by package definition/dsl first). The YAML is
// turned into JSON and decoded by ParseDefinition, so errors carry the same
// paths.
//
// The conversion uses the YAML parser behind sigs.k8s.io/yaml
// (go.yaml.in/yaml/v2) with ordered mappings, because sigs.k8s.io/yaml's own
// YAMLToJSON goes through Go maps and would lose the order of params,
// successors and map literals.
func ParseDefinitionYAML(data []byte) (*Definition, error) {
	out, err := yamlToJSON(data)
	if err != nil {
		return nil, Errors{{Msg: err.Error()}}
	}
	return ParseDefinition(out)
}

// yamlToJSON converts a YAML document to JSON, keeping the order of mapping
// keys. Non-string keys are written as their YAML text; non-finite numbers are
// rejected since JSON cannot hold them.
func yamlToJSON(data []byte) ([]byte, error) {
	var doc yaml.MapSlice
	var top any
	if err := yaml.Unmarshal(data, &doc); err == nil {
		top = doc
	} else if err2 := yaml.Unmarshal(data, &top); err2 != nil {
		return nil, fmt.Errorf("invalid YAML: %w", err2)
	}
	b, err := appendYAML(nil, top)
	if err != nil {
		return nil, fmt.Errorf("convert YAML to JSON: %w", err)
	}
	return b, nil
}

// appendYAML appends the JSON form of a value decoded by go.yaml.in/yaml/v2.
func appendYAML(b []byte, v any) ([]byte, error) {
	var err error
	switch t := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case yaml.MapSlice:
		b = append(b, '{')
		for i, item := range t {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, yamlKey(item.Key))
			b = append(b, ':')
			if b, err = appendYAML(b, item.Value); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case map[any]any:
		// Only reached for documents that are not mappings at the top.
		ms := make(yaml.MapSlice, 0, len(t))
		for k, val := range t {
			ms = append(ms, yaml.MapItem{Key: k, Value: val})
		}
		return appendYAML(b, ms)
	case []any:
		b = append(b, '[')
		for i, e := range t {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendYAML(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case string:
		return appendString(b, t), nil
	case []byte:
		return appendString(b, string(t)), nil
	case bool:
		return strconv.AppendBool(b, t), nil
	case int:
		return strconv.AppendInt(b, int64(t), 10), nil
	case int64:
		return strconv.AppendInt(b, t, 10), nil
	case uint64:
		return strconv.AppendUint(b, t, 10), nil
	case float64:
		if math.IsInf(t, 0) || math.IsNaN(t) {
			return nil, fmt.Errorf("number %v cannot be written as JSON", t)
		}
		return strconv.AppendFloat(b, t, 'g', -1, 64), nil
	case time.Time:
		return appendString(b, t.Format(time.RFC3339Nano)), nil
	}
	return nil, fmt.Errorf("unsupported YAML value of type %T", v)
}

// yamlKey renders a mapping key as a JSON object key.
func yamlKey(k any) string {
	switch t := k.(type) {
	case string:
		return t
	case nil:
		return "null"
	case float64:
		return strconv.FormatFloat(t, 'g', -1, 64)
	}
	return fmt.Sprint(k)
}
