package store

import (
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// MaxItemBytes is DynamoDB's limit on one item's size (400 KB), as ItemSize
// counts it.
const MaxItemBytes = 400 * 1024

// ItemSize returns a DynamoDB item's size in bytes as DynamoDB bills it:
// the sum of each attribute's name length and value size.
func ItemSize(item map[string]types.AttributeValue) int {
	n := 0
	for name, v := range item {
		n += len(name) + AttributeValueSize(v)
	}
	return n
}

// AttributeValueSize returns the billed size of one value: strings and
// binaries their length; numbers 1 byte per two significant digits plus
// one; booleans and nulls 1 byte; sets the sum of their members; lists and
// maps 3 bytes plus 1 byte and the size (and, in maps, the key) of each
// element.
func AttributeValueSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return numberSize(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberSS:
		n := 0
		for _, s := range v.Value {
			n += len(s)
		}
		return n
	case *types.AttributeValueMemberNS:
		n := 0
		for _, s := range v.Value {
			n += numberSize(s)
		}
		return n
	case *types.AttributeValueMemberBS:
		n := 0
		for _, b := range v.Value {
			n += len(b)
		}
		return n
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + AttributeValueSize(e)
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for k, e := range v.Value {
			n += 1 + len(k) + AttributeValueSize(e)
		}
		return n
	}
	return 0
}

// numberSize sizes a DynamoDB number: 1 byte per two significant digits
// (leading and trailing zeros trimmed) plus 1 byte.
func numberSize(s string) int {
	s = strings.TrimLeft(s, "+-")
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		s = s[:i]
	}
	digits := strings.Replace(s, ".", "", 1)
	digits = strings.Trim(digits, "0")
	if digits == "" {
		return 1
	}
	return (len(digits)+1)/2 + 1
}
