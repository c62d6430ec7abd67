package loopitems

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/stretchr/testify/require"
)

func TestClassify(t *testing.T) {
	status := func(code int) error {
		return &awshttp.ResponseError{ResponseError: &smithyhttp.ResponseError{
			Response: &smithyhttp.Response{Response: &http.Response{StatusCode: code}}, Err: errors.New("status"),
		}}
	}
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"NoSuchKey", &smithy.GenericAPIError{Code: "NoSuchKey"}, ErrNotFound},
		{"NoSuchBucket", &smithy.GenericAPIError{Code: "NoSuchBucket"}, ErrNotFound},
		{"404", status(404), ErrNotFound},
		{"PreconditionFailed", &smithy.GenericAPIError{Code: "PreconditionFailed"}, ErrChanged},
		{"412", status(412), ErrChanged},
		{"AccessDenied", &smithy.GenericAPIError{Code: "AccessDenied"}, ErrDenied},
		{"403", status(403), ErrDenied},
		{"500", status(500), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := classify(tt.err, "b", "k")
			require.ErrorIs(t, err, tt.err, "the SDK's error is kept")
			for _, s := range []error{ErrNotFound, ErrChanged, ErrDenied} {
				require.Equal(t, s == tt.want, errors.Is(err, s), "%v is %v", err, s)
			}
		})
	}
}

func TestParseContentRange(t *testing.T) {
	tests := []struct {
		in          string
		size, first int64
		ok          bool
	}{
		{"bytes 0-9/10", 10, 0, true},
		{"bytes 8388608-16777215/20000000", 20000000, 8388608, true},
		{"bytes */10", 0, 0, false},
		{"bytes 0-9/*", 0, 0, false},
		{"", 0, 0, false},
	}
	for _, tt := range tests {
		size, first, ok := parseContentRange(tt.in)
		require.Equal(t, tt.ok, ok, tt.in)
		if ok {
			require.Equal(t, [2]int64{tt.size, tt.first}, [2]int64{size, first}, tt.in)
		}
	}
}

// A response that ignored the range is cut to it.
func TestSkipTo(t *testing.T) {
	body, err := skipTo(io.NopCloser(strings.NewReader("0123456789")), 3, 4)
	require.NoError(t, err)
	got, err := io.ReadAll(body)
	require.NoError(t, err)
	require.Equal(t, "3456", string(got))
	require.True(t, sameETag(`"abc"`, "abc"))
}
