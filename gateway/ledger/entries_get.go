package ledger

import (
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/ledger"
	"github.com/fintech/platform/storage/postgres"
)

// entryPath is the request of GET /entries/:id.
type entryPath struct {
	ID string `path:"id" json:"-" format:"ksuid"`
}

// get answers one entry with its neighbours in the chain.
func (h *Handlers) get(c *fiber.Ctx, req *entryPath) error {
	id := req.ID
	if !utf8.ValidString(id) || strings.ContainsRune(id, 0) {
		return apierr.NotFound("no ledger entry with this id")
	}
	ec, err := h.reads.ByID(c.UserContext(), id)
	if errors.Is(err, postgres.ErrNotFound) {
		return apierr.NotFound("no ledger entry with this id")
	}
	if err != nil {
		return err
	}
	out := schemas.LedgerEntryInChain{LedgerEntry: ec.Entry.JSON(),
		Chain: schemas.LedgerChainContext{PreviousHash: store.GenesisPrevHash, Linked: true}}
	if p := ec.Previous; p != nil {
		out.Chain.PreviousID, out.Chain.PreviousHash = &p.ID, p.Hash
	}
	out.Chain.Linked = out.Chain.PreviousHash == ec.Entry.PrevHash
	if n := ec.Next; n != nil {
		out.Chain.NextID, out.Chain.NextHash = &n.ID, &n.Hash
		out.Chain.Linked = out.Chain.Linked && n.PrevHash == ec.Entry.Hash
	}
	return c.JSON(out)
}
