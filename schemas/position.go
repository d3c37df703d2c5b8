package schemas

import (
	"strings"
	"time"
)

// Position is a place in a list ordered newest first by creation time, then
// id: ids are ksuids, whose time part has one-second resolution, so within
// one second only the creation time (kept to the microsecond by Postgres)
// gives the order. A cursor carries both.
type Position struct {
	At time.Time
	ID string
}

// positionLayout keeps the microseconds Postgres stores.
const positionLayout = "2006-01-02T15:04:05.000000Z"

// IsZero reports a position before the first item (no cursor).
func (p Position) IsZero() bool { return p.ID == "" }

// String encodes the position for a cursor: the time, a space, the id.
func (p Position) String() string {
	return p.At.UTC().Format(positionLayout) + " " + p.ID
}

// ParsePosition reads what String wrote; ok is false for anything else.
func ParsePosition(s string) (Position, bool) {
	at, id, found := strings.Cut(s, " ")
	if !found || !IsID(id) {
		return Position{}, false
	}
	t, err := time.Parse(positionLayout, at)
	if err != nil {
		return Position{}, false
	}
	return Position{At: t, ID: id}, true
}
