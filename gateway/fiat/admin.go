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
		Summary: "Reconcile processor charges with the ledger and balances; drift alerts the configured target", Role: adminRole,
		Handle: h.reconcile,
		Responses: []server.Response{
			server.Answers(http.StatusOK, "the report, per currency (alert: the drift alert's delivery, when one was sent)", schemas.FiatReconcileReport{}),
			server.Fails(http.StatusServiceUnavailable, "analytics_unavailable: source=clickhouse, and ClickHouse is not configured or did not answer"),
		},
	}, tok, admin)
	server.Get(g, "/admin/audit", server.Op[auditRequest]{
		Summary: "Append-only audit log", Role: adminRole, Handle: h.audit,
		Responses: []server.Response{server.Answers(http.StatusOK, "the audit log, newest first", schemas.Page[schemas.FiatAuditEntry]{})},
	}, tok, admin)

	wallet := func(summary string, status string) server.Op[walletPath] {
		return server.Op[walletPath]{Summary: summary, Class: ratelimit.Write, Role: adminRole, Handle: h.setStatus(status),
			Responses: []server.Response{
				server.Answers(http.StatusOK, "the wallet in its new state", schemas.FiatWallet{}),
				server.Fails(http.StatusNotFound, "wallet_not_found: no such wallet"),
				server.Fails(http.StatusConflict, "invalid_state: a deleted wallet cannot change state"),
			}}
	}
	server.Post(g, "/admin/wallets/:id/freeze", wallet("Freeze a wallet", store.StatusFrozen), tok, admin)
	server.Post(g, "/admin/wallets/:id/unfreeze", wallet("Unfreeze a wallet", store.StatusActive), tok, admin)

	payout := func(summary string, approve bool) server.Op[payoutPath] {
		return server.Op[payoutPath]{Summary: summary, Class: ratelimit.Write, Role: adminRole, Handle: h.decidePayout(approve),
			Responses: []server.Response{
				server.Answers(http.StatusOK, "the decided payout (paid, or rejected with its funds released)", schemas.FiatPayoutResult{}),
				server.Fails(http.StatusNotFound, "payout_not_found or wallet_not_found: no such payout"),
				server.Fails(http.StatusConflict, "invalid_state: the payout was already decided"),
			}}
	}
	server.Post(g, "/admin/payouts/:id/approve", payout("Approve a payout (paid)", true), tok, admin)
	server.Post(g, "/admin/payouts/:id/reject", payout("Reject a payout (funds released)", false), tok, admin)

	kyc := func(summary string, approve bool) server.Op[kycPath] {
		return server.Op[kycPath]{Summary: summary, Class: ratelimit.Write, Role: adminRole, Handle: h.decideKYC(approve),
			Responses: []server.Response{
				server.Answers(http.StatusOK, "the decided submission", schemas.FiatKYC{}),
				server.Fails(http.StatusNotFound, "kyc_not_found: no such KYC submission"),
				server.Fails(http.StatusConflict, "invalid_state: the submission was already decided"),
			}}
	}
	server.Post(g, "/admin/kyc/:id/approve", kyc("Approve a KYC submission", true), tok, admin)
	server.Post(g, "/admin/kyc/:id/reject", kyc("Reject a KYC submission", false), tok, admin)

	server.Get(g, "/admin/deposits", server.Op[listReviewsRequest]{
		Summary: "Paid deposits that could not be credited (status needs_review, or refunded)", Role: adminRole, Handle: h.listReviews,
		Responses: []server.Response{server.Answers(http.StatusOK, "the deposits of the status, newest first", schemas.Page[schemas.FiatDeposit]{})},
	}, tok, admin)
	review := func(summary, action string) server.Op[reviewRequest] {
		return server.Op[reviewRequest]{Summary: summary, Class: ratelimit.Money, Role: adminRole, Handle: h.reviewDeposit(action),
			Responses: []server.Response{
				server.Answers(http.StatusOK, "the deposit: completed (credited) or refunded", schemas.FiatCreditResult{}),
				server.Fails(http.StatusNotFound, "deposit_not_found or wallet_not_found: no such deposit"),
				server.Fails(http.StatusConflict, "invalid_state or idempotency_key_reused: the deposit is not in needs_review, "+
					"or the Idempotency-Key came with another body"),
				server.Fails(http.StatusBadRequest, "wallet_inactive: the wallet is not active; unfreeze it first"),
			}}
	}
	server.Post(g, "/admin/deposits/:id/credit", review("Credit a deposit in needs_review to its (active) wallet", schemas.ReviewCredit), tok, admin)
	server.Post(g, "/admin/deposits/:id/refund", review("Refund a deposit in needs_review to the processor", schemas.ReviewRefund), tok, admin)
}
