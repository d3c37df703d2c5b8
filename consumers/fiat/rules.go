package fiat

import "time"

// Fee is the platform fee of a transfer of amount minor units: 0.1 %,
// rounded up, at least one minor unit (decisions.md, Fiat).
func Fee(amount int64) int64 {
	if amount <= 0 {
		return 0
	}
	fee := amount / 1000
	if amount%1000 != 0 {
		fee++
	}
	return max(fee, 1)
}

// Caps are the pre-KYC limits in minor units.
type Caps struct {
	PerTransfer  int64
	DailyDeposit int64
	Monthly      int64
}

// CapCheck says whether an outgoing amount is allowed before KYC: within the
// per-transaction cap (when perTx is true, for transfers) and within the
// monthly cumulative cap given what went out this month. KYC-approved users
// have no caps.
func (c Caps) CapCheck(kycApproved bool, amount, monthOut int64, perTx bool) bool {
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
func (c Caps) DepositAllowed(kycApproved bool, amount, today int64) bool {
	return kycApproved || today+amount <= c.DailyDeposit
}

// MonthKey names the calendar month (UTC) of t, the period of the monthly cap.
func MonthKey(t time.Time) string { return t.UTC().Format("2006-01") }

// DayStart is the start of t's UTC day, the period of the daily cap.
func DayStart(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}
