package signals

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzParseS3Notification checks that parsing never panics and that every
// object parsed maps to an announcement of LONG and STRING params.
func FuzzParseS3Notification(f *testing.F) {
	f.Add([]byte(s3Body("lake", "events/dt%3D20260105/hour%3D00/part-0", "e", "ObjectCreated:Put")))
	f.Add([]byte(s3Body("lake", "a+b/%2B/x", "", "ObjectRemoved:Delete")))
	f.Add([]byte(`{"Service":"Amazon S3","Event":"s3:TestEvent"}`))
	f.Add([]byte(`{"Records":[{"s3":{"object":{"size":-1}}}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		objs, err := ParseS3Notification(body)
		if err != nil {
			if objs != nil {
				t.Fatalf("objects with an error")
			}
			return
		}
		for _, o := range objs {
			a := FromS3(o, []Rule{{Prefix: "x", Name: "rule"}})
			if a.Name != "rule" && !strings.HasPrefix(a.Name, "s3://"+o.Bucket) {
				t.Fatalf("name %q for %+v", a.Name, o)
			}
			for k, v := range a.Params {
				switch v.(type) {
				case int64, string:
				default:
					t.Fatalf("param %q is %T", k, v)
				}
			}
			if a.Params[S3ParamKey] != o.Key || a.RequestID == "" {
				t.Fatalf("announcement %+v of %+v", a, o)
			}
		}
	})
}

// FuzzParseSNSMessage checks that unwrapping never panics and that a body
// that is not an envelope comes back unchanged.
func FuzzParseSNSMessage(f *testing.F) {
	f.Add([]byte(`{"Type":"Notification","TopicArn":"arn","Message":"{\"name\":\"a\"}"}`))
	f.Add([]byte(`{"name":"a","params":{}}`))
	f.Add([]byte(`{"Type":"Notification","TopicArn":"arn","Message":1}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		msg, err := ParseSNSMessage(body)
		if err != nil {
			return
		}
		var env map[string]json.RawMessage
		if json.Unmarshal(body, &env) == nil && env["Type"] != nil && env["Message"] != nil && env["TopicArn"] != nil {
			return
		}
		if !bytes.Equal(msg, body) {
			t.Fatalf("raw body changed: %q -> %q", body, msg)
		}
	})
}
