package loopitems

import (
	"encoding/csv"
	"errors"
	"io"
	"strings"

	"github.com/maestro-serverless/maestro/engine"
)

// maxHeaderBytes bounds the header of a CSV object.
const maxHeaderBytes = 16 << 10

// csvItems reads the rows of a CSV object after its header.
type csvItems struct {
	src    *source
	cr     *chunkReader
	r      *csv.Reader
	header []string
	base   engine.ItemsCursor // where r starts
	at     engine.ItemsCursor // just past the last row read
}

// newCSVItems reads the rows from at on; cr is positioned at at.Offset.
func newCSVItems(src *source, cr *chunkReader, header []string, at engine.ItemsCursor) *csvItems {
	r := csv.NewReader(cr)
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	return &csvItems{src: src, cr: cr, r: r, header: header, base: at, at: at}
}

// openCSV reads and checks the header of a CSV object read by cr from its
// start, and returns the reader of its rows: with a nil header when the
// object is empty.
func openCSV(src *source, cr *chunkReader) (*csvItems, error) {
	c := newCSVItems(src, cr, nil, engine.ItemsCursor{Line: 1})
	rec, line, err := c.record(maxHeaderBytes, "header")
	if errors.Is(err, io.EOF) {
		return c, nil
	}
	if err != nil {
		return nil, err
	}
	where := lineName(line)
	header := make([]string, len(rec))
	seen := make(map[string]bool, len(rec))
	for i, name := range rec {
		if i == 0 {
			name = strings.TrimPrefix(name, "\ufeff") // a byte order mark
		}
		if err := checkName(name); err != nil {
			return nil, src.fail(where, "CSV header: %v", err)
		}
		if seen[name] {
			return nil, src.fail(where, "CSV header: field %q is named twice", name)
		}
		seen[name] = true
		header[i] = name
	}
	for _, name := range src.declared {
		if !seen[name] {
			return nil, src.fail(where, "CSV header: no field %q (declared %s)", name, src.fields[name])
		}
	}
	c.header = header
	c.at.Index = 0
	return c, nil
}

func (c *csvItems) cursor() engine.ItemsCursor { return c.at }

func (c *csvItems) finish() error { return nil }

// next implements items.
func (c *csvItems) next(decode bool) (engine.Values, bool, error) {
	rec, line, err := c.record(engine.MaxItemBytes, "item")
	if errors.Is(err, io.EOF) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if len(rec) != len(c.header) {
		return nil, false, c.src.fail(lineName(line), "%d fields, the header has %d", len(rec), len(c.header))
	}
	if !decode {
		return nil, true, nil
	}
	item := make(engine.Values, len(rec))
	for i, name := range c.header {
		item[name] = rec[i]
	}
	return item, true, nil
}

// record reads the next record, of at most limit bytes (what is beyond
// limit is not read), and moves the cursor past it; line is where it
// starts. Blank lines before it count toward its size. At the end it
// returns io.EOF.
func (c *csvItems) record(limit int64, what string) (rec []string, line int64, err error) {
	start := c.at
	// A record may end in "\r\n"; one more byte tells it is not longer.
	c.cr.setLimit(start.Offset + limit + 3)
	rec, err = c.r.Read()
	var pe *csv.ParseError
	switch {
	case errors.Is(err, io.EOF):
		return nil, 0, io.EOF
	case errors.Is(err, errLimit) || (errors.As(err, &pe) && c.cr.pos >= c.cr.limit):
		return nil, 0, c.src.fail(lineName(start.Line), "%s larger than %d bytes", what, limit)
	case pe != nil:
		return nil, 0, c.src.fail(lineName(c.base.Line-1+int64(pe.StartLine)), "%v", pe.Err)
	case err != nil:
		return nil, 0, err
	}
	first, _ := c.r.FieldPos(0)
	line = c.base.Line - 1 + int64(first)
	end := c.base.Offset + c.r.InputOffset()
	if end-start.Offset > limit+2 {
		return nil, 0, c.src.fail(lineName(line), "%s larger than %d bytes", what, limit)
	}
	newlines := 0
	for _, f := range rec {
		newlines += strings.Count(f, "\n")
	}
	c.at = engine.ItemsCursor{Index: start.Index + 1, Offset: end, Line: line + int64(newlines) + 1}
	return rec, line, nil
}
