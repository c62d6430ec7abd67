package engine

import (
	"errors"
	"fmt"

	"github.com/maestro-serverless/maestro/engine/expression"
	"github.com/maestro-serverless/maestro/model"
)

// loopSource is where the params of a foreach loop's iterations come from:
// the arrays of its loop_params (their cartesian product), or the items of
// an items_from object (items: the loop state's, whose cursors params
// moves on).
type loopSource struct {
	names  []string
	arrays []any
	items  *LoopItems
	total  int64
}

// none says why a loop with no iterations has none.
func (src *loopSource) none() string {
	if src.items != nil {
		return "the items_from object has no items"
	}
	return "a loop param is empty"
}

// startSource is the source of foreach step i as it starts: its loop
// params, or its items_from object, scanned whole (every item checked and
// counted).
func (d *decider) startSource(i int) (*loopSource, error) {
	f := d.g.nodes[i].step.ItemsFrom
	if f == nil {
		return d.arraysSource(i)
	}
	src, err := d.itemsSource(i, f)
	if err != nil {
		return nil, err
	}
	r, err := d.itemsReader()
	if err != nil {
		return nil, err
	}
	obj, err := r.ScanItems(d.ctx, src)
	if err != nil {
		return nil, d.itemsFailure(err)
	}
	return &loopSource{items: &LoopItems{Source: src, Object: obj, At: obj.First}, total: obj.Total}, nil
}

// loopSourceOf is the source of running foreach step i.
func (d *decider) loopSourceOf(i int) (*loopSource, error) {
	if it := d.st.Steps[i].Loop.Items; it != nil {
		return &loopSource{items: it, total: it.Object.Total}, nil
	}
	return d.arraysSource(i)
}

func (d *decider) arraysSource(i int) (*loopSource, error) {
	names, arrays, total, err := d.loopArrays(i)
	if err != nil {
		return nil, err
	}
	return &loopSource{names: names, arrays: arrays, total: total}, nil
}

// itemsSource is step i's items_from with the step's params (else the
// workflow's) put into its URI.
func (d *decider) itemsSource(i int, f *model.ItemsFrom) (ItemsSource, error) {
	s := &d.st.Steps[i]
	uri, err := expression.Interpolate(f.S3URI, func(name string) (any, bool) {
		if v, ok := s.Params[name]; ok {
			return v, true
		}
		v, ok := d.st.Params[name]
		return v, ok
	})
	if err != nil {
		return ItemsSource{}, fmt.Errorf("items_from s3_uri: %w", err)
	}
	if _, _, err := model.ParseS3URI(uri); err != nil {
		return ItemsSource{}, fmt.Errorf("items_from s3_uri: %w", err)
	}
	src := ItemsSource{URI: uri, Format: f.ItemsFormat(uri), Fields: f.Fields}
	if src.Format == "" {
		return ItemsSource{}, fmt.Errorf("items_from: %s does not end in .jsonl, .ndjson, .csv or .json and no format is given", uri)
	}
	return src, nil
}

// itemsReader is the reader of items_from objects the decision was given.
// Without one the decision fails (the runtime's fault, not the step's).
func (d *decider) itemsReader() (ItemsReader, error) {
	r, ok := d.paramsReader.(ItemsReader)
	if !ok {
		err := errors.New("items_from: this runtime was given no reader of S3 objects")
		if d.loadErr == nil {
			d.loadErr = err
		}
		return nil, err
	}
	return r, nil
}

// itemsFailure sorts a reader's error: the object's fault (ItemsError)
// fails the step; any other fails the decision (loadErr), to be tried
// again.
func (d *decider) itemsFailure(err error) error {
	var ie *ItemsError
	if !errors.As(err, &ie) && d.loadErr == nil {
		d.loadErr = err
	}
	return err
}

// params returns the run params of step i's iterations again (a restart's
// pending ones, ascending) then fresh (the next ones, from l.Next), for
// items_from reading them from the loop's cursors and moving those on.
func (src *loopSource) params(d *decider, i int, again, fresh []int64) ([]Values, error) {
	out := make([]Values, 0, len(again)+len(fresh))
	if src.items == nil {
		for _, idx := range append(append([]int64(nil), again...), fresh...) {
			out = append(out, d.iterationParams(i, src.names, src.arrays, idx))
		}
		return out, nil
	}
	it := src.items
	read := func(at *ItemsCursor, want []int64) error {
		if len(want) == 0 {
			return nil
		}
		r, err := d.itemsReader()
		if err != nil {
			return err
		}
		items, next, err := r.ReadItems(d.ctx, it.Source, it.Object, *at, want)
		if err != nil {
			return d.itemsFailure(err)
		}
		if len(items) != len(want) {
			return d.itemsFailure(fmt.Errorf("items_from %s: read %d items, want %d", it.Source.URI, len(items), len(want)))
		}
		for k, item := range items {
			out = append(out, d.itemParams(i, want[k], item))
		}
		*at = next
		return nil
	}
	if len(again) > 0 {
		if it.PendingAt == nil || it.PendingAt.Index > again[0] {
			first := it.Object.First
			it.PendingAt = &first
		}
		if err := read(it.PendingAt, again); err != nil {
			return nil, err
		}
	}
	if len(fresh) > 0 && it.At.Index > fresh[0] {
		return nil, d.itemsFailure(fmt.Errorf("items_from %s: the cursor is past item %d, at %d", it.Source.URI, fresh[0], it.At.Index))
	}
	// A restarted loop's cursor starts at the first item and seeks the
	// first one never launched as it reads.
	if err := read(&it.At, fresh); err != nil {
		return nil, err
	}
	return out, nil
}

// firstParams returns the run params of step i's first iteration, leaving
// the cursors as they are.
func (src *loopSource) firstParams(d *decider, i int) (Values, error) {
	if src.items == nil {
		return d.iterationParams(i, src.names, src.arrays, 0), nil
	}
	it := *src.items
	it.PendingAt = nil
	one := &loopSource{items: &it, total: src.total}
	ps, err := one.params(d, i, nil, []int64{0})
	if err != nil {
		return nil, err
	}
	return ps[0], nil
}

// itemParams returns the run params of iteration idx of step i whose item
// is item: what the step passes down, loop_index and the item's fields.
func (d *decider) itemParams(i int, idx int64, item Values) Values {
	out := d.passedDown(i, true)
	out[LoopIndexName] = idx
	for k, v := range item {
		out[k] = v
	}
	return out
}
