package signals

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
)

// S3Object is one object event of an S3 event notification.
type S3Object struct {
	// Bucket is the bucket name.
	Bucket string
	// Key is the object key, URL-decoded.
	Key string
	// Size is the object size in bytes; 0 for removals, which carry none.
	Size int64
	// ETag is the entity tag as S3 sent it; empty for removals.
	ETag string
	// EventName is the event type without the "s3:" prefix, as S3 sends it
	// (e.g. "ObjectCreated:Put", "ObjectRemoved:Delete").
	EventName string
	// EventTime is when S3 recorded the event.
	EventTime time.Time
}

// s3Notification is the JSON of an S3 event notification, or of the test
// event S3 sends when notifications are configured.
type s3Notification struct {
	Records []s3Record `json:"Records"`
	Event   string     `json:"Event"`
}

type s3Record struct {
	EventSource string `json:"eventSource"`
	EventName   string `json:"eventName"`
	EventTime   string `json:"eventTime"`
	S3          struct {
		Bucket struct {
			Name string `json:"name"`
		} `json:"bucket"`
		Object struct {
			Key  string `json:"key"`
			Size int64  `json:"size"`
			ETag string `json:"eTag"`
		} `json:"object"`
	} `json:"s3"`
}

// s3TestEvent is the Event of the message S3 sends to check a destination.
const s3TestEvent = "s3:TestEvent"

// ParseS3Notification reads the S3 event notification an SQS queue receives:
//
//	{"Records": [{"eventSource": "aws:s3", "eventName": "ObjectCreated:Put",
//	  "eventTime": "2026-01-05T00:00:00.000Z", "s3": {"bucket": {"name": "lake"},
//	  "object": {"key": "events/dt%3D20260105/part+0", "size": 12, "eTag": "..."}}}]}
//
// Keys arrive URL-encoded with '+' for a space and are decoded. The
// "s3:TestEvent" message gives no objects and no error. A record without a
// bucket, key, event name or a valid event time fails the whole message.
func ParseS3Notification(body []byte) ([]S3Object, error) {
	var n s3Notification
	if err := json.Unmarshal(body, &n); err != nil {
		return nil, fmt.Errorf("s3 notification: %w", err)
	}
	if n.Records == nil {
		if n.Event == s3TestEvent {
			return nil, nil
		}
		return nil, errors.New("s3 notification: no Records and not an s3:TestEvent")
	}
	out := make([]S3Object, 0, len(n.Records))
	for i, r := range n.Records {
		o, err := r.object()
		if err != nil {
			return nil, fmt.Errorf("s3 notification: Records[%d]: %w", i, err)
		}
		out = append(out, o)
	}
	return out, nil
}

// object checks a record and converts it.
func (r *s3Record) object() (S3Object, error) {
	if r.EventSource != "" && r.EventSource != "aws:s3" {
		return S3Object{}, fmt.Errorf("eventSource is %q, not aws:s3", r.EventSource)
	}
	if r.S3.Bucket.Name == "" {
		return S3Object{}, errors.New("s3.bucket.name is required")
	}
	if r.S3.Object.Key == "" {
		return S3Object{}, errors.New("s3.object.key is required")
	}
	if r.EventName == "" {
		return S3Object{}, errors.New("eventName is required")
	}
	key, err := url.QueryUnescape(r.S3.Object.Key)
	if err != nil {
		return S3Object{}, fmt.Errorf("s3.object.key %q: %w", r.S3.Object.Key, err)
	}
	at, err := time.Parse(time.RFC3339, r.EventTime)
	if err != nil {
		return S3Object{}, fmt.Errorf("eventTime: %w", err)
	}
	return S3Object{
		Bucket:    r.S3.Bucket.Name,
		Key:       key,
		Size:      r.S3.Object.Size,
		ETag:      r.S3.Object.ETag,
		EventName: r.EventName,
		EventTime: at,
	}, nil
}

// Rule maps S3 objects to a signal name other than the default.
type Rule struct {
	// Bucket is the bucket the rule applies to; empty for any.
	Bucket string
	// Prefix and Suffix bound the keys the rule applies to; empty for any.
	Prefix, Suffix string
	// Name is the signal name to announce; empty keeps the default name
	// (a rule that only stops later rules from applying).
	Name string
}

