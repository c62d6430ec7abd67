package loopitems

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/maestro-serverless/maestro/engine"
)

// jsonArrayItems reads the elements of a JSON array object one at a time:
// it finds each element's extent itself (brackets and strings), holding at
// most engine.MaxItemBytes of it, then decodes it whole.
type jsonArrayItems struct {
	src  *source
	br   *bufio.Reader
	at   engine.ItemsCursor // just past the last element read (or '[')
	pos  int64              // the offset of the next byte of br
	line int64              // the line of pos
	buf  []byte
	done bool // the closing bracket was read
}

// newJSONArrayItems reads the elements from at on; r is positioned at
// at.Offset, just past an element (or, for item 0, the opening bracket).
func newJSONArrayItems(src *source, r io.Reader, at engine.ItemsCursor) *jsonArrayItems {
	return &jsonArrayItems{src: src, br: bufio.NewReaderSize(r, 64<<10), at: at, pos: at.Offset, line: at.Line}
}

// openJSONArray reads the opening bracket of a JSON array object read from
// its start by r. An object of only whitespace has no items.
func openJSONArray(src *source, r io.Reader) (*jsonArrayItems, error) {
	j := newJSONArrayItems(src, r, engine.ItemsCursor{Line: 1})
	c, err := j.skipSpace()
	switch {
	case errors.Is(err, io.EOF):
		j.done = true
		return j, nil
	case err != nil:
		return nil, err
	case c != '[':
		return nil, src.fail(lineName(j.line), "not a JSON array")
	}
	j.at = engine.ItemsCursor{Offset: j.pos, Line: j.line}
	return j, nil
}

func (j *jsonArrayItems) cursor() engine.ItemsCursor { return j.at }

// next implements items.
func (j *jsonArrayItems) next(decode bool) (engine.Values, bool, error) {
	if j.done {
		return nil, false, nil
	}
	c, err := j.skipSpace()
	if c == ']' && err == nil {
		j.done = true
		return nil, false, nil
	}
	if j.at.Index > 0 && err == nil {
		if c != ',' {
			return nil, false, j.src.fail(j.where(), "want ',' or ']' after item %d, got %q", j.at.Index-1, c)
		}
		c, err = j.skipSpace()
	}
	if errors.Is(err, io.EOF) {
		return nil, false, j.src.fail(j.where(), "the array is not closed")
	}
	if err != nil {
		return nil, false, err
	}
	where := j.where()
	if c != '{' {
		return nil, false, j.src.fail(where, "not a JSON object")
	}
	if err := j.element(where); err != nil {
		return nil, false, err
	}
	j.at = engine.ItemsCursor{Index: j.at.Index + 1, Offset: j.pos, Line: j.line}
	if !decode {
		return nil, true, nil
	}
	v, err := j.src.decodeObject(j.buf)
	if err != nil {
		return nil, false, j.src.fail(where, "%v", err)
	}
	return v, true, nil
}

// where names the item beginning with the byte last read.
func (j *jsonArrayItems) where() string {
	return fmt.Sprintf("line %d, item %d (byte %d)", j.line, j.at.Index, j.pos-1)
}

// element reads the rest of an object whose '{' was just read into buf,
// up to its matching '}'.
func (j *jsonArrayItems) element(where string) error {
	j.buf = append(j.buf[:0], '{')
	depth, inString, escaped := 1, false, false
	for depth > 0 {
		b, err := j.readByte()
		if errors.Is(err, io.EOF) {
			return j.src.fail(where, "not a JSON object: the object is not closed")
		}
		if err != nil {
			return err
		}
		if len(j.buf) == engine.MaxItemBytes {
			return j.src.tooLarge(where)
		}
		j.buf = append(j.buf, b)
		switch {
		case escaped:
			escaped = false
		case inString:
			escaped = b == '\\'
			inString = b != '"'
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			depth++
		case b == '}' || b == ']':
			depth--
		}
	}
	return nil
}

// finish checks that only whitespace follows the array.
func (j *jsonArrayItems) finish() error {
	if !j.done {
		return nil
	}
	c, err := j.skipSpace()
	switch {
	case errors.Is(err, io.EOF):
		return nil
	case err != nil:
		return err
	}
	return j.src.fail(fmt.Sprintf("line %d (byte %d)", j.line, j.pos-1), "data after the array: %q", c)
}

// skipSpace reads up to the first byte that is not JSON whitespace and
// returns it.
func (j *jsonArrayItems) skipSpace() (byte, error) {
	for {
		b, err := j.readByte()
		if err != nil || (b != ' ' && b != '\t' && b != '\r' && b != '\n') {
			return b, err
		}
	}
}

func (j *jsonArrayItems) readByte() (byte, error) {
	b, err := j.br.ReadByte()
	if err != nil {
		return 0, err
	}
	j.pos++
	if b == '\n' {
		j.line++
	}
	return b, nil
}
