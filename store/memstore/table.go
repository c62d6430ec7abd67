package memstore

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// The table: items by partition and sort key, the same keys package store
// writes (its keys are its ordering, so queries of a range or a prefix
// return what DynamoDB's return, in the same order), each item a value of
// one of the kinds in items.go. Items are never changed in place: a write
// replaces an item with a new value, so a value read under the lock can be
// used after it.

// DynamoDB's limits on key attributes.
const (
	maxPartitionKeyBytes = 2048
	maxSortKeyBytes      = 1024
)

type itemKey struct{ pk, sk string }

type partition struct {
	items map[string]any
	// keys are items' sort keys in order; nil when a write changed them.
	keys []string
}

type table struct {
	parts map[string]*partition
}

func newTable() *table { return &table{parts: map[string]*partition{}} }

func (t *table) get(pk, sk string) any {
	p := t.parts[pk]
	if p == nil {
		return nil
	}
	return p.items[sk]
}

// set stores it under pk/sk; nil deletes the item.
func (t *table) set(pk, sk string, it any) {
	p := t.parts[pk]
	if it == nil {
		if p == nil {
			return
		}
		if _, ok := p.items[sk]; ok {
			delete(p.items, sk)
			p.keys = nil
			if len(p.items) == 0 {
				delete(t.parts, pk)
			}
		}
		return
	}
	if p == nil {
		p = &partition{items: map[string]any{}}
		t.parts[pk] = p
	}
	if _, ok := p.items[sk]; !ok {
		p.keys = nil
	}
	p.items[sk] = it
}

func (p *partition) sorted() []string {
	if p.keys == nil {
		p.keys = make([]string, 0, len(p.items))
		for sk := range p.items {
			p.keys = append(p.keys, sk)
		}
		slices.Sort(p.keys)
	}
	return p.keys
}

// query is a DynamoDB Query of one partition: its sort keys in a range
// (from and to inclusive, "" for unbounded) or with a prefix, in order or
// backwards, after start, at most limit of them (0: all).
type query struct {
	pk       string
	prefix   string
	from, to string
	desc     bool
	limit    int
	start    string
	hasStart bool
}

// run returns the sort keys the query reads and whether DynamoDB would
// return a LastEvaluatedKey: it does whenever the limit was reached, even
// when no item follows (DynamoDB Local too).
func (t *table) run(q query) (keys []string, more bool) {
	p := t.parts[q.pk]
	if p == nil {
		return nil, false
	}
	all := p.sorted()
	in := func(sk string) bool {
		if q.prefix != "" && !strings.HasPrefix(sk, q.prefix) {
			return false
		}
		if q.from != "" && sk < q.from {
			return false
		}
		if q.to != "" && sk > q.to {
			return false
		}
		return true
	}
	visit := func(sk string) bool {
		if q.hasStart && (!q.desc && sk <= q.start || q.desc && sk >= q.start) {
			return true
		}
		if !in(sk) {
			return true
		}
		keys = append(keys, sk)
		return q.limit <= 0 || len(keys) < q.limit
	}
	if q.desc {
		for i := len(all) - 1; i >= 0; i-- {
			if !visit(all[i]) {
				return keys, true
			}
		}
	} else {
		for _, sk := range all {
			if !visit(sk) {
				return keys, true
			}
		}
	}
	return keys, false
}

// write is one write of a transaction (or of a lone conditional write):
// cond says whether it may happen given the item as it is (nil when it
// does not exist), apply returns the item as it leaves it (nil deletes
// it; an error is DynamoDB refusing the expression). A nil apply is a
// condition check; a nil cond always holds.
type write struct {
	pk, sk string
	cond   func(cur any) bool
	apply  func(cur any) (any, error)
}

// errValidation is the memstore's ValidationException: DynamoDB refused the
// request as malformed, and nothing was written.
var errValidation = errors.New("memstore: validation error (DynamoDB's ValidationException)")

func validation(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errValidation, fmt.Sprintf(format, args...))
}

// cancelled is a transaction (or a lone write) whose conditions failed:
// failed[i] is whether write i's did (DynamoDB reports every failed one).
type cancelled struct{ failed []bool }

