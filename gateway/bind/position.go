package bind

import (
	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/schemas"
)

// TimePaging is Paging for lists ordered newest first by creation time,
// then id (schemas.Position): a cursor that does not hold such a position
// is 400 invalid_cursor.
type TimePaging struct {
	Paging
	pos schemas.Position
}

// Validate parses the cursor and limit and reads the position.
func (p *TimePaging) Validate() error {
	if err := p.Paging.Validate(); err != nil {
		return err
	}
	if p.page.After == "" {
		return nil
	}
	pos, ok := schemas.ParsePosition(p.page.After)
	if !ok {
		return apierr.InvalidCursor()
	}
	p.pos = pos
	return nil
}

// Position is the place the page starts after (after Validate); zero
// without a cursor.
func (p *TimePaging) Position() schemas.Position { return p.pos }

// PositionCursor reads a position cursor outside a request type: 400
// invalid_cursor for anything else; the zero position for "".
func PositionCursor(cursor string) (schemas.Position, error) {
	if cursor == "" {
		return schemas.Position{}, nil
	}
	raw, err := DecodeCursor(cursor)
	if err != nil {
		return schemas.Position{}, err
	}
	pos, ok := schemas.ParsePosition(raw)
	if !ok {
		return schemas.Position{}, apierr.InvalidCursor()
	}
	return pos, nil
}
