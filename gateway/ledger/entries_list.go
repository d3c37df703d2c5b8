package ledger

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/ledger"
)

// listRequest is the query of GET /entries.
type listRequest struct {
	bind.Paging
	Kind        string `query:"kind" json:"-" description:"only entries of this kind"`
	ActorUserID string `query:"actorUserId" json:"-" description:"only entries of this actor"`
	Since       string `query:"since" json:"-" format:"date-time" description:"only entries at or after this time"`
	afterHeight int64
	since       *time.Time
}

// Validate reads the page (its cursor holds a chain height) and the
// filters.
func (req *listRequest) Validate() error {
	if err := req.Paging.Validate(); err != nil {
		return err
	}
	if after := req.Page().After; after != "" {
		n, err := strconv.ParseInt(after, 10, 64)
		if err != nil || n < 0 {
			return apierr.InvalidCursor()
		}
		req.afterHeight = n
	}
	var v bind.Validator
	if req.Since != "" {
		t, err := time.Parse(time.RFC3339Nano, req.Since)
		v.Check(err == nil, "since", "must be an ISO 8601 timestamp such as 2026-01-02T15:04:05Z")
		req.since = &t
	}
	v.Check(utf8.ValidString(req.Kind) && !strings.ContainsRune(req.Kind, 0), "kind", "must be valid text")
	v.Check(utf8.ValidString(req.ActorUserID) && !strings.ContainsRune(req.ActorUserID, 0), "actorUserId", "must be valid text")
	return v.Err()
}

// list answers entries in chain order, a page at a time.
func (h *Handlers) list(c *fiber.Ctx, req *listRequest) error {
	limit := req.Page().Limit
	es, err := h.reads.List(c.UserContext(), store.Filter{Kind: req.Kind, ActorUserID: req.ActorUserID,
		AfterHeight: req.afterHeight, Since: req.since, Limit: limit})
	if err != nil {
		return err
	}
	return c.JSON(bind.PageOf(es, limit, func(e store.Entry) string { return strconv.FormatInt(e.Height, 10) },
		func(e store.Entry) schemas.LedgerEntry { return e.JSON() }))
}
