package fiat

import (
	"bufio"
	"context"
	"encoding/csv"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/fiat"
)

type txJSON struct {
	ID            string    `json:"id"`
	TransactionID string    `json:"transactionId"`
	Kind          string    `json:"kind"`
	Status        string    `json:"status"`
	Direction     string    `json:"direction"`
	FromWalletID  string    `json:"fromWalletId,omitempty"`
	ToWalletID    string    `json:"toWalletId,omitempty"`
	AmountKzt     int64     `json:"amountKzt"`
	FeeKzt        int64     `json:"feeKzt"`
	Currency      string    `json:"currency"`
	Memo          string    `json:"memo"`
	CreatedAt     time.Time `json:"createdAt"`
}

// direction is "out" when the user's money left (they are the sender).
func direction(t store.Tx, userID string) string {
	if t.FromUser == userID {
		return "out"
	}
	return "in"
}

func toTxJSON(t store.Tx, userID string) txJSON {
	return txJSON{ID: t.ID, TransactionID: t.ID, Kind: t.Kind, Status: t.Status, Direction: direction(t, userID),
		FromWalletID: t.FromWallet, ToWalletID: t.ToWallet, AmountKzt: t.Amount, FeeKzt: t.Fee,
		Currency: t.Currency, Memo: t.Memo, CreatedAt: t.CreatedAt}
}

func (h *Handlers) listTransactions(c *fiber.Ctx) error {
	page, err := bind.PageQuery(c)
	if err != nil {
		return err
	}
	p, _ := auth.User(c)
	txs, err := h.store.Transactions(c.UserContext(), p.UserID, page.After, page.Limit+1)
	if err != nil {
		return err
	}
	var next *string
	if len(txs) > page.Limit {
		txs = txs[:page.Limit]
		cur := bind.Cursor(txs[len(txs)-1].ID)
		next = &cur
	}
	items := make([]txJSON, len(txs))
	for i, t := range txs {
		items[i] = toTxJSON(t, p.UserID)
	}
	return c.JSON(fiber.Map{"items": items, "nextCursor": next})
}

// csvHeader is the header row of the CSV export.
var csvHeader = []string{"id", "createdAt", "kind", "direction", "status", "fromWalletId", "toWalletId",
	"amount", "fee", "currency", "memo"}

// csvCell neutralises spreadsheet formulas in user-supplied text.
func csvCell(s string) string {
	if s != "" && (s[0] == '=' || s[0] == '+' || s[0] == '-' || s[0] == '@' || s[0] == '\t' || s[0] == '\r') {
		return "'" + s
	}
	return s
}

// transactionsCSV streams the caller's whole history as RFC 4180 CSV, row
// by row from the database cursor to the connection.
func (h *Handlers) transactionsCSV(c *fiber.Ctx) error {
	p, _ := auth.User(c)
	userID := p.UserID
	c.Set(fiber.HeaderContentType, "text/csv; charset=utf-8")
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="transactions.csv"`)
	st := h.store
	c.Context().SetBodyStreamWriter(func(bw *bufio.Writer) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		w := csv.NewWriter(bw)
		_ = w.Write(csvHeader)
		n := 0
		err := st.StreamTransactions(ctx, userID, func(t store.Tx) error {
			if err := w.Write([]string{t.ID, t.CreatedAt.UTC().Format(time.RFC3339Nano), t.Kind, direction(t, userID),
				t.Status, t.FromWallet, t.ToWallet, strconv.FormatInt(t.Amount, 10), strconv.FormatInt(t.Fee, 10),
				t.Currency, csvCell(t.Memo)}); err != nil {
				return err
			}
			if n++; n%500 == 0 {
				w.Flush()
				if err := w.Error(); err != nil {
					return err
				}
				return bw.Flush()
			}
			return nil
		})
		w.Flush()
		_ = bw.Flush()
		_ = err // the status line is gone; a broken stream ends the body early
	})
	return nil
}

func (h *Handlers) dashboard(c *fiber.Ctx) error {
	p, _ := auth.User(c)
	now := h.now()
	d, err := h.store.DashboardOf(c.UserContext(), p.UserID, schemas.MonthKey(now))
	if err != nil {
		return err
	}
	wallets := make([]walletJSON, len(d.Wallets))
	balances := map[string]int64{}
	for i, w := range d.Wallets {
		wallets[i] = toWalletJSON(w)
		balances[w.Currency] += w.Balance
	}
	recent := make([]txJSON, len(d.RecentTxs))
	for i, t := range d.RecentTxs {
		recent[i] = toTxJSON(t, p.UserID)
	}
	open, err := h.openRequests(c, p.UserID)
	if err != nil {
		return err
	}
	caps := h.cfg.Caps
	return c.JSON(fiber.Map{
		"wallets":  wallets,
		"balances": balances,
		"transactions": fiber.Map{
			"count": d.TxCount, "sentTotal": d.SentTotal, "receivedTotal": d.ReceivedTotal,
			"feesPaid": d.FeesPaid, "recent": recent,
		},
		"requests": fiber.Map{"pendingDeposits": d.PendingDeposits, "pendingPayouts": d.PendingPayouts,
			"openPaymentRequests": len(open)},
		"openRequests": open,
		"kyc":          fiber.Map{"approved": d.KYCApproved, "status": d.KYCLatest},
		"limits": fiber.Map{
			"perTransfer": caps.PerTransfer, "dailyDeposit": caps.DailyDeposit, "monthly": caps.Monthly,
			"monthlyUsed": d.MonthOut, "capsApply": !d.KYCApproved,
		},
		"generatedAt": now.UTC(),
	})
}

type auditJSON struct {
	ID        string    `json:"id"`
	Actor     string    `json:"actor"`
	Action    string    `json:"action"`
	Subject   string    `json:"subject"`
	Amount    int64     `json:"amount"`
	Currency  string    `json:"currency"`
	Detail    string    `json:"detail"`
	CreatedAt time.Time `json:"createdAt"`
}

func (h *Handlers) audit(c *fiber.Ctx) error {
	page, err := bind.PageQuery(c)
	if err != nil {
		return err
	}
	rows, err := h.store.Audit(c.UserContext(), page.After, page.Limit+1)
	if err != nil {
		return err
	}
	var next *string
	if len(rows) > page.Limit {
		rows = rows[:page.Limit]
		cur := bind.Cursor(rows[len(rows)-1].ID)
		next = &cur
	}
	items := make([]auditJSON, len(rows))
	for i, a := range rows {
		items[i] = auditJSON{ID: a.ID, Actor: a.Actor, Action: a.Action, Subject: a.Subject, Amount: a.Amount,
			Currency: a.Currency, Detail: a.Detail, CreatedAt: a.CreatedAt}
	}
	return c.JSON(fiber.Map{"items": items, "nextCursor": next})
}
