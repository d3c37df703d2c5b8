// Package mask is the consumer of mask.commands: it issues and revokes
// virtual masks and decides charges against them. Every command of one mask
// arrives on one partition and is applied in order by one consumer, so a
// mask's balance is never raced: no double spend, no overdraft.
//
// Merchants never see real card data: there is no real PAN anywhere in the
// platform, only the mask's virtual PAN.
package mask

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/mask"
	"github.com/fintech/platform/topics"
)

// Store is what the handler needs from storage, inside the batch transaction.
type Store interface {
	LockMasks(ctx context.Context, tx pgx.Tx, ids []string) (map[string]store.MaskRow, error)
	History(ctx context.Context, tx pgx.Tx, req store.HistoryRequest) (store.History, error)
	Save(ctx context.Context, tx pgx.Tx, ch store.Changes) error
}

var _ Store = (*store.Store)(nil)

// Windows of the risk factors that look back (decisions.md, Mask).
const (
	VelocityWindow      = 60 * time.Second
	RecentDeclineWindow = 10 * time.Minute
)

// RiskFlagWeight is the reputation weight of a mask-risk-flag event.
const RiskFlagWeight = -2

// sourceModule names this module in the records it emits.
const sourceModule = "mask"

// declarations lists every command type the handler reads on
// mask.commands, each in its own file. Adding a command type is its file
// and one line here.
func declarations() []pipeline.Declaration[*batch] {
	return []pipeline.Declaration[*batch]{
		pipeline.Declare[*batch, issue](schemas.TypeMaskIssue),
		pipeline.Declare[*batch, revoke](schemas.TypeMaskRevoke),
		pipeline.Declare[*batch, charge](schemas.TypeMaskCharge),
	}
}

// Handler applies mask commands.
type Handler struct {
	store Store
	now   func() time.Time
	pan   func() (string, error)
	table *pipeline.Table[*batch]
}

var _ pipeline.Handler = (*Handler)(nil)

// NewHandler builds the handler. now is the clock of the risk windows and
// the timestamps.
func NewHandler(st Store, now func() time.Time) (*Handler, error) {
	if st == nil || now == nil {
		return nil, errors.New("mask handler: nil dependency")
	}
	table, err := pipeline.NewTable("mask", topics.MaskCommands, nil, declarations()...)
	if err != nil {
		return nil, err
	}
	return &Handler{store: st, now: now, pan: NewVirtualPan, table: table}, nil
}

// NewVirtualPan returns "vmask-" followed by 32 hex characters from
// crypto/rand. Uniqueness is enforced by a unique index; a collision fails
// the batch, which is retried with new PANs.
func NewVirtualPan() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("generate virtual PAN: %w", err)
	}
	return "vmask-" + hex.EncodeToString(b[:]), nil
}

// WritesRejection: a charge declined 402 is a declined charge row, which
// the risk score of the mask's later charges reads (recent_decline); re-
// applied after a restore, it is decided again and must decline again.
func (h *Handler) WritesRejection(status int) bool { return status == http.StatusPaymentRequired }

var _ pipeline.RejectionWriter = (*Handler)(nil)

// Apply decides the commands in partition order inside tx
// (pipeline.ApplyInTx). Masks are locked and their history read once per
// batch; the changes are written once per batch (one update per mask
// however many charges it took).
func (h *Handler) Apply(ctx context.Context, tx pgx.Tx, cmds []pipeline.Command) ([]pipeline.Outcome, error) {
	now := h.now().UTC()
	b := &batch{ctx: ctx, tx: tx, h: h, base: now, now: now, masks: map[string]*maskState{}}
	return pipeline.ApplyInTx(ctx, tx, h.table, b, cmds)
}

func notFound() pipeline.Outcome {
	return pipeline.Reject(http.StatusNotFound, schemas.CodeNotFound, "mask not found", nil)
}

// owned returns the mask when it exists and belongs to userID.
func (b *batch) owned(maskID, userID string) *maskState {
	st := b.masks[maskID]
	if st == nil || st.row.UserID != userID {
		return nil
	}
	return st
}

func (b *batch) event(cmd schemas.Envelope, typ, key, actor string, data any) (schemas.Envelope, error) {
	env, err := schemas.New(typ, key, actor, data, b.now)
	if err != nil {
		return schemas.Envelope{}, err
	}
	env.ID = derivedID(cmd, "event:"+typ)
	env.CorrelationID = cmd.CorrelationID
	return env, nil
}

// derivedID is the id cmd mints for purpose (schemas.DerivedID): applied
// again after a restore, a command writes the charge, the ledger source and
// the events it wrote the first time, and the ledger, the reputation
// consumer, webhooks and analytics deduplicate them.
func derivedID(cmd schemas.Envelope, purpose string) string {
	return schemas.DerivedID(cmd.ID, purpose, cmd.OccurredAt)
}
