package memstore

import (
	"compress/flate"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/maestro-serverless/maestro/store"
)

// Item sizes. DynamoDB refuses an item over store.MaxItemBytes, and package
// store refuses some before sending (*store.ItemTooLargeError). What it
// counts is the stored item: bodies compressed with a preset dictionary
// private to package store. The memstore estimates a body's stored size
// with deflate at the same level without the dictionary, which saves at
// most a few hundred bytes more on a body of kilobytes: an item whose
// estimate is within that of the limit may be refused here and accepted
// by DynamoDB. Only items whose uncompressed size passes the limit are
// compressed at all.

// Billed sizes of fixed attributes (store/itemsize.go's rules).
const (
	// compressAbove is package store's: smaller bodies are stored as they are.
	compressAbove = 96
	// sweepAttrs is the size of the two sweep index attributes.
	sweepAttrs = len("gsi1pk") + len("SWEEP#0") + len("gsi1sk") + 13
)

// numSize is a number attribute's billed size.
func numSize(v int64) int {
	return store.AttributeValueSize(&types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)})
}

// deflated is the length of b deflated at package store's level.
func deflated(b []byte) int {
	var n countWriter
	zw, err := flate.NewWriter(&n, flate.DefaultCompression)
	if err != nil {
		return len(b)
	}
	_, _ = zw.Write(b)
	_ = zw.Close()
	return int(n)
}

type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) {
	*c += countWriter(len(p))
	return len(p), nil
}

var _ io.Writer = (*countWriter)(nil)

// storedLen estimates the stored length of body b (codec.compress).
func storedLen(b []byte) int {
	if len(b) <= compressAbove {
		return len(b)
	}
	if z := deflated(b); z < len(b) {
		return z
	}
	return len(b)
}

// outboxLen estimates the stored length of an outbox's JSON
// (encodeOutbox: compressed, base64 behind "zd1:", when that is shorter).
func outboxLen(raw []byte) int {
	z := storedLen(raw)
	if z == len(raw) {
		return len(raw)
	}
	if v := 4 + (z+2)/3*4; v < len(raw) {
		return v
	}
	return len(raw)
}

// bodyAttrs is the size of a body and its encoding's name.
func bodyAttrs(stored int) int { return len("body") + stored + len("enc") + 3 }

// keyAttrs is the size of the key attributes.
func keyAttrs(pk, sk string) int { return len("pk") + len(pk) + len("sk") + len(sk) }

// sizer is an item whose size can pass the limit.
type sizer interface {
	// size estimates the item's stored size; raw says to count bodies
	// uncompressed (an upper bound, cheap).
	size(pk, sk string, raw bool) int
}

// itemSize estimates it's stored size, compressing only when the
// uncompressed size passes the limit.
func itemSize(pk, sk string, it sizer) int {
	if n := it.size(pk, sk, true); n <= store.MaxItemBytes {
		return n
	}
	return it.size(pk, sk, false)
}

// checkSize refuses an item DynamoDB refuses for its size.
func checkSize(pk, sk string, it any) error {
	s, ok := it.(sizer)
	if !ok {
		return nil
	}
	if n := itemSize(pk, sk, s); n > store.MaxItemBytes {
		return tooLarge(pk+" "+sk, n) // as package store's sizedDB
	}
	return nil
}

func lenOf(b []byte, raw bool) int {
	if raw {
		return len(b)
	}
	return storedLen(b)
}

func (h *headItem) size(pk, sk string, raw bool) int {
	n := keyAttrs(pk, sk) + 120 + bodyAttrs(lenOf(h.props, raw))
	if h.acl != nil {
		n += len("acl") + len(h.acl)
	}
	return n
}

func (v *versionItem) size(pk, sk string, raw bool) int {
	return keyAttrs(pk, sk) + 40 + len(v.principal) + bodyAttrs(lenOf(v.def, raw))
}

func (e *eventItem) size(pk, sk string, raw bool) int {
	n := keyAttrs(pk, sk) + bodyAttrs(lenOf(e.body, raw)) + len("ob") + 110 + 2*len(pk)
	if e.swept {
		n += sweepAttrs
	}
	return n
}

func (r *runItem) size(pk, sk string, raw bool) int {
	n := keyAttrs(pk, sk) + len("v") + numSize(r.v) + len("status") + len(r.status) + bodyAttrs(lenOf(r.state, raw))
	if r.sweepAt > 0 {
		n += sweepAttrs
	}
	if r.outbox != nil {
		if raw {
			n += len("ob") + len(r.outbox)
		} else {
			n += len("ob") + outboxLen(r.outbox)
		}
	}
	if len(r.pages) > 0 {
		n += len("pg") + 3
		for _, k := range r.pages {
			n += 1 + len(k)
		}
	}
	if len(r.timeline) > 0 {
		n += len("itl") + inlineTimelineLen(r.timeline, raw)
	}
	return n
}

// inlineTimelineLen estimates the size of the "itl" attribute holding
// entries (always deflated).
func inlineTimelineLen(entries []store.TimelineItem, raw bool) int {
	b, err := json.Marshal(inlineEntries(entries))
	if err != nil {
		return 0
	}
	if raw {
		return len(b) + 16
	}
	return deflated(b)
}

func (p *pageItem) size(pk, sk string, raw bool) int {
	b, _ := json.Marshal(p.entries)
	return keyAttrs(pk, sk) + bodyAttrs(lenOf(b, raw))
}

func (a *attemptItem) size(pk, sk string, raw bool) int {
	n := keyAttrs(pk, sk) + len("status") + len(a.status) + bodyAttrs(lenOf(a.body, raw)) + len("tl") + 3
	for _, e := range a.tl {
		n += 1 + len(e)
	}
	n += len(a.claim) + len(a.wait) + len(a.outcome) + len(a.ob) + 40
	return n
}

func (t *timelineItem) size(pk, sk string, _ bool) int {
	return keyAttrs(pk, sk) + bodyAttrs(len(t.body))
}

func (l *loopParamsItem) size(pk, sk string, raw bool) int {
	return keyAttrs(pk, sk) + bodyAttrs(lenOf(l.body, raw))
}

func (s *signalItem) size(pk, sk string, _ bool) int {
	n := keyAttrs(pk, sk) + 60 + len(s.name) + len(s.params) + len(s.payload) + len(s.requestID) + len(s.source) + len(s.outbox)
	if s.swept {
		n += sweepAttrs
	}
	return n
}

func (l *lineageItem) size(pk, sk string, _ bool) int {
	return keyAttrs(pk, sk) + len("body") + len(l.body)
}

// tooLarge is package store's error for an item it refuses for its size.
func tooLarge(what string, n int) error {
	return &store.ItemTooLargeError{Item: what, Bytes: n}
}

// wrapf wraps err as package store wraps it: a message naming the
// operation, the sentinel kept.
func wrapf(err error, format string, args ...any) error {
	return fmt.Errorf(format+": %w", append(args, err)...)
}
