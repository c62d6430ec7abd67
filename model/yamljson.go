package model

// YAMLToJSON converts a YAML document to JSON, keeping the order of mapping
// keys, as ParseDefinitionYAML reads it: for the other documents the API
// takes as YAML (job templates).
func YAMLToJSON(data []byte) ([]byte, error) { return yamlToJSON(data) }
