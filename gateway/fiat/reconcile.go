package fiat

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/fiat"
)

// ProcessorLedger reads the processor side of reconciliation from the
// analytics copy: the credited deposit amounts by currency.
type ProcessorLedger interface {
	ProcessorCredited(ctx context.Context) (map[string]int64, error)
}

// Reconciliation sources.
const (
	SourcePostgres   = "postgres"
	SourceClickHouse = "clickhouse"
)

// Reconcile computes a currency's line. Money enters the wallets only by
// credited deposits and leaves only by withdrawals and (held) payouts;
// transfers, merchant charges and request payments move it between wallets
// and fee wallets. So the books say the wallets (fee wallets included) hold
// deposits − withdrawals − payouts; Drift is that minus the actual sum of
// balances, and ProcessorDrift compares the processor's credited total with
// the ledger's deposits. The line is OK when both are zero.
func Reconcile(b store.Books) schemas.FiatCurrencyReconcile {
	expected := b.DepositsCredited - b.Withdrawn - b.PaidOut
	r := schemas.FiatCurrencyReconcile{Currency: b.Currency, ProcessorCreditedMinor: b.ProcessorCredited,
		DepositsCreditedMinor: b.DepositsCredited, WithdrawnMinor: b.Withdrawn, PaidOutMinor: b.PaidOut,
		FeesMinor: b.Fees, FeeWalletsMinor: b.FeeWallets, ExpectedBalancesMinor: expected,
		WalletBalancesMinor: b.WalletBalances, Drift: expected - b.WalletBalances,
		ProcessorDrift: b.ProcessorCredited - b.DepositsCredited}
	r.OK = r.Drift == 0 && r.ProcessorDrift == 0
	return r
}

// reconcileRequest names the source of the processor side.
type reconcileRequest struct {
	Source string `query:"source" json:"-" enum:"postgres,clickhouse" default:"postgres" description:"where the processor side is read: postgres (the state of record) or the clickhouse copy, which may lag and never alerts"`
}

// Validate defaults and checks the source.
func (req *reconcileRequest) Validate() error {
	if req.Source == "" {
		req.Source = SourcePostgres
	}
	if req.Source != SourcePostgres && req.Source != SourceClickHouse {
		return apierr.Validation(map[string]string{"source": "must be postgres or clickhouse"})
	}
	return nil
}

// reconcile compares the processor's charges with the ledger and the
// balances. ?source=clickhouse takes the processor side from the ClickHouse
// copy of the events (deposit.completed, deduplicated on the event id)
// instead of Postgres; everything else is Postgres, the state of record.
// Drift found in the state of record posts a signed alert to
// ReconcileAlertURL; the ClickHouse copy may lag by seconds, so its answer
// reports drift but never alerts.
func (h *Handlers) reconcile(c *fiber.Ctx, req *reconcileRequest) error {
	source := req.Source
	ctx := c.UserContext()
	books, err := h.commerce.Books(ctx)
	if err != nil {
		return err
	}
	if source == SourceClickHouse {
		if h.cfg.Analytics == nil {
			return apierr.New(http.StatusServiceUnavailable, schemas.CodeAnalyticsUnavailable, "ClickHouse is not configured")
		}
		credited, err := h.cfg.Analytics.ProcessorCredited(ctx)
		if err != nil {
			return apierr.New(http.StatusServiceUnavailable, schemas.CodeAnalyticsUnavailable, "ClickHouse did not answer").Because(err)
		}
		for i := range books {
			books[i].ProcessorCredited = credited[books[i].Currency]
		}
	}
	review, err := h.deposits.DepositReviewSummary(ctx)
	if err != nil {
		return err
	}
	rep := schemas.FiatReconcileReport{OK: true, Source: source, GeneratedAt: h.now().UTC(),
		DepositReview: schemas.FiatDepositReviewSummary{NeedsReview: review.NeedsReview, NeedsReviewAmount: review.NeedsReviewAmount,
			Refunded: review.Refunded, RefundedAmount: review.RefundedAmount}}
	for _, b := range books {
		line := Reconcile(b)
		rep.OK = rep.OK && line.OK
		rep.Currencies = append(rep.Currencies, line)
	}
	if source == SourcePostgres && h.cfg.OnReconcile != nil {
		h.cfg.OnReconcile(rep.Currencies)
	}
	if !rep.OK && source == SourcePostgres && h.cfg.ReconcileAlertURL != "" {
		rep.Alert = h.sendAlert(ctx, rep)
	}
	return c.JSON(rep)
}

// Alert headers: the spec's outbound signature scheme (HMAC-SHA256 over
// timestamp + "." + body, hex).
const (
	HeaderAlertTimestamp = "X-Platform-Timestamp"
	HeaderAlertSignature = "X-Platform-Signature"
)

// SignAlert is the hex HMAC-SHA256 of timestamp + "." + body keyed with secret.
func SignAlert(secret string, timestamp int64, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(strconv.FormatInt(timestamp, 10) + "."))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// sendAlert posts the drift report to the alert target, signed, with a
// 5 second budget.
func (h *Handlers) sendAlert(ctx context.Context, rep schemas.FiatReconcileReport) *schemas.FiatAlertResult {
	now := h.now().UTC()
	body, err := json.Marshal(map[string]any{"id": schemas.NewID(), "type": "reconcile.drift", "module": "fiat",
		"sentAt": now, "data": rep})
	if err != nil {
		return &schemas.FiatAlertResult{Error: err.Error()}
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.cfg.ReconcileAlertURL, bytes.NewReader(body))
	if err != nil {
		return &schemas.FiatAlertResult{Error: err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "platform-reconcile/1")
	if h.cfg.ReconcileAlertSecret != "" {
		ts := now.Unix()
		req.Header.Set(HeaderAlertTimestamp, strconv.FormatInt(ts, 10))
		req.Header.Set(HeaderAlertSignature, SignAlert(h.cfg.ReconcileAlertSecret, ts, body))
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return &schemas.FiatAlertResult{Error: fmt.Sprintf("post alert: %v", err)}
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return &schemas.FiatAlertResult{Sent: resp.StatusCode < 300, Status: resp.StatusCode}
}
