package loopitems

import (
	"context"
	"errors"
	"io"
)

// Objects reads byte ranges of S3 objects.
type Objects interface {
	// GetRange returns bytes [from, to] (inclusive; to < 0 means to the
	// end) of bucket/key, with the object's total size and ETag. A range
	// starting at or past the end of the object gives an empty body. When
	// ifMatch != "" and the object's ETag differs it fails with
	// ErrChanged; a missing bucket or key fails with ErrNotFound, a denied
	// read with ErrDenied.
	GetRange(ctx context.Context, bucket, key string, from, to int64, ifMatch string) (body io.ReadCloser, size int64, etag string, err error)
}

// Errors of Objects.GetRange, wrapped.
var (
	// ErrNotFound says the bucket or the key does not exist.
	ErrNotFound = errors.New("no such object")
	// ErrChanged says the object's ETag is not the one required.
	ErrChanged = errors.New("object changed")
	// ErrDenied says the caller may not read the object.
	ErrDenied = errors.New("access denied")
)