// matches reports whether the rule applies to o.
func (r Rule) matches(o S3Object) bool {
	return (r.Bucket == "" || r.Bucket == o.Bucket) &&
		strings.HasPrefix(o.Key, r.Prefix) && strings.HasSuffix(o.Key, r.Suffix)
}

// The params FromS3 sets on every S3 signal.
const (
	S3ParamBucket    = "bucket"
	S3ParamKey       = "key"
	S3ParamSize      = "size"
	S3ParamETag      = "etag"
	S3ParamEventName = "event_name"
	S3ParamEventTime = "event_time"
)

// FromS3 turns an S3 object event into an announcement.
//
// The name is that of the first rule whose bucket (empty for any), prefix and
// suffix fit, else the data-lake default: "s3://<bucket>/<the key's
// directories before its first Hive-style k=v directory>", or every directory
// when there is none, without a trailing slash; so
// events/dt=20260105/hour=00/part-0 in bucket lake is "s3://lake/events" and
// a/b/file.csv is "s3://lake/a/b".
//
// The params are bucket, key, size (LONG), etag (quotes stripped; omitted
// when empty), event_name, event_time (RFC 3339 in UTC; omitted when zero)
// and, as STRINGs, every k=v directory of the key (the file name is not a
// partition). Partition names and values are unescaped as Hive escapes them
// (%3A for ':'); the first of a repeated partition name wins, and partitions
// named like a fixed param are left out.
//
// The request id is derived from bucket, key, etag, event name and event
// time, so a redelivered notification announces once; the request time is
// the event time. The caller validates the result (Announce.Validate): a long
// key can make a name beyond MaxNameLength.
func FromS3(o S3Object, rules []Rule) Announce {
	dirs := strings.Split(o.Key, "/")
	dirs = dirs[:len(dirs)-1] // the last segment is the file name
	params := make(map[string]any)
	base := len(dirs)
	for i, d := range dirs {
		k, v, ok := partition(d)
		if !ok {
			continue
		}
		if i < base {
			base = i
		}
		if _, seen := params[k]; !seen && !fixedS3Param(k) {
			params[k] = v
		}
	}
	name := "s3://" + o.Bucket
	if base > 0 {
		name += "/" + strings.Join(dirs[:base], "/")
	}
	for _, r := range rules {
		if r.matches(o) {
			if r.Name != "" {
				name = r.Name
			}
			break
		}
	}

	params[S3ParamBucket] = o.Bucket
	params[S3ParamKey] = o.Key
	params[S3ParamSize] = o.Size
	if etag := strings.Trim(o.ETag, `"`); etag != "" {
		params[S3ParamETag] = etag
	}
	params[S3ParamEventName] = o.EventName
	var requestTime int64
	if !o.EventTime.IsZero() {
		params[S3ParamEventTime] = o.EventTime.UTC().Format(time.RFC3339Nano)
		requestTime = max(o.EventTime.UnixMilli(), 0)
	}
	return Announce{
		Name:        name,
		Params:      params,
		RequestID:   s3RequestID(o),
		RequestTime: requestTime,
	}
}

// fixedS3Param reports whether k is one of the params FromS3 always sets.
func fixedS3Param(k string) bool {
	switch k {
	case S3ParamBucket, S3ParamKey, S3ParamSize, S3ParamETag, S3ParamEventName, S3ParamEventTime:
		return true
	}
	return false
}

// partition splits a Hive-style "k=v" directory name, unescaping both parts.
func partition(seg string) (k, v string, ok bool) {
	k, v, ok = strings.Cut(seg, "=")
	if !ok || k == "" {
		return "", "", false
	}
	return hiveUnescape(k), hiveUnescape(v), true
}

// hiveUnescape undoes Hive's %XX escaping of partition names and values,
// leaving s as it is when it holds a '%' that is not an escape.
func hiveUnescape(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	u, err := url.PathUnescape(s)
	if err != nil {
		return s
	}
	return u
}

// s3RequestID derives an announcement's request id from the notification.
func s3RequestID(o S3Object) string {
	b := appendField(nil, o.Bucket)
	b = appendField(b, o.Key)
	b = appendField(b, strings.Trim(o.ETag, `"`))
	b = appendField(b, o.EventName)
	b = appendField(b, o.EventTime.UTC().Format(time.RFC3339Nano))
	return uuid.NewSHA1(namespace(s3NamespaceName), b).String()
}
