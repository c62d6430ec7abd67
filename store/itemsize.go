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
		return setSize(v.Value, func(s string) int { return len(s) })
	case *types.AttributeValueMemberNS:
		return setSize(v.Value, numberSize)
	case *types.AttributeValueMemberBS:
		return setSize(v.Value, func(b []byte) int { return len(b) })
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

// setSize sizes a set: the sum of its members' sizes.
func setSize[T any](members []T, size func(T) int) int {
	n := 0
	for _, m := range members {
		n += size(m)
	}
	return n
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
