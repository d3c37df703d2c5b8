// Package ledger is the ledger appender: the one consumer of the
// one-partition ledger.append topic, which owns the chain head. It chains
// each batch onto the head stored in Postgres (locked for the batch), so a
// restart or a rebalance continues the chain without a gap or a fork.
package ledger

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/ledger"
	"github.com/fintech/platform/topics"
)

// Appender is the pipeline.Handler of the ledger-appender group.
type Appender struct {
	salt string
	now  func() time.Time
}

var _ pipeline.Handler = (*Appender)(nil)

// NewAppender builds the appender; salt is mixed into every hash.
func NewAppender(salt string, now func() time.Time) *Appender {
	return &Appender{salt: salt, now: now}
}

type pending struct {
	idx   int
	entry ledger.Entry
}

// Apply chains the batch in command order. A command whose source (kind,
// sourceId) already has an entry, in the table or earlier in the batch, is
// answered 200 with that entry and appends nothing; a new entry is answered
// 201 and emits ledger.entry_added.
func (a *Appender) Apply(ctx context.Context, tx pgx.Tx, cmds []pipeline.Command) ([]pipeline.Outcome, error) {
	outcomes := make([]pipeline.Outcome, len(cmds))
	reqs := make([]*schemas.LedgerAppend, len(cmds))
	metas := make([][]byte, len(cmds))
	var keys []ledger.SourceKey
	var ids []string
	for i, c := range cmds {
		req, meta, rej := decode(c.Env)
		if rej != nil {
			outcomes[i] = *rej
			continue
		}
		reqs[i], metas[i] = req, meta
		keys = append(keys, ledger.SourceKey{Scope: req.Scope, Kind: req.Kind, SourceID: req.SourceID})
		if req.EntryID != "" {
			ids = append(ids, req.EntryID)
		}
	}
	if len(keys) == 0 {
		return outcomes, nil
	}

	head, err := ledger.LockHead(ctx, tx)
	if err != nil {
		return nil, err
	}
	existing, err := ledger.BySources(ctx, tx, keys)
	if err != nil {
		return nil, err
	}
	takenIDs, err := ledger.ExistingIDs(ctx, tx, ids)
	if err != nil {
		return nil, err
	}

	ts := a.now().UTC().Truncate(time.Microsecond)
	if head.Timestamp != nil && ts.Before(*head.Timestamp) {
		ts = head.Timestamp.UTC() // timestamps never go backwards along the chain
	}
	var fresh []ledger.Entry
	var added []pending
	inBatch := map[ledger.SourceKey]int{} // -> index in fresh
	for i, req := range reqs {
		if req == nil {
			continue
		}
		key := ledger.SourceKey{Scope: req.Scope, Kind: req.Kind, SourceID: req.SourceID}
		if e, ok := existing[key]; ok {
			outcomes[i] = unrecorded(pipeline.JSON(http.StatusOK, e.JSON()))
			continue
		}
		if j, ok := inBatch[key]; ok {
			outcomes[i] = unrecorded(pipeline.JSON(http.StatusOK, fresh[j].JSON()))
			continue
		}
		id := req.EntryID
		if id == "" {
			// Derived from the record: the entry appended again from the
			// same record after a restore is the entry it was.
			id = schemas.DerivedID(cmds[i].Env.ID, "ledger.entry", cmds[i].Env.OccurredAt)
		} else if takenIDs[id] {
			outcomes[i] = pipeline.Reject(http.StatusConflict, schemas.CodeEntryExists,
				"an entry with this id exists for another source", nil)
			continue
		}
		takenIDs[id] = true
		actor := req.ActorUserID
		if actor == "" {
			actor = cmds[i].Env.ActorUserID
		}
		e := ledger.Entry{ID: id, Height: head.Height + 1, Kind: req.Kind, ActorUserID: actor,
			SourceID: req.SourceID, AmountCents: req.AmountCents, Currency: req.Currency, Meta: metas[i],
			Timestamp: ts, PrevHash: head.Hash, Scope: req.Scope}
		e.Hash = e.ComputeHash(a.salt)
		head.Height, head.Hash = e.Height, e.Hash
		inBatch[key] = len(fresh)
		fresh = append(fresh, e)
		added = append(added, pending{idx: i, entry: e})
	}
	if len(fresh) == 0 {
		return outcomes, nil
	}
	if err := ledger.Insert(ctx, tx, fresh); err != nil {
		return nil, err
	}
	head.Timestamp = &ts
	if err := ledger.SetHead(ctx, tx, head); err != nil {
		return nil, err
	}
	for _, p := range added {
		body := p.entry.JSON()
		env, err := schemas.New(schemas.TypeLedgerEntryAdded, p.entry.ID, p.entry.ActorUserID, body, ts)
		if err != nil {
			return nil, err
		}
		env.ID = schemas.DerivedID(cmds[p.idx].Env.ID, "event:"+schemas.TypeLedgerEntryAdded, cmds[p.idx].Env.OccurredAt)
		o := unrecorded(pipeline.JSON(http.StatusCreated, body))
		o.Emit = []pipeline.Emission{{Topic: topics.EventsLedger, Env: env}}
		outcomes[p.idx] = o
	}
	return outcomes, nil
}

// unrecorded marks an outcome that needs no processed-command row: the
// entry's unique source (scope, kind, sourceId) answers a redelivery without
// appending again (the runner still records it when a reply is awaited).
func unrecorded(o pipeline.Outcome) pipeline.Outcome {
	o.Unrecorded = true
	return o
}

// decode reads and validates one command; a non-nil outcome rejects it.
func decode(env schemas.Envelope) (*schemas.LedgerAppend, []byte, *pipeline.Outcome) {
	reject := func(status int, code, msg string, fields map[string]string) (*schemas.LedgerAppend, []byte, *pipeline.Outcome) {
		var extra map[string]any
		if fields != nil {
			extra = map[string]any{"fields": fields}
		}
		o := pipeline.Reject(status, code, msg, extra)
		return nil, nil, &o
	}
	if env.Type != schemas.TypeLedgerAppend {
		o := pipeline.Unreadable(fmt.Sprintf("%s is not a ledger command", env.Type))
		return nil, nil, &o
	}
	req, err := schemas.DataAs[schemas.LedgerAppend](env)
	if err != nil {
		o := pipeline.Unreadable("the command data is not a ledger append")
		return nil, nil, &o
	}
	fields := map[string]string{}
	var problems schemas.FieldProblems
	if errors.As(req.Validate(), &problems) {
		fields = problems
	}
	var meta []byte
	if req.Meta != nil {
		meta, err = ledger.Canonical(req.Meta)
		switch {
		case err != nil:
			fields["meta"] = "must be a JSON object"
		case len(meta) > schemas.LedgerMaxMeta:
			fields["meta"] = "must be at most 64 KiB"
		}
	}
	if len(fields) > 0 {
		return reject(http.StatusUnprocessableEntity, schemas.CodeValidationFailed, "some fields are missing or invalid", fields)
	}
	return &req, meta, nil
}
