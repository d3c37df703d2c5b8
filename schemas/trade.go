package schemas

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// Trade (test-net wallet) message types. Commands travel on trade.commands
// keyed by the account the command debits (the top-up's account, the
// transfer's sender), so every debit of one account is applied in order by
// one consumer; the consumer of the sender's partition also credits the
// receiver in the same transaction. Events go to events.trade keyed by the
// account id.
const (
	// TypeTradeTopUp credits test-net units to the caller's account.
	TypeTradeTopUp = "trade.topup"
	// TypeTradeTransfer moves units from the caller's account to another.
	TypeTradeTransfer = "trade.transfer"

	// Events of the trade module on events.trade.
	TypeTradeTopUpCompleted    = "trade.topup.completed"
	TypeTradeTransferCompleted = "trade.transfer.completed"
)

// tradeVersions lists the trade module's message types and their schema versions.
var tradeVersions = map[string]int{
	TypeTradeTopUp:             1,
	TypeTradeTransfer:          1,
	TypeTradeTopUpCompleted:    1,
	TypeTradeTransferCompleted: 1,
}

// Ledger entry kinds of the trade module: one entry per top-up and per
// transfer, sourceId the operation id, the exact amount a decimal string in
// meta (amountCents does not apply to 10^-7 units).
const (
	LedgerKindTradeTopUp    = "trade:topup"
	LedgerKindTradeTransfer = "trade:transfer"
)

// TradeCurrency is the code of the test-net unit (decisions.md).
const TradeCurrency = "TNU"

// Trade operation kinds.
const (
	TradeKindTopUp    = "topup"
	TradeKindTransfer = "transfer"
)

// TNUScale is the number of units of 10^-7 TNU in one TNU: amounts are
// stored and computed as exact int64 counts of 10^-7.
const TNUScale = 10_000_000

// TNUDecimals is the largest number of fractional digits an amount may have.
const TNUDecimals = 7

// MaxTopUp is the largest top-up, in units (10,000 TNU).
const MaxTopUp int64 = 10_000 * TNUScale

// MaxTNU is the largest amount any trade field accepts, in units
// (100,000,000,000 TNU): far below int64, so sums of many amounts stay exact.
const MaxTNU int64 = 100_000_000_000 * TNUScale

// Errors of ParseTNU, each a reason fit for a validation message.
var (
	ErrTNUNotNumber   = errors.New("must be a JSON number such as 12.5")
	ErrTNUExponent    = errors.New("must be written without an exponent")
	ErrTNUPrecision   = errors.New("must have at most 7 decimal places")
	ErrTNUNotPositive = errors.New("must be greater than 0")
	ErrTNUTooLarge    = errors.New("must be at most 100000000000")
)

// ParseTNU parses the text of a JSON number (as received, never through a
// float) into units of 10^-7 TNU. It accepts plain decimals with at most 7
// fractional digits that are greater than zero and at most MaxTNU; exponents,
// strings, negative numbers and zero are refused.
func ParseTNU(text string) (int64, error) {
	units, err := parseDecimal(text)
	if err != nil {
		return 0, err
	}
	if units <= 0 {
		return 0, ErrTNUNotPositive
	}
	return units, nil
}

