package api

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/maestro-serverless/maestro/orchestrator"
)

// The cursors of Maestro-style paged lists (first/last/cursor and
// page_info). Maestro's cursors are bare ids; here a cursor is opaque:
// the list it belongs to (its scope: which list of which workflow and
// instance), the id it stands at and when it was issued, with a check
// sum. A cursor that was altered, that belongs to another list (another
// workflow's, another instance's) or that is older than maxCursorAge is
// refused with 400, and no list is read with it. The sum is a SHA-256
// over the fields, not a keyed MAC: it catches edited and misplaced
// cursors; what any cursor can reach is the list of the request's own
// path, which the caller may read anyway.

// maxCursorAge is how long a cursor stays valid after the page that
// returned it.
const maxCursorAge = 24 * time.Hour

// cursorVersion prefixes the encoded fields, so the format can change.
const cursorVersion = "c1"

// cursorSumBytes is how many bytes of the SHA-256 a cursor carries.
const cursorSumBytes = 12

// maxCursorLen bounds the cursor parameter read: far above any cursor
// issued, far below what would cost anything to decode.
const maxCursorLen = 1024

// cursorSum is the check sum of a cursor's fields.
func cursorSum(fields string) []byte {
	sum := sha256.Sum256([]byte("maestro-page-cursor\x00" + fields))
	return sum[:cursorSumBytes]
}

// encodeCursor returns the cursor standing at id of the list scope,
// issued at now.
func encodeCursor(scope string, id int64, now time.Time) string {
	return encodeCursorAt(scope, strconv.FormatInt(id, 10), now)
}

// encodeCursorAt returns the cursor standing at position pos (an id, or
// a workflow id) of the list scope, issued at now.
func encodeCursorAt(scope, pos string, now time.Time) string {
	fields := strings.Join([]string{cursorVersion, scope, pos, strconv.FormatInt(now.Unix(), 10)}, "\x00")
	return base64.RawURLEncoding.EncodeToString(append([]byte(fields), cursorSum(fields)...))
}

// badCursor is the 400 answer to a cursor that breaks rule.
func badCursor(rule string) error {
	return orchestrator.Invalid("bad cursor", "cursor: "+rule)
}

// decodeCursor returns the id cursor raw stands at (decodeCursorAt), a
// positive integer.
func decodeCursor(raw, scope string, now time.Time) (int64, error) {
	pos, err := decodeCursorAt(raw, scope, now)
	if err != nil {
		return 0, err
	}
	id, err := strconv.ParseInt(pos, 10, 64)
	if err != nil || id < 1 {
		return 0, badCursor("is not a cursor this API returned")
	}
	return id, nil
}

// decodeCursorAt returns the position cursor raw stands at, checking that
// it is one encodeCursorAt issued for the list scope at most maxCursorAge
// before now; a refusal is a 400 naming the cursor parameter and the rule.
func decodeCursorAt(raw, scope string, now time.Time) (string, error) {
	if len(raw) > maxCursorLen {
		return "", badCursor(fmt.Sprintf("is longer than %d characters", maxCursorLen))
	}
	b, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil || len(b) <= cursorSumBytes {
		return "", badCursor("is not a cursor this API returned (take start_cursor or end_cursor from page_info)")
	}
	fields, sum := string(b[:len(b)-cursorSumBytes]), b[len(b)-cursorSumBytes:]
	if subtle.ConstantTimeCompare(sum, cursorSum(fields)) != 1 {
		return "", badCursor("has been altered: it is not a cursor this API returned")
	}
	parts := strings.Split(fields, "\x00")
	if len(parts) != 4 || parts[0] != cursorVersion || parts[2] == "" {
		return "", badCursor("is not a cursor this API returned")
	}
	if parts[1] != scope {
		return "", badCursor("belongs to another list; a cursor continues only the list (workflow, instance) that returned it")
	}
	issued, err := strconv.ParseInt(parts[3], 10, 64)
	if err != nil {
		return "", badCursor("is not a cursor this API returned")
	}
	if age := now.Sub(time.Unix(issued, 0)); age > maxCursorAge {
		return "", badCursor(fmt.Sprintf("has expired: cursors are valid for %s; start again without one", maxCursorAge))
	}
	return parts[2], nil
}
