package gov

import (
	"github.com/fintech/platform/gateway/bind"
)

// listResponse is the shape of the module's lists: a page of items and the
// cursor of the next page (null once exhausted).
type listResponse[T any] struct {
	Items      []T     `json:"items"`
	NextCursor *string `json:"nextCursor"`
}

// page trims a result fetched with limit+1 rows and computes the next cursor.
func page[R, T any](rows []R, limit int, id func(R) string, conv func(R) T) listResponse[T] {
	out := listResponse[T]{Items: make([]T, 0, min(len(rows), limit))}
	if len(rows) > limit {
		rows = rows[:limit]
		next := bind.Cursor(id(rows[len(rows)-1]))
		out.NextCursor = &next
	}
	for _, r := range rows {
		out.Items = append(out.Items, conv(r))
	}
	return out
}