// parseDecimal parses a signed plain decimal with at most 7 fractional
// digits and a magnitude of at most MaxTNU into units.
func parseDecimal(text string) (int64, error) {
	if text == "" {
		return 0, ErrTNUNotNumber
	}
	neg := text[0] == '-'
	if neg {
		text = text[1:]
	}
	if strings.ContainsAny(text, "eE") && text != "" && text[0] >= '0' && text[0] <= '9' {
		return 0, ErrTNUExponent
	}
	intPart, frac, hasDot := strings.Cut(text, ".")
	if !digits(intPart) || (hasDot && !digits(frac)) {
		return 0, ErrTNUNotNumber
	}
	if len(intPart) > 1 && intPart[0] == '0' {
		return 0, ErrTNUNotNumber // JSON forbids leading zeros
	}
	if len(frac) > TNUDecimals {
		// Trailing zeros beyond the 7th place add no value, but the rule is
		// about how the amount is written: they are refused too.
		return 0, ErrTNUPrecision
	}
	intPart = strings.TrimLeft(intPart, "0")
	if len(intPart) > 12 {
		return 0, ErrTNUTooLarge
	}
	var whole, fraction int64
	if intPart != "" {
		n, err := strconv.ParseInt(intPart, 10, 64)
		if err != nil {
			return 0, ErrTNUTooLarge
		}
		whole = n
	}
	if frac != "" {
		n, err := strconv.ParseInt(frac+strings.Repeat("0", TNUDecimals-len(frac)), 10, 64)
		if err != nil {
			return 0, ErrTNUNotNumber
		}
		fraction = n
	}
	units := whole*TNUScale + fraction
	if units > MaxTNU {
		return 0, ErrTNUTooLarge
	}
	if neg {
		units = -units
	}
	return units, nil
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// FormatTNU writes units of 10^-7 TNU as the shortest exact decimal: 3000000
// is "0.3", 120000001 is "12.0000001", 100000000000 is "10000".
func FormatTNU(units int64) string {
	sign := ""
	u := uint64(units)
	if units < 0 {
		sign, u = "-", uint64(-units)
	}
	whole, frac := u/TNUScale, u%TNUScale
	if frac == 0 {
		return sign + strconv.FormatUint(whole, 10)
	}
	f := strconv.FormatUint(frac, 10)
	f = strings.Repeat("0", TNUDecimals-len(f)) + f
	return sign + strconv.FormatUint(whole, 10) + "." + strings.TrimRight(f, "0")
}

// TNU is an amount in units of 10^-7 TNU that encodes as an exact JSON
// number (0.3, 12.0000001, 10000) and decodes with ParseTNU.
type TNU int64

// MarshalJSON writes the exact decimal as a JSON number.
func (t TNU) MarshalJSON() ([]byte, error) { return []byte(FormatTNU(int64(t))), nil }

// UnmarshalJSON reads a JSON number written as FormatTNU writes it (zero and
// negative values included; requests validate with ParseTNU).
func (t *TNU) UnmarshalJSON(b []byte) error {
	n, err := parseDecimal(string(b))
	if err != nil {
		return err
	}
	*t = TNU(n)
	return nil
}

// String is the exact decimal.
func (t TNU) String() string { return FormatTNU(int64(t)) }

// JSONSchemaBytes describes a TNU amount in the API documents: a JSON number,
// exact to 7 decimal places, never negative in an answer.
func (TNU) JSONSchemaBytes() ([]byte, error) {
	return []byte(`{"type":"number","minimum":0,"multipleOf":0.0000001,"description":"TNU, an exact decimal with at most 7 decimal places"}`), nil
}

// TradeTopUp is the data of a TypeTradeTopUp command: UserID must own
// AccountID.
type TradeTopUp struct {
	AccountID string `json:"accountId"`
	UserID    string `json:"userId"`
	Amount    TNU    `json:"amount"`
}

// Validate is the rule both sides apply to a top-up before it is sent and
// before it is applied: a positive amount of at most MaxTopUp.
func (d TradeTopUp) Validate() error {
	if d.Amount <= 0 || int64(d.Amount) > MaxTopUp {
		return errors.New("top-up amount out of range")
	}
	return nil
}

// TradeTransfer is the data of a TypeTradeTransfer command: UserID must own
// From; To must exist.
type TradeTransfer struct {
	From   string `json:"from"`
	To     string `json:"to"`
	UserID string `json:"userId"`
	Amount TNU    `json:"amount"`
}

// Validate is the rule both sides apply to a transfer before it is sent and
// before it is applied: a positive amount of at most MaxTNU between two
// different accounts.
func (d TradeTransfer) Validate() error {
	switch {
	case d.Amount <= 0 || int64(d.Amount) > MaxTNU:
		return errors.New("transfer amount out of range")
	case d.From == d.To:
		return errors.New("transfer to the same account")
	}
	return nil
}

// TradeAccount is the API shape of an account.
type TradeAccount struct {
	ID        string    `json:"id" required:"true" format:"ksuid"`
	Balance   TNU       `json:"balance" required:"true"`
	Currency  string    `json:"currency" required:"true" enum:"TNU"`
	CreatedAt time.Time `json:"createdAt" required:"true"`
}

// TradeAccountList is the caller's accounts: exactly one (opened on the
// first read), with the total and the next page's cursor (null).
type TradeAccountList struct {
	Items      []TradeAccount `json:"items" required:"true" nullable:"false"`
	Total      int64          `json:"total" required:"true"`
	NextCursor *string        `json:"nextCursor" required:"true"`
}

// TradeAccountLookup is the account of a user found by e-mail.
type TradeAccountLookup struct {
	ID    string `json:"id" required:"true" format:"ksuid" description:"the account id, to transfer to"`
	Owner string `json:"owner" required:"true" description:"the owner's e-mail as registered"`
}

// TradeOperation is the API shape of an operation and the data of the
// trade events. From is null for a top-up.
type TradeOperation struct {
	ID        string    `json:"id" required:"true" format:"ksuid"`
	Kind      string    `json:"kind" required:"true" enum:"topup,transfer"`
	Amount    TNU       `json:"amount" required:"true"`
	From      *string   `json:"from" required:"true" format:"ksuid" description:"the debited account; null for a top-up"`
	To        string    `json:"to" required:"true" format:"ksuid"`
	CreatedAt time.Time `json:"createdAt" required:"true"`
}

// TradeOperationList is a page of the caller's operations, newest first,
// with their total.
type TradeOperationList struct {
	Items      []TradeOperation `json:"items" required:"true" nullable:"false"`
	Total      int64            `json:"total" required:"true"`
	NextCursor *string          `json:"nextCursor" required:"true"`
}

// TradeTopUpResult is the answer to a top-up: the account after it.
type TradeTopUpResult struct {
	ID          string    `json:"id" required:"true" format:"ksuid"`
	Balance     TNU       `json:"balance" required:"true"`
	Currency    string    `json:"currency" required:"true" enum:"TNU"`
	UpdatedAt   time.Time `json:"updatedAt" required:"true"`
	OperationID string    `json:"operationId" required:"true" format:"ksuid"`
}

// TradeTransferResult is the answer to a transfer.
type TradeTransferResult struct {
	ID        string    `json:"id" required:"true" format:"ksuid" description:"the operation id"`
	From      string    `json:"from" required:"true" format:"ksuid"`
	To        string    `json:"to" required:"true" format:"ksuid"`
	Amount    TNU       `json:"amount" required:"true"`
	Currency  string    `json:"currency" required:"true" enum:"TNU"`
	CreatedAt time.Time `json:"createdAt" required:"true"`
}

// TradeEvent is the data of the trade events: the operation plus the
// owners of the accounts it touched and the balances after it, in units and
// as exact decimals.
type TradeEvent struct {
	TradeOperation
	AmountUnits int64  `json:"amountUnits"`
	FromUserID  string `json:"fromUserId,omitempty"`
	ToUserID    string `json:"toUserId"`
	FromBalance *TNU   `json:"fromBalance,omitempty"`
	ToBalance   TNU    `json:"toBalance"`
}
