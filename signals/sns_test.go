package signals

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSNSMessage(t *testing.T) {
	announce := `{"name":"signal_a","params":{"foo":"bat"}}`
	tests := []struct {
		name string
		body string
		want string
		err  string
	}{
		{name: "raw", body: announce, want: announce},
		{
			name: "envelope",
			body: `{"Type":"Notification","MessageId":"m-1","TopicArn":"arn:aws:sns:us-east-1:000000000000:signals",` +
				`"Message":"{\"name\":\"signal_a\",\"params\":{\"foo\":\"bat\"}}","Timestamp":"2026-01-05T00:00:00.000Z",` +
				`"SignatureVersion":"1","Signature":"x","SigningCertURL":"u","UnsubscribeURL":"u"}`,
			want: announce,
		},
		{name: "raw with a Type key only", body: `{"name":"a","Type":"t","Message":"m"}`, want: `{"name":"a","Type":"t","Message":"m"}`},
		{name: "raw not JSON", body: `not json`, want: `not json`},
		{name: "raw array", body: `[1]`, want: `[1]`},
		{name: "raw null", body: `null`, want: `null`},
		{
			name: "subscription confirmation",
			body: `{"Type":"SubscriptionConfirmation","TopicArn":"arn","Message":"You have chosen to subscribe"}`,
			err:  `sns envelope: Type is "SubscriptionConfirmation", want "Notification"`,
		},
		{name: "message not a string", body: `{"Type":"Notification","TopicArn":"arn","Message":{"name":"a"}}`, err: "sns envelope: Message: json: cannot unmarshal"},
		{name: "type not a string", body: `{"Type":1,"TopicArn":"arn","Message":"m"}`, err: "sns envelope: Type: json: cannot unmarshal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSNSMessage([]byte(tt.body))
			if !parsed(t, got, err, tt.err) {
				return
			}
			assert.Equal(t, tt.want, string(got))
		})
	}
}

// TestSNSToAnnounce: an enveloped S3 notification and an enveloped announce
// both reach their parsers.
func TestSNSToAnnounce(t *testing.T) {
	msg, err := ParseSNSMessage([]byte(`{"Type":"Notification","TopicArn":"arn","Message":"{\"name\":\"db/test/table1\",\"params\":{\"vtts_utc_dateint\":\"20500101\"},\"request_id\":\"r1\"}"}`))
	require.NoError(t, err)
	a, errs := ParseAnnounce(msg)
	require.Empty(t, errs)
	assert.Equal(t, Announce{Name: "db/test/table1", Params: map[string]any{"vtts_utc_dateint": "20500101"}, RequestID: "r1"}, a)
}
