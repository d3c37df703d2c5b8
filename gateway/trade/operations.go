package trade

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/csv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/trade"
)

// listOperationsRequest is a page of the caller's operations.
type listOperationsRequest struct{ bind.TimePaging }

// listOperations answers the caller's operations (top-ups, transfers sent
// and received), newest first: { items, total, nextCursor }.
func (h *Handlers) listOperations(c *fiber.Ctx, req *listOperationsRequest) error {
	p := req.Page()
	out := schemas.TradeOperationList{Items: []schemas.TradeOperation{}}
	acc, err := h.accounts.ByUser(c.UserContext(), caller(c).UserID)
	if store.IsNotFound(err) {
		return c.JSON(out)
	}
	if err != nil {
		return err
	}
	rows, err := h.accounts.Operations(c.UserContext(), acc.ID, req.Position(), p.Limit+1)
	if err != nil {
		return err
	}
	if out.Total, err = h.accounts.CountOperations(c.UserContext(), acc.ID); err != nil {
		return err
	}
	if len(rows) > p.Limit {
		rows = rows[:p.Limit]
		last := rows[len(rows)-1]
		next := bind.Cursor(schemas.Position{At: last.CreatedAt, ID: last.ID}.String())
		out.NextCursor = &next
	}
	for _, r := range rows {
		out.Items = append(out.Items, r.View())
	}
	return c.JSON(out)
}

// paging is the cursor and limit of the module's lists; a cursor this API
// did not issue (not base64url of an id) is 400 invalid_cursor
// (decisions.md, Security), never a database error.
type paging struct{ bind.Paging }

// Validate checks the cursor names an id, then reads the page.
func (p *paging) Validate() error {
	if p.Cursor != "" {
		raw, err := base64.RawURLEncoding.DecodeString(p.Cursor)
		if err != nil || !idPattern.Match(raw) {
			return apierr.InvalidCursor()
		}
	}
	return p.Paging.Validate()
}

// csvHeader is the header row of the CSV export (decisions.md).
var csvHeader = []string{"id", "kind", "amount", "from", "to", "createdAt"}

// operationsCSV streams every operation of the caller's account (the set of
// /operations, unpaged, newest first) as RFC 4180 CSV with CRLF line ends
// and no BOM. Rows go from the database cursor to the connection as they are
// read, flushed every 500 rows: memory stays constant for any history.
func (h *Handlers) operationsCSV(c *fiber.Ctx, _ *server.NoRequest) error {
	acc, err := h.accounts.ByUser(c.UserContext(), caller(c).UserID)
	accountID := acc.ID
	if err != nil && !store.IsNotFound(err) {
		return err
	}
	c.Set(fiber.HeaderContentType, "text/csv; charset=utf-8")
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="operations.csv"`)
	accounts := h.accounts
	c.Context().SetBodyStreamWriter(func(bw *bufio.Writer) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		w := csv.NewWriter(bw)
		w.UseCRLF = true
		_ = w.Write(csvHeader)
		if accountID == "" {
			w.Flush()
			_ = bw.Flush()
			return
		}
		n := 0
		row := make([]string, len(csvHeader))
		err := accounts.StreamOperations(ctx, accountID, func(o store.OperationRow) error {
			from := ""
			if o.From != nil {
				from = *o.From
			}
			row[0], row[1], row[2], row[3], row[4], row[5] = o.ID, o.Kind, schemas.FormatTNU(o.Amount), from, o.To,
				o.CreatedAt.UTC().Format(time.RFC3339Nano)
			if err := w.Write(row); err != nil {
				return err
			}
			if n++; n%500 == 0 {
				w.Flush()
				if err := w.Error(); err != nil {
					return err
				}
				return bw.Flush()
			}
			return nil
		})
		w.Flush()
		_ = bw.Flush()
		_ = err // the status line is gone; a broken stream ends the body early
	})
	return nil
}
