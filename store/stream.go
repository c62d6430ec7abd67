package store

import (
	"encoding/json"
	"fmt"

	"github.com/aws/aws-lambda-go/events"
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
	var msgs []Message
	if err := json.Unmarshal([]byte(av.String()), &msgs); err != nil {
		return nil, fmt.Errorf("store: decode outbox of %s/%s: %w", imageString(image, attrPK), imageString(image, attrSK), err)
	}
	return msgs, nil
}

func imageString(image map[string]events.DynamoDBAttributeValue, name string) string {
	if av, ok := image[name]; ok && av.DataType() == events.DataTypeString {
		return av.String()
	}
	return ""
}
