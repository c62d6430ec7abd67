package loopitems

import (
	"context"
	"fmt"
	"slices"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
)

// Reader implements engine.ItemsReader over Objects.
type Reader struct {
	objects Objects
	buckets map[string]bool
	cache   chunkCache // the chunks reads fetched
}

var _ engine.ItemsReader = (*Reader)(nil)

// NewReader returns a Reader of the objects in buckets, and of no others:
// the stack's signals bucket and the buckets attached to it.
func NewReader(objects Objects, buckets []string) *Reader {
	r := &Reader{objects: objects, buckets: make(map[string]bool, len(buckets))}
	for _, b := range buckets {
		r.buckets[b] = true
	}
	return r
}

// items reads the items of an object in order.
type items interface {
	// next reads the next item, returning its params when decode (else
	// only finding where it ends); ok is false past the last item.
	next(decode bool) (item engine.Values, ok bool, err error)
	// cursor is the place just past the last item read: where the next
	// one is sought.
	cursor() engine.ItemsCursor
	// finish checks what follows the last item.
	finish() error
}

// ScanItems implements engine.ItemsReader: it reads the whole object in
// range GETs of up to 8 MiB, checking and counting its items.
func (r *Reader) ScanItems(ctx context.Context, src engine.ItemsSource) (engine.ItemsObject, error) {
	s, err := r.source(src)
	if err != nil {
		return engine.ItemsObject{}, err
	}
	cr := newChunkReader(ctx, r.objects, s, 0, -1, maxChunk, "")
	defer cr.closeBody()
	it, header, err := s.open(cr)
	if err != nil {
		return engine.ItemsObject{}, err
	}
	obj := engine.ItemsObject{Header: header, First: it.cursor()}
	for {
		_, ok, err := it.next(true)
		if err != nil {
			return engine.ItemsObject{}, err
		}
		if !ok {
			break
		}
		if obj.Total++; obj.Total > engine.MaxIterations {
			return engine.ItemsObject{}, s.fail("", "more than %d items, the limit of a foreach step", engine.MaxIterations)
		}
	}
	if err := it.finish(); err != nil {
		return engine.ItemsObject{}, err
	}
	obj.ETag, obj.Size = cr.ifMatch, max(cr.size, 0)
	return obj, nil
}

// ReadItems implements engine.ItemsReader: it reads from at on, in range
// GETs requiring obj.ETag, the first sized for the items up to the last
// wanted (obj's average item size), the next ones doubling up to 8 MiB.
func (r *Reader) ReadItems(ctx context.Context, src engine.ItemsSource, obj engine.ItemsObject, at engine.ItemsCursor, want []int64) ([]engine.Values, engine.ItemsCursor, error) {
	if len(want) == 0 {
		return nil, at, nil
	}
	s, err := r.source(src)
	if err != nil {
		return nil, at, err
	}
	if want[0] < at.Index || !slices.IsSorted(want) || hasDuplicate(want) {
		return nil, at, fmt.Errorf("items_from %s: want %v is not ascending from item %d", s.uri, want, at.Index)
	}
	last := want[len(want)-1]
	if last >= obj.Total {
		return nil, at, s.fail("", "item %d wanted, but the object has %d items", last, obj.Total)
	}
	cr := newChunkReader(ctx, r.objects, s, at.Offset, obj.Size, firstChunk(obj, at, last), obj.ETag)
	cr.cache = &r.cache
	defer cr.closeBody()
	it := s.resume(cr, obj, at)
	out := make([]engine.Values, 0, len(want))
	for _, w := range want {
		for it.cursor().Index <= w {
			item, ok, err := it.next(it.cursor().Index == w)
			if err != nil {
				return nil, at, err
			}
			if !ok {
				return nil, at, s.fail("", "no item %d: the object ends after %d items", w, it.cursor().Index)
			}
			if item != nil {
				out = append(out, item)
			}
		}
	}
	return out, it.cursor(), nil
}

func hasDuplicate(want []int64) bool {
	for i := 1; i < len(want); i++ {
		if want[i] == want[i-1] {
			return true
		}
	}
	return false
}

// firstChunk is the length of the first GET of a read from at up to item
// last: half as much again as the object's average item size says, and a
// little more, at least readChunk.
func firstChunk(obj engine.ItemsObject, at engine.ItemsCursor, last int64) int64 {
	avg := float64(obj.Size) / float64(max(obj.Total, 1))
	n := avg*float64(last-at.Index+1)*1.5 + 4<<10
	return min(max(int64(n), readChunk), maxChunk)
}

// source checks src: a URI of an allowed bucket, a known format, for CSV
// only STRING fields.
func (r *Reader) source(src engine.ItemsSource) (*source, error) {
	s := &source{uri: src.URI, format: src.Format, fields: src.Fields}
	bucket, key, err := model.ParseS3URI(src.URI)
	if err != nil {
		return nil, s.fail("", "%v", err)
	}
	s.bucket, s.key = bucket, key
	if !r.buckets[bucket] {
		return nil, s.fail("", "bucket %q may not be read: only the stack's signals bucket and its attached buckets (attachBuckets) may be read", bucket)
	}
	switch src.Format {
	case model.ItemsJSONL, model.ItemsCSV, model.ItemsJSON:
	default:
		return nil, s.fail("", "unknown format %q (want %s, %s or %s)", src.Format, model.ItemsJSONL, model.ItemsCSV, model.ItemsJSON)
	}
	for name, t := range src.Fields {
		s.declared = append(s.declared, name)
		if src.Format == model.ItemsCSV && t != model.TypeString {
			return nil, s.fail("", "field %q is declared %s, but a CSV item's fields are STRING", name, t)
		}
	}
	slices.Sort(s.declared)
	return s, nil
}

// open starts reading the object from its start: past a CSV header
// (returned) or a JSON array's opening bracket.
func (s *source) open(cr *chunkReader) (items, []string, error) {
	switch s.format {
	case model.ItemsCSV:
		c, err := openCSV(s, cr)
		if err != nil {
			return nil, nil, err
		}
		return c, c.header, nil
	case model.ItemsJSON:
		j, err := openJSONArray(s, cr)
		return j, nil, err
	}
	return newJSONLItems(s, cr, engine.ItemsCursor{Line: 1}), nil, nil
}

// resume reads the object from at on, cr positioned there.
func (s *source) resume(cr *chunkReader, obj engine.ItemsObject, at engine.ItemsCursor) items {
	switch s.format {
	case model.ItemsCSV:
		return newCSVItems(s, cr, obj.Header, at)
	case model.ItemsJSON:
		return newJSONArrayItems(s, cr, at)
	}
	return newJSONLItems(s, cr, at)
}
