package schemas

import "time"

// Abuse budgets: what a free sign-up could otherwise multiply. Every
// per-account budget that costs money (AI calls) or moves someone's
// reputation (ballots, proposals, risk flags, donations) or mints
// credentials (partner keys) is also bounded per client IP and in total, so
// that a thousand accounts behind one address, or a thousand addresses, get
// no more than the IP and global budgets. Exceeding an IP or global budget
// answers 429 rate_limited with Retry-After (decisions.md: the existing
// rate-limit answer); the per-account budgets keep their own answers (402
// spend_limit_exceeded, 429 key_limit_reached). deploy/docs/security.md's "Abuse budgets"
// lists these values.

// BudgetPeriod is the fixed window a budget counts in (UTC).
type BudgetPeriod int

// The periods.
const (
	PerDay BudgetPeriod = iota
	PerMonth
)

// Budget names a budget and its limits; a limit of 0 is not enforced.
// PerAccount is charged only where the module has no per-account counter of
// its own (AI calls keep constitution_ai_usage and AI_MONTHLY_LIMIT).
type Budget struct {
	Name                      string
	Period                    BudgetPeriod
	PerAccount, PerIP, Global int64
}

// Window returns the start and end of the window holding now.
func (b Budget) Window(now time.Time) (start, end time.Time) {
	now = now.UTC()
	if b.Period == PerMonth {
		start = time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
		return start, start.AddDate(0, 1, 0)
	}
	start = time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	return start, start.AddDate(0, 0, 1)
}

// The budgets.
var (
	// BudgetAI bounds constitution and planet AI requests (ai-suggest and
	// its stream) per IP and in total per day; per account the monthly
	// AI_MONTHLY_LIMIT applies.
	BudgetAI = Budget{Name: "ai", Period: PerDay, PerIP: 200, Global: 5000}
	// BudgetGovProposal bounds proposals created.
	BudgetGovProposal = Budget{Name: "gov-proposal", Period: PerDay, PerAccount: 10, PerIP: 20, Global: 500}
	// BudgetGovBallot bounds ballots cast (one per proposal per account
	// already holds).
	BudgetGovBallot = Budget{Name: "gov-ballot", Period: PerDay, PerAccount: 200, PerIP: 400, Global: 50000}
	// BudgetMaskRiskFlag bounds mask-risk-flag reputation events: once per
	// (mask owner, merchant) per day (the account), per client IP of the
	// charge and in total; a spent budget drops the flag, not the charge.
	BudgetMaskRiskFlag = Budget{Name: "mask-risk-flag", Period: PerDay, PerAccount: 1, PerIP: 5, Global: 500}
	// BudgetPartnerKeyMint bounds partner (X-Build-Key) keys minted; a user
	// holds at most PartnerKeysPerUser active ones.
	BudgetPartnerKeyMint = Budget{Name: "partner-key-mint", Period: PerDay, PerAccount: 20, PerIP: 20, Global: 2000}
)

// PartnerKeysPerUser is how many active partner keys (X-Build-Key) one
// employer may hold; one more → 429 key_limit_reached, as for merchant keys.
const PartnerKeysPerUser = 3

// DonationReputationMinKzt is the smallest donation (tiyin: 10 KZT) that
// earns the donor charity-donor reputation; it is earned at most once per
// donor, campaign and UTC day, so an account buys at most +4 a campaign a
// day, and never with one-tiyin donations.
const DonationReputationMinKzt = 1_000

// moneyReputationMin is, per currency, the smallest amount (minor units) of a
// transfer, paid request, deposit or payout that earns wallet reputation:
// 10 KZT, as for donations, and 1 USD (a round figure worth more than 10 KZT
// at any plausible rate, so no currency is the cheap one; the platform keeps
// no exchange rate to convert with). A currency not listed earns nothing.
var moneyReputationMin = map[string]int64{"KZT": DonationReputationMinKzt, "USD": 100}

// MoneyEarnsReputation reports whether a money movement of amount minor
// units of currency is large enough to earn wallet reputation. What it earns
// is also counted at most once per user, kind and UTC day.
func MoneyEarnsReputation(amount int64, currency string) bool {
	min, ok := moneyReputationMin[currency]
	return ok && amount >= min
}

// Signed payloads (POST /api/sign/sign) are kept SignRetention and, within
// it, at most SignPayloadBudgetBytes of canonical payload and
// SignPayloadBudgetCount signings per user; one more → 429 rate_limited
// with Retry-After (until the oldest kept one expires).
const (
	SignRetention          = 30 * 24 * time.Hour
	SignPayloadBudgetBytes = 1 << 20
	SignPayloadBudgetCount = 10_000
)