func (c *cancelled) Error() string {
	codes := make([]string, len(c.failed))
	for i, f := range c.failed {
		codes[i] = "None"
		if f {
			codes[i] = "ConditionalCheckFailed"
		}
	}
	if len(c.failed) == 1 {
		return "memstore: the conditional request failed (ConditionalCheckFailedException)"
	}
	return "memstore: transaction cancelled " + fmt.Sprint(codes)
}

// at reports whether write i's condition failed.
func (c *cancelled) at(i int) bool { return i >= 0 && i < len(c.failed) && c.failed[i] }

func asCancelled(err error) (*cancelled, bool) {
	var c *cancelled
	ok := errors.As(err, &c)
	return c, ok
}

// checkKey refuses keys DynamoDB refuses.
func checkKey(pk, sk string) error {
	switch {
	case pk == "" || sk == "":
		return validation("a key attribute cannot be an empty string (%q, %q)", pk, sk)
	case len(pk) > maxPartitionKeyBytes:
		return validation("partition key of %d bytes, more than %d", len(pk), maxPartitionKeyBytes)
	case len(sk) > maxSortKeyBytes:
		return validation("sort key of %d bytes, more than %d", len(sk), maxSortKeyBytes)
	}
	return nil
}

// transact applies writes all or none, as TransactWriteItems (or, for one
// write, PutItem, UpdateItem or DeleteItem) does: a malformed request is a
// validation error; a failed condition a *cancelled naming every failed
// one; otherwise every write is applied. The caller holds the lock.
func (t *table) transact(ws []write) error {
	if len(ws) > maxTransactItems {
		return validation("a transaction of %d items, more than %d", len(ws), maxTransactItems)
	}
	seen := make(map[itemKey]bool, len(ws))
	for _, w := range ws {
		if err := checkKey(w.pk, w.sk); err != nil {
			return err
		}
		k := itemKey{w.pk, w.sk}
		if seen[k] {
			return validation("transaction request cannot include multiple operations on one item (%s, %s)", w.pk, w.sk)
		}
		seen[k] = true
	}
	failed := make([]bool, len(ws))
	anyFailed := false
	for i, w := range ws {
		if w.cond != nil && !w.cond(t.get(w.pk, w.sk)) {
			failed[i], anyFailed = true, true
		}
	}
	if anyFailed {
		return &cancelled{failed: failed}
	}
	out := make([]any, len(ws))
	for i, w := range ws {
		if w.apply == nil {
			continue
		}
		it, err := w.apply(t.get(w.pk, w.sk))
		if err != nil {
			return err
		}
		if it != nil {
			if err := checkSize(w.pk, w.sk, it); err != nil {
				return err
			}
		}
		out[i] = it
	}
	for i, w := range ws {
		if w.apply != nil {
			t.set(w.pk, w.sk, out[i])
		}
	}
	return nil
}

// one applies a lone write.
func (t *table) one(w write) error { return t.transact([]write{w}) }

// putIfAbsent is a put conditioned on the item not existing.
func putIfAbsent(pk, sk string, it any) write {
	return write{pk: pk, sk: sk, cond: absent, apply: func(any) (any, error) { return it, nil }}
}

// put is an unconditional put.
func put(pk, sk string, it any) write {
	return write{pk: pk, sk: sk, apply: func(any) (any, error) { return it, nil }}
}

// del is an unconditional delete.
func del(pk, sk string) write {
	return write{pk: pk, sk: sk, apply: func(any) (any, error) { return nil, nil }}
}

func absent(cur any) bool  { return cur == nil }
func present(cur any) bool { return cur != nil }

// checkBatch refuses what BatchGetItem and BatchWriteItem refuse of one
// request: the same key twice. Requests hold chunk keys at most, so a key
// repeated across requests is not refused.
func checkBatch(keys []itemKey, chunk int) error {
	for len(keys) > 0 {
		n := min(len(keys), chunk)
		seen := make(map[itemKey]bool, n)
		for _, k := range keys[:n] {
			if err := checkKey(k.pk, k.sk); err != nil {
				return err
			}
			if seen[k] {
				return validation("provided list of item keys contains duplicates (%s, %s)", k.pk, k.sk)
			}
			seen[k] = true
		}
		keys = keys[n:]
	}
	return nil
}

// Batch sizes of BatchGetItem and BatchWriteItem.
const (
	batchGetKeys   = 100
	batchWriteKeys = 25
)
