package model

import (
	"fmt"
	pathpkg "path"
	"strings"
)

// Formats of an items_from object.
const (
	ItemsJSONL = "jsonl" // one JSON object a line
	ItemsCSV   = "csv"   // a header line naming the fields, then one row an item
	ItemsJSON  = "json"  // one JSON array of objects
)

// ItemsFrom, on a foreach step, takes its iterations from an S3 object
// instead of loop_params (Step Functions' Distributed Map ItemReader): one
// iteration an item, the item's fields its loop params.
type ItemsFrom struct {
	// S3URI is s3://bucket/key; ${name} in it is replaced by the step's
	// param (or the workflow's) of that name when the loop starts.
	S3URI string
	// Format is jsonl, csv or json; empty, it follows the key's ending
	// (.jsonl/.ndjson, .csv, .json).
	Format string
	// Fields, when given, declares the items' fields and their types: every
	// item must have them (more are allowed), and the loop body's
	// expressions may name them. FieldOrder is their definition order.
	Fields     map[string]ParamType
	FieldOrder []string
}

// ItemsFormat returns the object's format: Format, or the one the key's
// ending names; "" when neither says.
func (f *ItemsFrom) ItemsFormat(uri string) string {
	if f.Format != "" {
		return f.Format
	}
	switch strings.ToLower(pathpkg.Ext(uri)) {
	case ".jsonl", ".ndjson":
		return ItemsJSONL
	case ".csv":
		return ItemsCSV
	case ".json":
		return ItemsJSON
	}
	return ""
}

// ParseS3URI splits s3://bucket/key into its bucket and key.
func ParseS3URI(uri string) (bucket, key string, err error) {
	rest, ok := strings.CutPrefix(uri, "s3://")
	if !ok {
		return "", "", fmt.Errorf("%q is not an s3://bucket/key URI", uri)
	}
	bucket, key, _ = strings.Cut(rest, "/")
	if bucket == "" || key == "" {
		return "", "", fmt.Errorf("%q names no bucket and key (want s3://bucket/key)", uri)
	}
	return bucket, key, nil
}
