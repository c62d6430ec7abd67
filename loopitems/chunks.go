package loopitems

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
)

// maxChunk bounds one range GET.
const maxChunk = 8 << 20

// MaxObjectBytes bounds an items_from object. The scan reads it whole
// within the decision that starts the loop (an API start request has 29 s,
// a decider invocation 30 s). Measured from moto on one core here
// (2026-11-28): 1,000,000 items of 33 bytes in 1.5 s, 64 MiB of 110-byte
// items in 1.7 s; a 512 MB Lambda has about 0.29 of a vCPU, so about 6 s
// there. 1,000,000 items of up to 67 bytes fit.
const MaxObjectBytes = 64 << 20

// errLimit is what a chunkReader returns at its limit: the item being read
// is too large.
var errLimit = errors.New("read limit reached")

// chunkReader reads an object from an offset on, in successive range GETs
// of growing length (doubling up to maxChunk), each requiring the ETag of
// the first. It returns no byte at or past limit: a parser sets limit to
// bound what it reads of one item.
type chunkReader struct {
	ctx     context.Context
	objects Objects
	src     *source
	ifMatch string // the ETag required, "" before the first GET of a scan
	pos     int64  // the offset of the next byte Read returns
	size    int64  // the object's size, -1 until known
	chunk   int64  // the length of the next GET
	limit   int64
	body    io.ReadCloser
	from    int64 // where body starts
	// cache, when set (reads after the scan, ifMatch known), serves and
	// keeps the chunks.
	cache *chunkCache
}

func newChunkReader(ctx context.Context, objects Objects, src *source, pos, size, chunk int64, ifMatch string) *chunkReader {
	return &chunkReader{ctx: ctx, objects: objects, src: src, ifMatch: ifMatch, pos: pos, size: size,
		chunk: min(max(chunk, 1), maxChunk), limit: 1<<63 - 1}
}

// Read implements io.Reader.
func (r *chunkReader) Read(p []byte) (int, error) {
	if r.pos >= r.limit {
		return 0, errLimit
	}
	if n := r.limit - r.pos; int64(len(p)) > n {
		p = p[:n]
	}
	if r.body == nil {
		if r.size >= 0 && r.pos >= r.size {
			return 0, io.EOF
		}
		if err := r.fetch(); err != nil {
			return 0, err
		}
	}
	n, err := r.body.Read(p)
	r.pos += int64(n)
	if errors.Is(err, io.EOF) {
		err = r.closeBody()
		if err == nil && r.pos == r.from && r.pos < r.size {
			err = fmt.Errorf("items_from %s: no bytes at offset %d of %d: %w", r.src.uri, r.pos, r.size, io.ErrUnexpectedEOF)
		}
	} else if err != nil {
		err = fmt.Errorf("items_from %s: read at offset %d: %w", r.src.uri, r.pos, err)
	}
	return n, err
}

// fetch starts the GET of the next chunk, or takes it from the cache.
func (r *chunkReader) fetch() error {
	if r.cache != nil && r.ifMatch != "" {
		if body, size, ok := r.cache.get(r.src.bucket, r.src.key, r.ifMatch, r.pos); ok {
			r.size, r.body, r.from = size, body, r.pos
			return nil
		}
	}
	body, size, etag, err := r.objects.GetRange(r.ctx, r.src.bucket, r.src.key, r.pos, r.pos+r.chunk-1, r.ifMatch)
	if err != nil {
		return r.src.readFailure(err)
	}
	if r.cache != nil && r.ifMatch != "" && r.chunk <= maxCachedChunk {
		data, err := io.ReadAll(io.LimitReader(body, r.chunk))
		body.Close()
		if err != nil {
			return fmt.Errorf("items_from %s: read at offset %d: %w", r.src.uri, r.pos, err)
		}
		r.cache.put(cachedChunk{bucket: r.src.bucket, key: r.src.key, etag: r.ifMatch, from: r.pos, size: size, data: data})
		body = io.NopCloser(bytes.NewReader(data))
	}
	if r.ifMatch == "" {
		// The scan's first GET: the object's size is known.
		if size > MaxObjectBytes {
			body.Close()
			return r.src.fail("", "the object is %d bytes, more than the limit of %d (64 MiB) an items_from object may have", size, MaxObjectBytes)
		}
		r.ifMatch = etag
	}
	r.size, r.body, r.from = size, body, r.pos
	r.chunk = min(2*r.chunk, maxChunk)
	return nil
}

func (r *chunkReader) closeBody() error {
	if r.body == nil {
		return nil
	}
	err := r.body.Close()
	r.body = nil
	if err != nil {
		return fmt.Errorf("items_from %s: close a read: %w", r.src.uri, err)
	}
	return nil
}

// setLimit makes Read stop at offset limit.
func (r *chunkReader) setLimit(limit int64) { r.limit = limit }
