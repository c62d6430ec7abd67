package store

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"

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

// DedupIDFromImage is the FIFO deduplication id of outbox message i of a
// stream record's new image: a hash of the item's key, its version and i.
// It is stable across retries of the record, so SQS drops a resend within
// its deduplication window.
func DedupIDFromImage(image map[string]events.DynamoDBAttributeValue, i int) string {
	var v int64
	if av, ok := image[attrVersion]; ok && av.DataType() == events.DataTypeNumber {
		v, _ = strconv.ParseInt(av.Number(), 10, 64)
	}
	return dedupID(imageString(image, attrPK), imageString(image, attrSK), v, i)
}

func dedupID(pk, sk string, v int64, i int) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s|%s|%d|%d", pk, sk, v, i)
	return hex.EncodeToString(h.Sum(nil))
}
