package schemas

// Page is the answer of every list: at most the requested number of items
// and the opaque cursor of the next page, null when the list is exhausted.
type Page[T any] struct {
	Items      []T     `json:"items" required:"true" nullable:"false"`
	NextCursor *string `json:"nextCursor" required:"true"`
}
