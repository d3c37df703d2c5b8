package fiat

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/fiat"
)

// registerAdmin mounts the fiat admins' routes: reconciliation, the audit
// log, wallet freezes, payout and KYC decisions and the deposit review
// queue. tok authenticates, admin admits only fiat admins.
func (h *Handlers) registerAdmin(g server.Router, tok, admin fiber.Handler) {
	server.Get(g, "/admin/reconcile", server.Op[reconcileRequest]{
		Summary:     "Reconcile processor charges with the ledger and balances; drift alerts the configured target",
		Description: "Compares the processor's charges with the ledger entries and wallet balances per currency and reports any drift; a drift sends one alert to the configured target. Changes no balance.",
		Role:        adminRole,
		Handle:      h.reconcile,
		Responses: []server.Response{
			server.Answers(http.StatusOK, "the report, per currency (alert: the drift alert's delivery, when one was sent)", schemas.FiatReconcileReport{}),
			server.Fails(http.StatusServiceUnavailable, "analytics_unavailable: source=clickhouse, and ClickHouse is not configured or did not answer"),
		},
	}, tok, admin)
	server.Get(g, "/admin/audit", server.Op[auditRequest]{
		Summary:     "Append-only audit log",
		Description: "Pages through the fiat audit log (admin actions and money movements), newest first. Read-only.",
		Role:        adminRole, Handle: h.audit,
		Responses: []server.Response{server.Answers(http.StatusOK, "the audit log, newest first", schemas.Page[schemas.FiatAuditEntry]{})},
	}, tok, admin)

	wallet := func(summary, description string, status string) server.Op[walletPath] {
		return server.Op[walletPath]{Summary: summary, Description: description, Class: ratelimit.Write, Role: adminRole, Handle: h.setStatus(status),
			Responses: []server.Response{
				server.Answers(http.StatusOK, "the wallet in its new state", schemas.FiatWallet{}),
				server.Fails(http.StatusNotFound, "wallet_not_found: no such wallet"),
				server.Fails(http.StatusConflict, "invalid_state: a deleted wallet cannot change state"),
			}}
	}
	server.Post(g, "/admin/wallets/:id/freeze", wallet("Freeze a wallet",
		"Freezes any user's wallet: it can neither send nor receive money until unfrozen.", store.StatusFrozen), tok, admin)
	server.Post(g, "/admin/wallets/:id/unfreeze", wallet("Unfreeze a wallet",
		"Makes a frozen wallet active again: it sends and receives money.", store.StatusActive), tok, admin)

	payout := func(summary, description string, approve bool) server.Op[payoutPath] {
		return server.Op[payoutPath]{Summary: summary, Description: description, Class: ratelimit.Write, Role: adminRole, Handle: h.decidePayout(approve),
			Responses: []server.Response{
				server.Answers(http.StatusOK, "the decided payout (paid, or rejected with its funds released)", schemas.FiatPayoutResult{}),
				server.Fails(http.StatusNotFound, "payout_not_found or wallet_not_found: no such payout"),
				server.Fails(http.StatusConflict, "invalid_state: the payout was already decided"),
			}}
	}
	server.Post(g, "/admin/payouts/:id/approve", payout("Approve a payout (paid)",
		"Marks a pending payout paid: the held amount leaves the wallet for good.", true), tok, admin)
	server.Post(g, "/admin/payouts/:id/reject", payout("Reject a payout (funds released)",
		"Rejects a pending payout: the held amount is released back to the wallet's balance.", false), tok, admin)

	kyc := func(summary, description string, approve bool) server.Op[kycPath] {
		return server.Op[kycPath]{Summary: summary, Description: description, Class: ratelimit.Write, Role: adminRole, Handle: h.decideKYC(approve),
			Responses: []server.Response{
				server.Answers(http.StatusOK, "the decided submission", schemas.FiatKYC{}),
				server.Fails(http.StatusNotFound, "kyc_not_found: no such KYC submission"),
				server.Fails(http.StatusConflict, "invalid_state: the submission was already decided"),
			}}
	}
	server.Post(g, "/admin/kyc/:id/approve", kyc("Approve a KYC submission",
		"Approves a pending KYC submission: its user's daily caps are lifted.", true), tok, admin)
	server.Post(g, "/admin/kyc/:id/reject", kyc("Reject a KYC submission",
		"Rejects a pending KYC submission: its user's caps stay as they are.", false), tok, admin)

	server.Get(g, "/admin/deposits", server.Op[listReviewsRequest]{
		Summary:     "Paid deposits that could not be credited (status needs_review, or refunded)",
		Description: "Lists deposits the processor charged but the platform could not credit (needs_review), or those already refunded. Read-only.",
		Role:        adminRole, Handle: h.listReviews,
		Responses: []server.Response{server.Answers(http.StatusOK, "the deposits of the status, newest first", schemas.Page[schemas.FiatDeposit]{})},
	}, tok, admin)
	review := func(summary, description, action string) server.Op[reviewRequest] {
		return server.Op[reviewRequest]{Summary: summary, Description: description, Class: ratelimit.Money, Role: adminRole, Handle: h.reviewDeposit(action),
			Responses: []server.Response{
				server.Answers(http.StatusOK, "the deposit: completed (credited) or refunded", schemas.FiatCreditResult{}),
				server.Fails(http.StatusNotFound, "deposit_not_found or wallet_not_found: no such deposit"),
				server.Fails(http.StatusConflict, "invalid_state or idempotency_key_reused: the deposit is not in needs_review, "+
					"or the Idempotency-Key came with another body"),
				server.Fails(http.StatusBadRequest, "wallet_inactive: the wallet is not active; unfreeze it first"),
			}}
	}
	server.Post(g, "/admin/deposits/:id/credit", review("Credit a deposit in needs_review to its (active) wallet",
		"Credits a paid deposit that needs review to its wallet (once; the wallet must be active) and completes it.", schemas.ReviewCredit), tok, admin)
	server.Post(g, "/admin/deposits/:id/refund", review("Refund a deposit in needs_review to the processor",
		"Refunds a paid deposit that needs review through the processor; no wallet is credited.", schemas.ReviewRefund), tok, admin)
}
