package loopitems

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/engine"
)

// memObjects is an in-memory Objects: it serves byte ranges of the objects
// put in it, honouring ifMatch, and records the ranges asked for.
type memObjects struct {
	mu      sync.Mutex
	objects map[string]memObject // by bucket/key
	gets    []getCall
	served  int64 // bytes read from the bodies returned
	fail    error // when set, every GetRange fails with it
}

type memObject struct {
	data io.ReaderAt
	size int64
	etag string
}

type getCall struct {
	key      string
	from, to int64
}

func newMemObjects() *memObjects {
	return &memObjects{objects: map[string]memObject{}}
}

// put stores data at bucket/key with its MD5 as ETag, as S3 does.
func (m *memObjects) put(bucket, key string, data []byte) {
	sum := md5.Sum(data)
	m.putReader(bucket, key, bytes.NewReader(data), int64(len(data)), `"`+hex.EncodeToString(sum[:])+`"`)
}

// putReader stores an object read from r, of size bytes.
func (m *memObjects) putReader(bucket, key string, r io.ReaderAt, size int64, etag string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.objects[bucket+"/"+key] = memObject{data: r, size: size, etag: etag}
}

// GetRange implements Objects.
func (m *memObjects) GetRange(_ context.Context, bucket, key string, from, to int64, ifMatch string) (io.ReadCloser, int64, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gets = append(m.gets, getCall{key, from, to})
	if m.fail != nil {
		return nil, 0, "", m.fail
	}
	o, ok := m.objects[bucket+"/"+key]
	if !ok {
		return nil, 0, "", fmt.Errorf("s3://%s/%s: %w", bucket, key, ErrNotFound)
	}
	if ifMatch != "" && ifMatch != o.etag {
		return nil, 0, "", fmt.Errorf("s3://%s/%s: %w", bucket, key, ErrChanged)
	}
	end := o.size
	if to >= 0 && to+1 < end {
		end = to + 1
	}
	from = min(from, end)
	return &countingBody{r: io.NewSectionReader(o.data, from, end-from), m: m}, o.size, o.etag, nil
}

func (m *memObjects) calls() []getCall {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]getCall(nil), m.gets...)
}

func (m *memObjects) bytesServed() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.served
}

type countingBody struct {
	r io.Reader
	m *memObjects
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.m.mu.Lock()
	b.m.served += int64(n)
	b.m.mu.Unlock()
	return n, err
}

func (b *countingBody) Close() error { return nil }

// patternObject is a large object made up on demand: head, then fill
// repeated up to size bytes.
type patternObject struct {
	head []byte
	fill byte
	size int64
}

// ReadAt implements io.ReaderAt.
func (p patternObject) ReadAt(b []byte, off int64) (int, error) {
	if off >= p.size {
		return 0, io.EOF
	}
	n := 0
	for n < len(b) && off < p.size {
		if off < int64(len(p.head)) {
			b[n] = p.head[off]
		} else {
			b[n] = p.fill
		}
		n++
		off++
	}
	if n < len(b) {
		return n, io.EOF
	}
	return n, nil
}

// scanned puts body into a bucket of memory objects as "in" and scans it
// with a Reader of that bucket as format.
func scanned(t *testing.T, body []byte, format string) (*memObjects, *Reader, engine.ItemsSource, engine.ItemsObject) {
	t.Helper()
	m := newMemObjects()
	m.put(testBucket, "in", body)
	r := NewReader(m, []string{testBucket})
	src := testSource("in", format, nil)
	obj, err := r.ScanItems(context.Background(), src)
	require.NoError(t, err)
	return m, r, src, obj
}
