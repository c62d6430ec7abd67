package engine

import (
	"context"

	"github.com/maestro-serverless/maestro/model"
)

// A foreach step with items_from (model.ItemsFrom) takes its iterations
// from an S3 object: one item an iteration, the item's fields its loop
// params. The engine reads the object through an ItemsReader, the
// StepParams reader given with WithStepParams implementing it too: once
// whole at the loop's start (ScanItems: every item checked and counted,
// nothing kept), then in ranges as iterations launch (ReadItems, from a
// cursor the loop's state keeps), never the whole object in memory.

// MaxItemBytes bounds one item of an items_from object (a JSON line, a CSV
// row, an element of a JSON array): its fields become an iteration's run
// params, stored in the iteration's items.
const MaxItemBytes = 64 << 10

// ItemsSource is an items_from object as a loop reads it: its URI with the
// step's params put in, its format, and the fields its items must have.
type ItemsSource struct {
	URI    string                     `json:"uri"`
	Format string                     `json:"format"`
	Fields map[string]model.ParamType `json:"fields,omitempty"`
}

// ItemsCursor is a place in an items_from object where an item begins:
// item Index (0-based) starts at byte Offset, on line Line (1-based). For a
// JSON array Offset is just past the previous element (or the opening
// bracket), before the separating comma.
type ItemsCursor struct {
	Index  int64 `json:"index"`
	Offset int64 `json:"offset"`
	Line   int64 `json:"line,omitempty"`
}

// ItemsObject is what a loop keeps of its items_from object, from the scan
// at its start: how many items it has, its version (ETag: later reads fail
// if the object changed), its size, a CSV object's header and where the
// first item begins.
type ItemsObject struct {
	Total  int64       `json:"total"`
	ETag   string      `json:"etag,omitempty"`
	Size   int64       `json:"size"`
	Header []string    `json:"header,omitempty"`
	First  ItemsCursor `json:"first"`
}

// LoopItems is the state of a foreach loop fed by items_from: the object,
// the cursor at item LoopState.Next, and, while a restart's iterations are
// pending, the cursor from which the next pending one is sought.
type LoopItems struct {
	Source    ItemsSource  `json:"source"`
	Object    ItemsObject  `json:"object"`
	At        ItemsCursor  `json:"at"`
	PendingAt *ItemsCursor `json:"pending_at,omitempty"`
}

func (l *LoopItems) clone() *LoopItems {
	if l == nil {
		return nil
	}
	c := *l
	if l.PendingAt != nil {
		p := *l.PendingAt
		c.PendingAt = &p
	}
	return &c
}

// ItemsReader reads items_from objects.
//
// ScanItems reads the whole object once, in order, checking every item
// (an object of at most MaxItemBytes, with the source's Fields of their
// types, CSV rows as wide as the header) and counting them, at most
// MaxIterations; it keeps no item.
//
// ReadItems returns the items whose indices are in want (ascending, none
// below at.Index), as iteration params (JSON values typed as params are,
// CSV values STRING), read from cursor at on, and the cursor just past the
// last one. It fails if the object is no longer the one scanned (obj.ETag).
//
// An error that is the object's (missing, unreadable for the stack, a bad
// or too-large item, changed since the scan) is an *ItemsError, which
// fails the foreach step with its message; any other error (a read that
// failed) fails the decision, which is tried again.
type ItemsReader interface {
	ScanItems(ctx context.Context, src ItemsSource) (ItemsObject, error)
	ReadItems(ctx context.Context, src ItemsSource, obj ItemsObject, at ItemsCursor, want []int64) ([]Values, ItemsCursor, error)
}

// ItemsError is an items_from object's fault: it fails the step.
type ItemsError struct {
	Msg string
}

func (e *ItemsError) Error() string { return e.Msg }
