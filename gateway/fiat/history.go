package fiat

import (
	"bufio"
	"context"
	"encoding/csv"
	"net/http"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/fiat"
)

// HistoryStore is what the history, CSV, dashboard and audit handlers read.
type HistoryStore interface {
	Transactions(ctx context.Context, userID string, before schemas.Position, limit int) ([]store.Tx, error)
	StreamTransactions(ctx context.Context, userID string, fn func(store.Tx) error) error
	Audit(ctx context.Context, before schemas.Position, limit int) ([]store.AuditRow, error)
	DashboardOf(ctx context.Context, userID, month string) (store.Dashboard, error)
}

// registerHistory mounts the caller's history, its CSV export and the
// dashboard.
func (h *Handlers) registerHistory(g server.Router, tok fiber.Handler) {
	server.Get(g, "/transactions", server.Op[listTransactionsRequest]{
		Summary:     "Paginated transaction history",
		Description: "Pages through the transactions of the caller's wallets, newest first. Read-only.",
		Handle:      h.listTransactions,
		Responses:   []server.Response{server.Answers(http.StatusOK, "the caller's transactions, newest first", schemas.Page[schemas.FiatTransaction]{})},
	}, tok)
	server.Get(g, "/transactions.csv", server.Op[server.NoRequest]{
		Summary:     "Transaction history as CSV",
		Description: "Every transaction of the caller's wallets as an RFC 4180 CSV download. Read-only.",
		Handle:      h.transactionsCSV,
		Responses:   []server.Response{{Status: http.StatusOK, Description: "the caller's transactions as CSV (RFC 4180), oldest first", ContentType: "text/csv"}},
	}, tok)
	server.Get(g, "/me/dashboard", server.Op[server.NoRequest]{
		Summary:     "Aggregated wallet, transaction and limits snapshot",
		Description: "The caller's wallets, recent transactions and remaining daily limits in one answer. Read-only.",
		Handle:      h.dashboard,
		Responses:   []server.Response{server.Answers(http.StatusOK, "the caller's snapshot", schemas.FiatDashboard{})},
	}, tok)
}

// listTransactionsRequest is a page of the caller's history.
type listTransactionsRequest struct{ bind.TimePaging }

// direction is "out" when the user's money left (they are the sender).
func direction(t store.Tx, userID string) string {
	if t.FromUser == userID {
		return "out"
	}
	return "in"
}

func toTransaction(t store.Tx, userID string) schemas.FiatTransaction {
	return schemas.FiatTransaction{ID: t.ID, TransactionID: t.ID, Kind: t.Kind, Status: t.Status, Direction: direction(t, userID),
		FromWalletID: t.FromWallet, ToWalletID: t.ToWallet, AmountKzt: t.Amount, FeeKzt: t.Fee,
		Currency: t.Currency, Memo: t.Memo, CreatedAt: t.CreatedAt}
}

func (h *Handlers) listTransactions(c *fiber.Ctx, req *listTransactionsRequest) error {
	page := req.Page()
	p, _ := auth.User(c)
	txs, err := h.history.Transactions(c.UserContext(), p.UserID, req.Position(), page.Limit+1)
	if err != nil {
		return err
	}
	return c.JSON(bind.PageOf(txs, page.Limit, func(t store.Tx) string { return schemas.Position{At: t.CreatedAt, ID: t.ID}.String() },
		func(t store.Tx) schemas.FiatTransaction { return toTransaction(t, p.UserID) }))
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
func (h *Handlers) transactionsCSV(c *fiber.Ctx, _ *server.NoRequest) error {
	p, _ := auth.User(c)
	userID := p.UserID
	c.Set(fiber.HeaderContentType, "text/csv; charset=utf-8")
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="transactions.csv"`)
	st := h.history
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

func (h *Handlers) dashboard(c *fiber.Ctx, _ *server.NoRequest) error {
	p, _ := auth.User(c)
	now := h.now()
	d, err := h.history.DashboardOf(c.UserContext(), p.UserID, schemas.MonthKey(now))
	if err != nil {
		return err
	}
	wallets := make([]schemas.FiatWallet, len(d.Wallets))
	balances := map[string]int64{}
	for i, w := range d.Wallets {
		wallets[i] = toWallet(w)
		balances[w.Currency] += w.Balance
	}
	recent := make([]schemas.FiatTransaction, len(d.RecentTxs))
	for i, t := range d.RecentTxs {
		recent[i] = toTransaction(t, p.UserID)
	}
	open, err := h.openRequests(c, p.UserID)
	if err != nil {
		return err
	}
	caps := h.cfg.Caps
	return c.JSON(schemas.FiatDashboard{
		Wallets:  wallets,
		Balances: balances,
		Transactions: schemas.FiatDashboardTotals{Count: d.TxCount, SentTotal: d.SentTotal, ReceivedTotal: d.ReceivedTotal,
			FeesPaid: d.FeesPaid, Recent: recent},
		Requests: schemas.FiatDashboardPending{PendingDeposits: d.PendingDeposits, PendingPayouts: d.PendingPayouts,
			OpenPaymentRequests: len(open)},
		OpenRequests: open,
		KYC:          schemas.FiatDashboardKYC{Approved: d.KYCApproved, Status: d.KYCLatest},
		Limits: schemas.FiatDashboardLimits{PerTransfer: caps.PerTransfer, DailyDeposit: caps.DailyDeposit, Monthly: caps.Monthly,
			MonthlyUsed: d.MonthOut, CapsApply: !d.KYCApproved},
		GeneratedAt: now.UTC(),
	})
}

// auditRequest is a page of the audit log.
type auditRequest struct{ bind.TimePaging }

func (h *Handlers) audit(c *fiber.Ctx, req *auditRequest) error {
	page := req.Page()
	rows, err := h.history.Audit(c.UserContext(), req.Position(), page.Limit+1)
	if err != nil {
		return err
	}
	return c.JSON(bind.PageOf(rows, page.Limit, func(a store.AuditRow) string { return schemas.Position{At: a.CreatedAt, ID: a.ID}.String() },
		func(a store.AuditRow) schemas.FiatAuditEntry {
			return schemas.FiatAuditEntry{ID: a.ID, Actor: a.Actor, Action: a.Action, Subject: a.Subject, Amount: a.Amount,
				Currency: a.Currency, Detail: a.Detail, CreatedAt: a.CreatedAt}
		}))
}
