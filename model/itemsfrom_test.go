package model

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func itemsDoc(itemsFrom, extra string) string {
	return wf(`"steps":[{"foreach":{"id":"loop",` + extra + `"items_from":` + itemsFrom +
		`,"steps":[{"step":{"id":"body","type":"NoOp","params":{"p":{"expression":"file + size","type":"STRING"}}}}]}}]`)
}

func TestItemsFromRoundTripsAndGivesTheBodyItsFields(t *testing.T) {
	doc := itemsDoc(`{"s3_uri":"s3://lake/in/${day}.csv","fields":{"size":"STRING","file":"STRING"}}`,
		`"params":{"day":{"value":"2026-11-28","type":"STRING"}},`)
	d := mustParse(t, doc)
	f := d.Workflow.Steps[0].ItemsFrom
	require.NotNil(t, f)
	assert.Equal(t, "s3://lake/in/${day}.csv", f.S3URI)
	assert.Equal(t, []string{"size", "file"}, f.FieldOrder)
	assert.Equal(t, ItemsCSV, f.ItemsFormat(f.S3URI))
	assert.Empty(t, Validate(d, ValidateOptions{Expressions: &recordingChecker{}}))
	again := mustParse(t, mustMarshal(t, d))
	assert.Equal(t, f, again.Workflow.Steps[0].ItemsFrom)
}

func TestItemsFromRules(t *testing.T) {
	tests := []struct {
		name, itemsFrom, extra, want string
	}{
		{"no uri", `{"format":"jsonl"}`, "", "items_from.s3_uri: required"},
		{"not s3", `{"s3_uri":"https://lake/in.jsonl"}`, "", `is not an s3://bucket/key URI`},
		{"no key", `{"s3_uri":"s3://lake"}`, "", `names no bucket and key`},
		{"format unknown", `{"s3_uri":"s3://lake/in","format":"parquet"}`, "", `unknown format "parquet"`},
		{"format unsaid", `{"s3_uri":"s3://lake/in.txt"}`, "", "items_from.format: required"},
		{"unknown key", `{"s3_uri":"s3://lake/in.jsonl","bucket":"x"}`, "", `unknown field "bucket" of items_from`},
		{"reserved field", `{"s3_uri":"s3://lake/in.jsonl","fields":{"loop_index":"LONG"}}`, "", `"loop_index" is a name the loop gives`},
		{"csv typed field", `{"s3_uri":"s3://lake/in.csv","fields":{"size":"LONG"}}`, "", `a CSV item's fields are STRING`},
		{"bad type", `{"s3_uri":"s3://lake/in.jsonl","fields":{"size":"NUMBER"}}`, "", `unknown param type "NUMBER"`},
		{"with loop_params", `{"s3_uri":"s3://lake/in.jsonl"}`, `"params":{"loop_params":{"type":"MAP","value":{"i":{"value":[1],"type":"LONG_ARRAY"}}}},`,
			"from loop_params or from items_from, not both"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := ParseDefinition([]byte(itemsDoc(tc.itemsFrom, tc.extra)))
			if err == nil {
				err = Validate(d, ValidateOptions{})
			}
			var errs Errors
			require.True(t, errors.As(err, &errs), "%v", err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
