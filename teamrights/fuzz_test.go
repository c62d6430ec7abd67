package teamrights

import (
	"reflect"
	"testing"
)

// FuzzParse: Parse never panics, and a configuration it accepts is valid
// and reads back the same from its JSON.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"data": {"task_role_arn": "arn:aws:iam::123456789012:role/data", "images": ["docker.io/library/python"], "lambdas": ["etl-*"]}}`,
		`{"ml": {"job_role_arn": "arn:aws-cn:iam::123456789012:role/a/b", "lambdas": ["arn:aws:lambda:us-east-1:123456789012:function:*"]}}`,
		`{}`, `null`, `{"a": null}`, `{"a": {"images": [""]}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		c, err := Parse(text)
		if err != nil {
			return
		}
		if p := c.Validate(); len(p) > 0 {
			t.Fatalf("Parse accepted %q with problems %q", text, p)
		}
		out, err := c.JSON()
		if err != nil {
			t.Fatal(err)
		}
		again, err := Parse(out)
		if err != nil || !reflect.DeepEqual(normalize(again), normalize(c)) {
			t.Fatalf("%q: JSON %s reads back %+v, %v", text, out, again, err)
		}
	})
}

// normalize makes empty lists nil (they encode as nothing).
func normalize(c Config) Config {
	out := Config{}
	for k, r := range c {
		if len(r.Images) == 0 {
			r.Images = nil
		}
		if len(r.Lambdas) == 0 {
			r.Lambdas = nil
		}
		out[k] = r
	}
	return out
}
