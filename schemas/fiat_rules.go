package schemas

import "time"

// TransferFee is the platform fee of a transfer of amount minor units: 0.1 %,
// rounded up, at least one minor unit (decisions.md, Fiat).
func TransferFee(amount int64) int64 {
	if amount <= 0 {
		return 0
	}
	fee := amount / 1000
	if amount%1000 != 0 {
		fee++
	}
	return max(fee, 1)
}

// FiatCaps are the pre-KYC limits in minor units.
type FiatCaps struct {
	PerTransfer  int64
	DailyDeposit int64
	Monthly      int64
}

// CapCheck says whether an outgoing amount is allowed before KYC: within the
// per-transaction cap (when perTx is true, for transfers) and within the
// monthly cumulative cap given what went out this month. KYC-approved users
// have no caps.
func (c FiatCaps) CapCheck(kycApproved bool, amount, monthOut int64, perTx bool) bool {
	if kycApproved {
		return true
	}
	if perTx && amount > c.PerTransfer {
		return false
	}
	return monthOut+amount <= c.Monthly
}

// DepositAllowed says whether a deposit of amount fits the daily cap before
// KYC, given what the user deposited today.
func (c FiatCaps) DepositAllowed(kycApproved bool, amount, today int64) bool {
	return kycApproved || today+amount <= c.DailyDeposit
}

// MonthKey names the calendar month (UTC) of t, the period of the monthly cap.
func MonthKey(t time.Time) string { return t.UTC().Format("2006-01") }

// DayStart is the start of t's UTC day, the period of the daily cap.
func DayStart(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// Payment request statuses and expiry reasons.
const (
	RequestStatusOpen    = "open"
	RequestStatusPaid    = "paid"
	RequestStatusExpired = "expired"

	RequestExpiryTime  = "time"
	RequestExpiryViews = "views"
)

// RequestExpiryReason says why an open request is expired at now: RequestExpiryTime once
// now has reached expiresAt (the boundary instant itself is expired),
// RequestExpiryViews once views have reached maxViews, "" while it is still open.
// Time wins when both hold.
func RequestExpiryReason(views, maxViews int, expiresAt, now time.Time) string {
	switch {
	case !now.Before(expiresAt):
		return RequestExpiryTime
	case views >= maxViews:
		return RequestExpiryViews
	}
	return ""
}

// RequestViewResult is the effect of one public read of a payment request.
type RequestViewResult struct {
	// Views and Status are the request's new state.
	Views  int
	Status string
	// Expired is the reason when this read expired the request ("" when
	// it did not): request.expired is emitted with it.
	Expired string
	// Gone means the read is answered 410 request_expired.
	Gone bool
}

// RequestView applies one public read to a request. A paid request is shown and
// not counted. An expired one is gone. An open one past its time expires
// now and is gone. Otherwise the read counts one view and is served; the
// view that reaches maxViews expires the request (it is served, showing
// the expired status, and every later read is gone).
func RequestView(status string, views, maxViews int, expiresAt, now time.Time) RequestViewResult {
	switch status {
	case RequestStatusPaid:
		return RequestViewResult{Views: views, Status: status}
	case RequestStatusExpired:
		return RequestViewResult{Views: views, Status: status, Gone: true}
	}
	if RequestExpiryReason(views, maxViews, expiresAt, now) == RequestExpiryTime {
		return RequestViewResult{Views: views, Status: RequestStatusExpired, Expired: RequestExpiryTime, Gone: true}
	}
	if views >= maxViews {
		// Expired by views but not yet marked (cannot happen through RequestView).
		return RequestViewResult{Views: views, Status: RequestStatusExpired, Expired: RequestExpiryViews, Gone: true}
	}
	views++
	if views >= maxViews {
		return RequestViewResult{Views: views, Status: RequestStatusExpired, Expired: RequestExpiryViews}
	}
	return RequestViewResult{Views: views, Status: RequestStatusOpen}
}

// ChargeFee is the fee of a merchant charge: the transfer rule (0.1 %,
// rounded up, at least one minor unit), paid by the merchant out of the
// charged amount, never more than the amount.
func ChargeFee(amount int64) int64 { return min(TransferFee(amount), amount) }
