package loopitems

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/jsonnum"
)

// jsonlItems reads the items of a JSON lines object: one JSON object a
// non-blank line.
type jsonlItems struct {
	src *source
	br  *bufio.Reader
	at  engine.ItemsCursor // where the next line begins
}

// newJSONLItems reads from at on; r is positioned at at.Offset. Its buffer
// holds the longest line allowed, with "\r\n".
func newJSONLItems(src *source, r io.Reader, at engine.ItemsCursor) *jsonlItems {
	return &jsonlItems{src: src, br: bufio.NewReaderSize(r, engine.MaxItemBytes+2), at: at}
}

func (j *jsonlItems) cursor() engine.ItemsCursor { return j.at }

// next implements items.
func (j *jsonlItems) next(decode bool) (engine.Values, bool, error) {
	for {
		line, err := j.br.ReadSlice('\n')
		lineNo := j.at.Line
		switch {
		case errors.Is(err, bufio.ErrBufferFull) || errors.Is(err, errLimit):
			return nil, false, j.src.tooLarge(lineName(lineNo))
		case err != nil && !errors.Is(err, io.EOF):
			return nil, false, err
		case len(line) == 0:
			return nil, false, nil
		}
		j.at.Offset += int64(len(line))
		if line[len(line)-1] == '\n' {
			j.at.Line++
		}
		text := bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if len(text) > engine.MaxItemBytes {
			return nil, false, j.src.tooLarge(lineName(lineNo))
		}
		if len(bytes.Trim(text, " \t\r")) == 0 {
			continue
		}
		j.at.Index++
		if !decode {
			return nil, true, nil
		}
		v, err := j.src.decodeObject(text)
		if err != nil {
			return nil, false, j.src.fail(lineName(lineNo), "%v", err)
		}
		return v, true, nil
	}
}

// decodeObject decodes text, one JSON object, into an item's params.
func (s *source) decodeObject(text []byte) (engine.Values, error) {
	var v any
	if err := jsonnum.Decode(text, &v); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("not a JSON object but %s", jsonKind(v))
	}
	return s.item(m)
}

// jsonKind names the sort of a decoded JSON value.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	default:
		return "a number"
	}
}

func (j *jsonlItems) finish() error { return nil }

// lineName names line n of an object in an error.
func lineName(n int64) string { return fmt.Sprintf("line %d", n) }
