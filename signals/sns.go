package signals

import (
	"encoding/json"
	"fmt"
)

// ParseSNSMessage returns the message an SQS body from an SNS subscription
// carries. With raw message delivery the body is the message itself and is
// returned as it is; otherwise it is the SNS envelope
// {"Type": "Notification", "MessageId", "TopicArn", "Message": "...", ...},
// recognised by its Type, Message and TopicArn keys, and the Message string
// is returned. An envelope of another Type, or whose Message is not a
// string, is an error. The caller parses the message (ParseAnnounce,
// ParseS3Notification), which reports a malformed raw body.
func ParseSNSMessage(body []byte) ([]byte, error) {
	var env map[string]json.RawMessage
	if err := json.Unmarshal(body, &env); err != nil || env == nil {
		return body, nil // not an object, so not an envelope
	}
	typ, hasType := env["Type"]
	msg, hasMessage := env["Message"]
	_, hasTopic := env["TopicArn"]
	if !hasType || !hasMessage || !hasTopic {
		return body, nil
	}
	var t string
	if err := json.Unmarshal(typ, &t); err != nil {
		return nil, fmt.Errorf("sns envelope: Type: %w", err)
	}
	if t != "Notification" {
		return nil, fmt.Errorf("sns envelope: Type is %q, want \"Notification\"", t)
	}
	var m string
	if err := json.Unmarshal(msg, &m); err != nil {
		return nil, fmt.Errorf("sns envelope: Message: %w", err)
	}
	return []byte(m), nil
}
