package store

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/maestro-serverless/maestro/store/internal/layout"
)

// OutboxAttribute is the attribute whose presence marks a stream record the
// router must act on; the stream event source filters on it.
const OutboxAttribute = attrOutbox

// OutboxFromImage decodes the outbox messages of a stream record's new image.
// It returns nil when the image carries none.
func OutboxFromImage(image map[string]events.DynamoDBAttributeValue) ([]Message, error) {
	av, ok := image[attrOutbox]
	if !ok || av.DataType() != events.DataTypeString {
		return nil, nil
	}
	if av.String() == endOutbox {
		ref, err := attemptRefOf(imageString(image, attrPK), imageString(image, attrSK))
		if err != nil {
			return nil, fmt.Errorf("store: decode outbox: %w", err)
		}
		return []Message{FinishedWakeMessage(ref)}, nil
	}
	raw, err := decodeOutbox(av.String())
	if err != nil {
		return nil, fmt.Errorf("store: decode outbox of %s/%s: %w", imageString(image, attrPK), imageString(image, attrSK), err)
	}
	var msgs []Message
	if err := json.Unmarshal(raw, &msgs); err != nil {
		return nil, fmt.Errorf("store: decode outbox of %s/%s: %w", imageString(image, attrPK), imageString(image, attrSK), err)
	}
	return msgs, nil
}

// endOutbox is the outbox of an attempt item whose worker wrote its end
// (FinishAttempt): the wake that names the attempt, which its keys say.
// Written out it would be a fifth of a small item.
const endOutbox = "end"

// attemptRefOf parses the keys of a step attempt item.
func attemptRefOf(pk, sk string) (AttemptRef, error) {
	wf, inst, err := layout.ParseRunPK(pk)
	if err != nil {
		return AttemptRef{}, err
	}
	run, step, attempt, err := layout.ParseAttemptSK(sk)
	if err != nil {
		return AttemptRef{}, err
	}
	return AttemptRef{WorkflowID: wf, InstanceID: inst, RunID: run, StepID: step, Attempt: attempt}, nil
}

func imageString(image map[string]events.DynamoDBAttributeValue, name string) string {
	if av, ok := image[name]; ok && av.DataType() == events.DataTypeString {
		return av.String()
	}
	return ""
}

// A run item's outbox is rewritten with every commit and billed with the
// item: stored compressed (codec.go) when that is smaller, in base64 behind
// a prefix naming the encoding (a string still, which the stream filter
// matches). Items written before the dictionary have gzip's prefix.
const (
	dictOutboxPrefix = encDict1 + ":"
	gzOutboxPrefix   = encGzip + ":"
)

// encodeOutbox returns the outbox attribute's value for msgs.
func (s *base) encodeOutbox(msgs []Message) (string, error) {
	b, err := encodeOutboxRaw(msgs)
	if err != nil {
		return "", err
	}
	z, enc, err := s.codec.compress(b)
	if err != nil {
		return "", err
	}
	if enc == encRaw {
		return string(b), nil
	}
	if v := dictOutboxPrefix + base64.StdEncoding.EncodeToString(z); len(v) < len(b) {
		return v, nil
	}
	return string(b), nil
}

func encodeOutboxRaw(msgs []Message) ([]byte, error) {
	b, err := json.Marshal(msgs)
	if err != nil {
		return nil, fmt.Errorf("store: outbox: %w", err)
	}
	return b, nil
}

// decodeOutbox returns the JSON of an outbox attribute's value v.
func decodeOutbox(v string) ([]byte, error) {
	for _, enc := range []string{encDict1, encGzip} {
		if b64, ok := strings.CutPrefix(v, enc+":"); ok {
			z, err := base64.StdEncoding.DecodeString(b64)
			if err != nil {
				return nil, fmt.Errorf("base64: %w", err)
			}
			return decode(enc, z)
		}
	}
	return []byte(v), nil
}
