package fiat

import "github.com/fintech/platform/schemas"

// ChargeResultOf is the body of a settled charge.
func ChargeResultOf(c Charge, idempotent bool) schemas.FiatChargeResult {
	return schemas.FiatChargeResult{ID: c.ID, ChargeID: c.ID, TransactionID: c.TransactionID, Status: "succeeded",
		WalletID: c.CustomerWallet, MerchantWalletID: c.MerchantWallet, Amount: c.Amount, Fee: c.Fee,
		NetAmount: c.Amount - c.Fee, Currency: c.Currency, PaymentRef: c.PaymentRef, Description: c.Description,
		CreatedAt: c.CreatedAt.UTC(), Idempotent: idempotent}
}

// RefundResultOf is the body of a stored refund.
func RefundResultOf(r Refund) schemas.FiatRefundResult {
	out := schemas.FiatRefundResult{ID: r.ID, Amount: r.Amount, Currency: r.Currency, Status: r.Status, Reason: r.Reason,
		TransactionID: r.TransactionID, FromWalletID: r.FromWallet, WalletID: r.ToWallet, CreatedAt: r.CreatedAt.UTC()}
	if r.Source == schemas.RefundSourceCharge {
		out.ChargeID = r.SourceID
	} else {
		out.RequestToken = r.RequestToken
	}
	return out
}

// RequestExpiredEvent is the request.expired data of an expired request.
func RequestExpiredEvent(r PaymentRequest) schemas.RequestExpired {
	return schemas.RequestExpired{RequestID: r.ID, Token: r.Token, WalletID: r.WalletID, Amount: r.Amount,
		Currency: r.Currency, Reason: r.ExpiredReason, Views: r.Views, MaxViews: r.MaxViews, ExpiresAt: r.ExpiresAt.UTC()}
}
