package charity

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/gateway/commands"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/topics"
)

var errWalletNotFound = apierr.New(http.StatusNotFound, schemas.CodeWalletNotFound, "no such wallet")

// donateRequest is a donation to one campaign.
type donateRequest struct {
	ID        string      `path:"id" json:"-" format:"ksuid"`
	WalletID  string      `json:"walletId" required:"true" minLength:"1" maxLength:"1000" description:"the caller's own KZT wallet"`
	AmountKzt bind.Amount `json:"amountKzt" required:"true"`
	Anonymous bool        `json:"anonymous" description:"keep the donor's name out of every public read"`
	Message   string      `json:"message" maxLength:"500"`
}

// donate moves amountKzt from the caller's KZT wallet to the campaign's
// platform-held wallet. The gateway assigns the donation id and the ledger
// entry id (the id the entry gets), then sends the donation on fiat.commands
// keyed by the donor's wallet; the fiat consumer applies it in its batch
// (debit, credit, donation row, events, ledger and reputation emissions in
// one transaction) and answers 201 with donationId, ledgerEntryId,
// transactionId, campaignTotalKzt and thankYouUrl. An Idempotency-Key makes
// a retry return the original answer.
func (h *Handlers) donate(c *fiber.Ctx, req *donateRequest) error {
	var v bind.Validator
	walletID := strings.TrimSpace(req.WalletID) // walletId and message are bound by their tags
	amount := v.Amount("amountKzt", req.AmountKzt)
	message := strings.TrimSpace(req.Message)
	idem := c.Get("Idempotency-Key")
	if len(idem) > commands.MaxIdempotencyKey {
		v.Fail("Idempotency-Key", "must be at most 255 characters")
	}
	if err := v.Err(); err != nil {
		return err
	}
	camp, err := h.campaign(c, req.ID, false)
	if err != nil {
		return err
	}
	now := h.now().UTC()
	if statusOf(camp, now) != schemas.CampaignActive {
		return apierr.New(http.StatusConflict, schemas.CodeCampaignNotActive, "the campaign is "+statusOf(camp, now)+", not active")
	}
	user := caller(c)
	// Only the caller's own user wallet is ever sent: the consumer locks the
	// wallet named here, and a platform-held wallet must never be locked
	// with the donors' (it is a hot row, credited at the end of a batch).
	owner, kind, err := h.reader.WalletOwner(c.UserContext(), walletID)
	switch {
	case isNotFound(err) || (err == nil && (owner != user || kind != "user")):
		return errWalletNotFound
	case err != nil:
		return err
	}
	d := schemas.CharityDonate{
		DonationID: schemas.NewID(), LedgerEntryID: schemas.NewID(),
		CampaignID: camp.ID, CampaignWalletID: camp.WalletID, Category: camp.Category, GoalKzt: camp.GoalKzt,
		ProposerUserID: camp.ProposerUserID, EndsAt: camp.EndsAt,
		DonorUserID: user, WalletID: walletID, AmountKzt: amount, Anonymous: req.Anonymous, Message: message,
	}
	d.ThankYouURL = h.cfg.PublicBaseURL + Prefix + "/campaigns/" + url.PathEscape(camp.ID) + "?thanks=" + d.DonationID
	if err := d.Validate(); err != nil {
		return fmt.Errorf("charity donation: %w", err) // the consumer would refuse it: a programming error
	}
	env, err := schemas.New(schemas.TypeCharityDonate, walletID, user, d, now)
	if err != nil {
		return err
	}
	return commands.Exchange(c, h.sender, topics.FiatCommands, env,
		commands.RequestIdempotency(c, user, "POST "+Prefix+"/campaigns/"+camp.ID+"/donations"))
}
