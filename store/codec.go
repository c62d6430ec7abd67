package store

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"fmt"
	"io"
	"sync"
)

// Bodies (a run's state, a step attempt, an event) and run outboxes are
// billed with their items, by the kilobyte. They are stored deflated with a
// preset dictionary (dictV1), under the encoding name encDict1: a chain
// run's item is about 500 bytes with it, against 1.3 KB gzipped, so each of
// the run's commits costs one write unit instead of two. Items written
// before it stay readable: "gz" (gzip, no dictionary) and "raw".
const (
	encRaw   = "raw"
	encGzip  = "gz"
	encDict1 = "zd1"
	// compressAbove is the size below which a body is stored as it is:
	// what deflate saves there is under a few bytes.
	compressAbove = 96
	// maxDecodedBytes bounds what one attribute inflates to, so that a
	// corrupt item cannot make a reader allocate without limit; a body is
	// at most 400 KB stored, and no state or outbox compresses 160-fold.
	maxDecodedBytes = 64 << 20
	// deflateLevel is deflate's default: for bodies of a few kilobytes,
	// a few microseconds.
	deflateLevel = flate.DefaultCompression
)

// codec deflates with dictV1, reusing its writers: a flate writer holds
// about 1 MB of tables, too much to allocate per commit.
type codec struct {
	writers sync.Pool
}

// deflate compresses b with dictV1.
func (c *codec) deflate(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(len(b)/2 + 64)
	zw, _ := c.writers.Get().(*flate.Writer)
	if zw == nil {
		var err error
		if zw, err = flate.NewWriterDict(&buf, deflateLevel, []byte(dictV1)); err != nil {
			return nil, fmt.Errorf("store: deflate: %w", err)
		}
	} else {
		zw.Reset(&buf) // keeps the dictionary
	}
	if _, err := zw.Write(b); err != nil {
		return nil, fmt.Errorf("store: deflate: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("store: deflate: %w", err)
	}
	c.writers.Put(zw)
	return buf.Bytes(), nil
}

// decode returns the bytes z stored under encoding enc.
func decode(enc string, z []byte) ([]byte, error) {
	var r io.ReadCloser
	switch enc {
	case encDict1:
		r = flate.NewReaderDict(bytes.NewReader(z), []byte(dictV1))
	case encGzip:
		zr, err := gzip.NewReader(bytes.NewReader(z))
		if err != nil {
			return nil, fmt.Errorf("store: gunzip: %w", err)
		}
		r = zr
	default:
		return z, nil
	}
	defer r.Close()
	out, err := io.ReadAll(io.LimitReader(r, maxDecodedBytes+1))
	if err != nil {
		return nil, fmt.Errorf("store: decode %s: %w", enc, err)
	}
	if len(out) > maxDecodedBytes {
		return nil, fmt.Errorf("store: decode %s: more than %d bytes", enc, maxDecodedBytes)
	}
	return out, nil
}

// compress returns b's stored form and its encoding: deflated with dictV1,
// or b itself when that is not smaller.
func (c *codec) compress(b []byte) ([]byte, string, error) {
	if len(b) <= compressAbove {
		return b, encRaw, nil
	}
	z, err := c.deflate(b)
	if err != nil {
		return nil, "", err
	}
	if len(z) >= len(b) {
		return b, encRaw, nil
	}
	return z, encDict1, nil
}
