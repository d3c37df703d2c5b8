package ledger

import (
	"errors"
	"net/http"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/ledger"
	"github.com/fintech/platform/topics"
)

// appendEntry chains one entry onto the head, once per source (scope,
// kind, sourceId).
type appendEntry struct {
	schemas.LedgerAppend
	meta []byte // the canonical meta (Validate)
}

// Validate checks the data's fields and that its meta is a JSON object of
// at most 64 KiB in canonical form; a record that fails answers 400
// invalid_command (the gateway answers a client's 422 before publishing).
func (e *appendEntry) Validate() error {
	fields := schemas.FieldProblems{}
	var problems schemas.FieldProblems
	if errors.As(e.LedgerAppend.Validate(), &problems) {
		fields = problems
	}
	if e.Meta != nil {
		meta, err := ledger.Canonical(e.Meta)
		switch {
		case err != nil:
			fields["meta"] = "must be a JSON object"
		case len(meta) > schemas.LedgerMaxMeta:
			fields["meta"] = "must be at most 64 KiB"
		}
		e.meta = meta
	}
	if len(fields) > 0 {
		return fields
	}
	return nil
}

func (e *appendEntry) Lock(b *batch) {
	b.keys = append(b.keys, ledger.SourceKey{Scope: e.Scope, Kind: e.Kind, SourceID: e.SourceID})
	if e.EntryID != "" {
		b.ids = append(b.ids, e.EntryID)
	}
}

func (e *appendEntry) Decide(b *batch, env schemas.Envelope) (pipeline.Outcome, error) {
	key := ledger.SourceKey{Scope: e.Scope, Kind: e.Kind, SourceID: e.SourceID}
	if prev, ok := b.existing[key]; ok {
		return unrecorded(pipeline.JSON(http.StatusOK, prev.JSON())), nil
	}
	if j, ok := b.inBatch[key]; ok {
		return unrecorded(pipeline.JSON(http.StatusOK, b.fresh[j].JSON())), nil
	}
	id := e.EntryID
	if id == "" {
		// Derived from the record: the entry appended again from the
		// same record after a restore is the entry it was.
		id = schemas.DerivedID(env.ID, "ledger.entry", env.OccurredAt)
	} else if b.taken[id] {
		return pipeline.Reject(http.StatusConflict, schemas.CodeEntryExists,
			"an entry with this id exists for another source", nil), nil
	}
	b.taken[id] = true
	actor := e.ActorUserID
	if actor == "" {
		actor = env.ActorUserID
	}
	entry := ledger.Entry{ID: id, Height: b.head.Height + 1, Kind: e.Kind, ActorUserID: actor,
		SourceID: e.SourceID, AmountCents: e.AmountCents, Currency: e.Currency, Meta: e.meta,
		Timestamp: b.ts, PrevHash: b.head.Hash, Scope: e.Scope}
	entry.Hash = entry.ComputeHash(b.a.salt)
	b.head.Height, b.head.Hash = entry.Height, entry.Hash
	b.inBatch[key] = len(b.fresh)
	b.fresh = append(b.fresh, entry)

	body := entry.JSON()
	ev, err := schemas.New(schemas.TypeLedgerEntryAdded, entry.ID, entry.ActorUserID, body, b.ts)
	if err != nil {
		return pipeline.Outcome{}, err
	}
	ev.ID = schemas.DerivedID(env.ID, "event:"+schemas.TypeLedgerEntryAdded, env.OccurredAt)
	o := unrecorded(pipeline.JSON(http.StatusCreated, body))
	o.Emit = []pipeline.Emission{{Topic: topics.EventsLedger, Env: ev}}
	return o, nil
}
