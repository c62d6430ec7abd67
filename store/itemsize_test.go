package store

import (
	"testing"

	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
)

func TestAttributeValueSize(t *testing.T) {
	tests := []struct {
		name string
		v    ddbtypes.AttributeValue
		want int
	}{
		{"string", &ddbtypes.AttributeValueMemberS{Value: "héllo"}, 6},
		{"binary", &ddbtypes.AttributeValueMemberB{Value: make([]byte, 10)}, 10},
		{"bool", &ddbtypes.AttributeValueMemberBOOL{Value: true}, 1},
		{"null", &ddbtypes.AttributeValueMemberNULL{Value: true}, 1},
		{"number one digit", &ddbtypes.AttributeValueMemberN{Value: "7"}, 2},
		{"number two digits", &ddbtypes.AttributeValueMemberN{Value: "42"}, 2},
		{"number three digits", &ddbtypes.AttributeValueMemberN{Value: "-123"}, 3},
		{"number trailing zeros trimmed", &ddbtypes.AttributeValueMemberN{Value: "1000000"}, 2},
		{"number decimal", &ddbtypes.AttributeValueMemberN{Value: "0.0012345"}, 4},
		{"number zero", &ddbtypes.AttributeValueMemberN{Value: "0"}, 1},
		{"number exponent", &ddbtypes.AttributeValueMemberN{Value: "1.5E+10"}, 2},
		{"string set", &ddbtypes.AttributeValueMemberSS{Value: []string{"ab", "cde"}}, 5},
		{"number set", &ddbtypes.AttributeValueMemberNS{Value: []string{"1", "123"}}, 5},
		{"empty list", &ddbtypes.AttributeValueMemberL{}, 3},
		{"list", &ddbtypes.AttributeValueMemberL{Value: []ddbtypes.AttributeValue{
			&ddbtypes.AttributeValueMemberS{Value: "abcd"}, &ddbtypes.AttributeValueMemberBOOL{},
		}}, 3 + (1 + 4) + (1 + 1)},
		{"map", &ddbtypes.AttributeValueMemberM{Value: map[string]ddbtypes.AttributeValue{
			"k": &ddbtypes.AttributeValueMemberS{Value: "vv"},
		}}, 3 + 1 + 1 + 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, AttributeValueSize(tt.v))
		})
	}
}

func TestItemSize(t *testing.T) {
	item := map[string]ddbtypes.AttributeValue{
		"pk": &ddbtypes.AttributeValueMemberS{Value: "R#wf#1"},   // 2+6
		"sk": &ddbtypes.AttributeValueMemberS{Value: "RUN#0001"}, // 2+8
		"v":  &ddbtypes.AttributeValueMemberN{Value: "12"},       // 1+2
	}
	assert.Equal(t, 21, ItemSize(item))
}
