package loopitems

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
)

// S3Objects implements Objects over an S3 client.
type S3Objects struct {
	client *s3.Client
}

// NewS3Objects returns Objects reading through c. Against an emulator, c
// should address buckets in the path (s3.Options.UsePathStyle).
func NewS3Objects(c *s3.Client) *S3Objects {
	return &S3Objects{client: c}
}

// GetRange implements Objects with a ranged GetObject. It sends ifMatch as
// If-Match (S3 then answers 412 PreconditionFailed: ErrChanged) and also
// compares the ETag of the response with it itself: moto 5.2 honours
// If-Match on GetObject, but an emulator or a proxy that ignored it would
// otherwise mix two versions of an object. A range past the end of the
// object (416 InvalidRange, which S3 also answers for any range of an
// empty object) gives an empty body, the size and ETag then coming from
// HeadObject.
func (o *S3Objects) GetRange(ctx context.Context, bucket, key string, from, to int64, ifMatch string) (io.ReadCloser, int64, string, error) {
	rng := fmt.Sprintf("bytes=%d-", from)
	if to >= 0 {
		rng = fmt.Sprintf("bytes=%d-%d", from, to)
	}
	in := &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Range: aws.String(rng)}
	if ifMatch != "" {
		in.IfMatch = aws.String(ifMatch)
	}
	out, err := o.client.GetObject(ctx, in, quietChecksums)
	if err != nil {
		if code, status := errorCode(err); code == "InvalidRange" || status == http.StatusRequestedRangeNotSatisfiable {
			return o.pastEnd(ctx, bucket, key, ifMatch)
		}
		return nil, 0, "", classify(err, bucket, key)
	}
	etag := aws.ToString(out.ETag)
	if ifMatch != "" && !sameETag(etag, ifMatch) {
		out.Body.Close()
		return nil, 0, "", fmt.Errorf("s3://%s/%s has ETag %s, not %s: %w", bucket, key, etag, ifMatch, ErrChanged)
	}
	size, first, ok := parseContentRange(aws.ToString(out.ContentRange))
	if !ok {
		// The whole object came back: the range was ignored.
		size, first = aws.ToInt64(out.ContentLength), 0
	}
	body := io.ReadCloser(out.Body)
	if first != from {
		n := int64(-1)
		if to >= 0 {
			n = to - from + 1
		}
		body, err = skipTo(out.Body, from-first, n)
		if err != nil {
			return nil, 0, "", fmt.Errorf("s3://%s/%s bytes %d-: %w", bucket, key, from, err)
		}
	}
	return body, size, etag, nil
}

// quietChecksums keeps the SDK from logging, at every ranged GET, that it
// did not validate the object's checksum: a range has none to validate.
func quietChecksums(o *s3.Options) { o.DisableLogOutputChecksumValidationSkipped = true }

// pastEnd answers a range past the end of bucket/key: an empty body, with
// the object's size and ETag.
func (o *S3Objects) pastEnd(ctx context.Context, bucket, key, ifMatch string) (io.ReadCloser, int64, string, error) {
	in := &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}
	if ifMatch != "" {
		in.IfMatch = aws.String(ifMatch)
	}
	out, err := o.client.HeadObject(ctx, in)
	if err != nil {
		return nil, 0, "", classify(err, bucket, key)
	}
	etag := aws.ToString(out.ETag)
	if ifMatch != "" && !sameETag(etag, ifMatch) {
		return nil, 0, "", fmt.Errorf("s3://%s/%s has ETag %s, not %s: %w", bucket, key, etag, ifMatch, ErrChanged)
	}
	return io.NopCloser(strings.NewReader("")), aws.ToInt64(out.ContentLength), etag, nil
}

// classify wraps err in the sentinel its code or HTTP status stands for.
func classify(err error, bucket, key string) error {
	code, status := errorCode(err)
	switch {
	case code == "NoSuchKey" || code == "NoSuchBucket" || code == "NotFound" || status == http.StatusNotFound:
		return fmt.Errorf("s3://%s/%s: %w: %w", bucket, key, ErrNotFound, err)
	case code == "PreconditionFailed" || status == http.StatusPreconditionFailed:
		return fmt.Errorf("s3://%s/%s: %w: %w", bucket, key, ErrChanged, err)
	case code == "AccessDenied" || code == "Forbidden" || status == http.StatusForbidden:
		return fmt.Errorf("s3://%s/%s: %w: %w", bucket, key, ErrDenied, err)
	}
	return fmt.Errorf("s3://%s/%s: %w", bucket, key, err)
}

// errorCode returns the API error code and the HTTP status of err, when
// it has them.
func errorCode(err error) (code string, status int) {
	var api smithy.APIError
	if errors.As(err, &api) {
		code = api.ErrorCode()
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		status = re.HTTPStatusCode()
	}
	return code, status
}

// sameETag compares two ETags, quoted or not.
func sameETag(a, b string) bool {
	return strings.Trim(a, `"`) == strings.Trim(b, `"`)
}

// parseContentRange reads "bytes first-last/size"; ok is false without a
// range or without a known size.
func parseContentRange(s string) (size, first int64, ok bool) {
	rest, found := strings.CutPrefix(s, "bytes ")
	if !found {
		return 0, 0, false
	}
	rng, total, found := strings.Cut(rest, "/")
	if !found {
		return 0, 0, false
	}
	size, err := strconv.ParseInt(total, 10, 64)
	if err != nil {
		return 0, 0, false
	}
	lo, _, _ := strings.Cut(rng, "-")
	first, err = strconv.ParseInt(lo, 10, 64)
	if err != nil {
		return 0, 0, false
	}
	return size, first, true
}

// skipTo discards the first n bytes of body and limits the rest to count
// bytes (count < 0: no limit).
func skipTo(body io.ReadCloser, n, count int64) (io.ReadCloser, error) {
	if n < 0 {
		body.Close()
		return nil, errors.New("the response starts past the requested range")
	}
	if _, err := io.CopyN(io.Discard, body, n); err != nil && !errors.Is(err, io.EOF) {
		body.Close()
		return nil, err
	}
	var r io.Reader = body
	if count >= 0 {
		r = io.LimitReader(body, count)
	}
	return struct {
		io.Reader
		io.Closer
	}{r, body}, nil
}
