package signals

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// s3Body builds a one-record notification as S3 sends it.
func s3Body(bucket, key, etag, event string) string {
	return `{"Records":[{"eventVersion":"2.1","eventSource":"aws:s3","awsRegion":"us-east-1",
		"eventTime":"2026-01-05T00:00:01.250Z","eventName":"` + event + `",
		"s3":{"s3SchemaVersion":"1.0","configurationId":"signals",
		"bucket":{"name":"` + bucket + `","arn":"arn:aws:s3:::` + bucket + `"},
		"object":{"key":"` + key + `","size":1024,"eTag":"` + etag + `","sequencer":"0055AED6DCD90281E5"}}}]}`
}

func TestParseS3Notification(t *testing.T) {
	at := time.Date(2026, 1, 5, 0, 0, 1, 250_000_000, time.UTC)
	tests := []struct {
		name string
		body string
		want []S3Object
		err  string
	}{
		{
			name: "object created",
			body: s3Body("lake", "events/dt%3D20260105/hour%3D00/part-0", "0123abcd", "ObjectCreated:Put"),
			want: []S3Object{{Bucket: "lake", Key: "events/dt=20260105/hour=00/part-0", Size: 1024, ETag: "0123abcd", EventName: "ObjectCreated:Put", EventTime: at}},
		},
		{
			name: "plus is a space",
			body: s3Body("lake", "my+dir/a%2Bb+c.csv", "e", "ObjectCreated:Put"),
			want: []S3Object{{Bucket: "lake", Key: "my dir/a+b c.csv", Size: 1024, ETag: "e", EventName: "ObjectCreated:Put", EventTime: at}},
		},
		{
			name: "removal without size and etag",
			body: `{"Records":[{"eventSource":"aws:s3","eventTime":"2026-01-05T00:00:01Z","eventName":"ObjectRemoved:Delete",
				"s3":{"bucket":{"name":"lake"},"object":{"key":"a/b","sequencer":"1"}}}]}`,
			want: []S3Object{{Bucket: "lake", Key: "a/b", EventName: "ObjectRemoved:Delete", EventTime: at.Truncate(time.Second)}},
		},
		{
			name: "two records",
			body: `{"Records":[` +
				`{"eventTime":"2026-01-05T00:00:01Z","eventName":"ObjectCreated:Put","s3":{"bucket":{"name":"b"},"object":{"key":"k1","size":1}}},` +
				`{"eventTime":"2026-01-05T00:00:01Z","eventName":"ObjectCreated:Copy","s3":{"bucket":{"name":"b"},"object":{"key":"k2","size":2}}}]}`,
			want: []S3Object{
				{Bucket: "b", Key: "k1", Size: 1, EventName: "ObjectCreated:Put", EventTime: at.Truncate(time.Second)},
				{Bucket: "b", Key: "k2", Size: 2, EventName: "ObjectCreated:Copy", EventTime: at.Truncate(time.Second)},
			},
		},
		{
			name: "test event",
			body: `{"Service":"Amazon S3","Event":"s3:TestEvent","Time":"2026-01-05T00:00:00.000Z","Bucket":"lake","RequestId":"R","HostId":"H"}`,
		},
		{name: "empty records", body: `{"Records":[]}`, want: []S3Object{}},
		{name: "not JSON", body: `nope`, err: "s3 notification: invalid character"},
		{name: "something else", body: `{"name":"a"}`, err: "s3 notification: no Records and not an s3:TestEvent"},
		{name: "other event source", body: `{"Records":[{"eventSource":"aws:sqs"}]}`, err: `s3 notification: Records[0]: eventSource is "aws:sqs", not aws:s3`},
		{name: "no bucket", body: `{"Records":[{"eventName":"x","eventTime":"2026-01-05T00:00:01Z","s3":{"object":{"key":"k"}}}]}`, err: "Records[0]: s3.bucket.name is required"},
		{name: "no key", body: `{"Records":[{"eventName":"x","eventTime":"2026-01-05T00:00:01Z","s3":{"bucket":{"name":"b"}}}]}`, err: "Records[0]: s3.object.key is required"},
		{name: "no event name", body: `{"Records":[{"eventTime":"2026-01-05T00:00:01Z","s3":{"bucket":{"name":"b"},"object":{"key":"k"}}}]}`, err: "Records[0]: eventName is required"},
		{name: "bad time", body: `{"Records":[{"eventName":"x","eventTime":"yesterday","s3":{"bucket":{"name":"b"},"object":{"key":"k"}}}]}`, err: "Records[0]: eventTime: parsing time"},
		{name: "bad escape", body: s3Body("b", "a%zz", "e", "ObjectCreated:Put"), err: `Records[0]: s3.object.key "a%zz": invalid URL escape`},
		{name: "fractional size", body: `{"Records":[{"s3":{"object":{"size":1.5}}}]}`, err: "s3 notification: json: cannot unmarshal number 1.5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseS3Notification([]byte(tt.body))
			if !parsed(t, got, err, tt.err) {
				return
			}
			require.Len(t, got, len(tt.want))
			for i := range got {
				assert.True(t, tt.want[i].EventTime.Equal(got[i].EventTime), "event time %v", got[i].EventTime)
				got[i].EventTime = tt.want[i].EventTime
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestFromS3Name(t *testing.T) {
	rules := []Rule{
		{Bucket: "lake", Prefix: "raw/", Suffix: ".csv", Name: "lake-raw-csv"},
		{Prefix: "audit/", Name: "audit"},
		{Bucket: "lake", Prefix: "tmp/"}, // keeps the default name, stops later rules
		{Prefix: "tmp/", Name: "never"},
	}
	tests := []struct {
		bucket, key string
		name        string
		partitions  map[string]any
	}{
		{"lake", "events/dt=20260105/hour=00/part-0", "s3://lake/events", map[string]any{"dt": "20260105", "hour": "00"}},
		{"lake", "a/b/events/dt=20260105/x/hour=00/part-0", "s3://lake/a/b/events", map[string]any{"dt": "20260105", "hour": "00"}},
		{"lake", "dt=20260105/part-0", "s3://lake", map[string]any{"dt": "20260105"}},
		{"lake", "a/b/file.csv", "s3://lake/a/b", nil},
		{"lake", "file.csv", "s3://lake", nil},
		{"lake", "events/file=1.csv", "s3://lake/events", nil},
		{"lake", "events/dt=1/", "s3://lake/events", map[string]any{"dt": "1"}},
		{"lake", "events/=x/y", "s3://lake/events/=x", nil},
		{"lake", "events/dt=/y", "s3://lake/events", map[string]any{"dt": ""}},
		{"lake", "events/dt=1/dt=2/y", "s3://lake/events", map[string]any{"dt": "1"}},
		{"lake", "events/a=b=c/y", "s3://lake/events", map[string]any{"a": "b=c"}},
		{"lake", "my dir/ts=2026-01-05 00%3A00%3A00/p", "s3://lake/my dir", map[string]any{"ts": "2026-01-05 00:00:00"}},
		{"lake", "t/v=100%/p", "s3://lake/t", map[string]any{"v": "100%"}},
		{"lake", "t/size=9/etag=x/p", "s3://lake/t", nil},
		{"lake", "raw/dt=1/x.csv", "lake-raw-csv", map[string]any{"dt": "1"}},
		{"lake", "raw/dt=1/x.json", "s3://lake/raw", map[string]any{"dt": "1"}},
		{"other", "raw/x.csv", "s3://other/raw", nil},
		{"other", "audit/dt=1/x", "audit", map[string]any{"dt": "1"}},
		{"lake", "tmp/x", "s3://lake/tmp", nil},
		{"other", "tmp/x", "never", nil},
	}
	for _, tt := range tests {
		o := S3Object{Bucket: tt.bucket, Key: tt.key, Size: 3, ETag: `"abc"`, EventName: "ObjectCreated:Put",
			EventTime: time.Date(2026, 1, 5, 1, 2, 3, 4_000_000, time.FixedZone("x", 3600))}
		a := FromS3(o, rules)
		assert.Equal(t, tt.name, a.Name, tt.key)
		want := map[string]any{"bucket": tt.bucket, "key": tt.key, "size": int64(3), "etag": "abc",
			"event_name": "ObjectCreated:Put", "event_time": "2026-01-05T00:02:03.004Z"}
		for k, v := range tt.partitions {
			want[k] = v
		}
		assert.Equal(t, want, a.Params, tt.key)
		assert.Equal(t, o.EventTime.UnixMilli(), a.RequestTime)
		assert.Empty(t, a.Validate(), tt.key)
	}
}

func TestFromS3Notification(t *testing.T) {
	objs, err := ParseS3Notification([]byte(s3Body("lake", "events/dt=20260105/hour=00/part-0", `\"9b2cf535f27731c974343645a3985328\"`, "ObjectCreated:Put")))
	require.NoError(t, err)
	require.Len(t, objs, 1)
	a := FromS3(objs[0], nil)
	assert.Equal(t, "s3://lake/events", a.Name)
	assert.Equal(t, map[string]any{
		"bucket": "lake", "key": "events/dt=20260105/hour=00/part-0", "size": int64(1024),
		"etag": "9b2cf535f27731c974343645a3985328", "event_name": "ObjectCreated:Put",
		"event_time": "2026-01-05T00:00:01.25Z", "dt": "20260105", "hour": "00",
	}, a.Params)
	assert.Equal(t, int64(1767571201250), a.RequestTime)
	assert.Empty(t, a.Validate())

	// A removal has no etag param.
	del := FromS3(S3Object{Bucket: "lake", Key: "k", EventName: "ObjectRemoved:Delete"}, nil)
	assert.Equal(t, map[string]any{"bucket": "lake", "key": "k", "size": int64(0), "event_name": "ObjectRemoved:Delete"}, del.Params)
	assert.Zero(t, del.RequestTime)

	// A key long enough makes a name Validate rejects.
	longKey := strings.Repeat("d/", 300) + "f"
	assert.Equal(t, []string{"name: must be at most 512 characters, got 609"}, FromS3(S3Object{Bucket: "lake", Key: longKey, EventName: "x"}, nil).Validate())
}

func TestFromS3RequestID(t *testing.T) {
	at := time.Date(2026, 1, 5, 0, 0, 1, 0, time.UTC)
	o := S3Object{Bucket: "lake", Key: "events/dt=1/p", Size: 1, ETag: "e", EventName: "ObjectCreated:Put", EventTime: at}
	id := FromS3(o, nil).RequestID
	require.NotEmpty(t, id)

	// A redelivery, or the same event with the etag quoted or in another
	// zone, announces with the same id; a rule does not change it.
	same := o
	same.ETag = `"e"`
	same.EventTime = at.In(time.FixedZone("y", -7200))
	assert.Equal(t, id, FromS3(same, []Rule{{Name: "x"}}).RequestID)

	vary := []func(*S3Object){
		func(o *S3Object) { o.Bucket = "lake2" },
		func(o *S3Object) { o.Key = "events/dt=2/p" },
		func(o *S3Object) { o.ETag = "f" },
		func(o *S3Object) { o.EventName = "ObjectCreated:Copy" },
		func(o *S3Object) { o.EventTime = at.Add(time.Millisecond) },
	}
	seen := map[string]bool{id: true}
	for i, f := range vary {
		v := o
		f(&v)
		got := FromS3(v, nil).RequestID
		assert.False(t, seen[got], "variation %d repeats an id", i)
		seen[got] = true
	}
	// Different from a trigger id over similar text: namespaces differ.
	assert.NotEqual(t, id, TriggerRequestID("lake", 0, nil, "e"))
}
