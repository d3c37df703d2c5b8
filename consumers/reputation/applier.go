// Package reputation applies weighted reputation events to users' scores.
// Its topic is keyed by user id, so one consumer applies every event of a
// user, in order.
package reputation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres"
	"github.com/fintech/platform/storage/reputation"
	"github.com/fintech/platform/topics"
)

// Result is the answer to an applied event: the contract's type.
type Result = schemas.ReputationEventResult

// Applier is the pipeline.Handler of the reputation-applier group. It
// applies reputation commands and derives reputation from the events of
// derivations() (derive.go).
type Applier struct {
	now     func() time.Time
	derived map[string]derivation

	mu      sync.Mutex
	wallets map[string]Wallet // a wallet never changes owner or currency
}

var _ pipeline.Handler = (*Applier)(nil)

// maxWallets bounds the wallet cache; it starts over when full.
const maxWallets = 100_000

// NewApplier builds the applier.
func NewApplier(now func() time.Time) *Applier {
	return &Applier{now: now, derived: derivations(), wallets: map[string]Wallet{}}
}

type cmd struct {
	ev   schemas.ReputationEvent
	meta []byte
}

// item is one reputation event to apply and the record (index) it came from.
type item struct {
	cmd
	idx     int
	derived bool
	before  string // a derived event's source under the per-transaction rule
}

// Apply applies the batch in order. A command whose (user, kind, sourceId)
// was applied before, in the table or earlier in the batch, is answered 200
// with the original result and changes nothing; an unknown user is 404
// user_not_found. An event record of another module is answered 200 with
// no body: what it earns (possibly nothing) is applied with the same
// once-per-source rule, and its score updates are emitted with it.
func (a *Applier) Apply(ctx context.Context, tx pgx.Tx, cmds []pipeline.Command) ([]pipeline.Outcome, error) {
	outcomes := make([]pipeline.Outcome, len(cmds))
	items, err := a.items(ctx, tx, cmds, outcomes)
	if err != nil {
		return nil, err
	}
	var users []string
	var keys []reputation.SourceKey
	for _, it := range items {
		users = append(users, it.ev.UserID)
		if it.ev.SourceID != "" {
			keys = append(keys, reputation.SourceKey{UserID: it.ev.UserID, Kind: it.ev.Kind, SourceID: it.ev.SourceID})
		}
		if it.before != "" {
			keys = append(keys, reputation.SourceKey{UserID: it.ev.UserID, Kind: it.ev.Kind, SourceID: it.before})
		}
	}
	if len(users) == 0 {
		return outcomes, nil
	}
	exists, err := reputation.ExistingUsers(ctx, tx, users)
	if err != nil {
		return nil, err
	}
	var known []string
	for u := range exists {
		known = append(known, u)
	}
	sort.Strings(known)
	scores, err := reputation.LockScores(ctx, tx, known, schemas.RankOf(0), a.now().UTC().Truncate(time.Microsecond))
	if err != nil {
		return nil, err
	}
	applied, err := reputation.BySources(ctx, tx, keys)
	if err != nil {
		return nil, err
	}

	now := a.now().UTC().Truncate(time.Microsecond)
	touched := map[string]bool{}
	var events []reputation.Event
	for _, it := range items {
		ev := it.ev
		if !exists[ev.UserID] {
			if !it.derived {
				outcomes[it.idx] = pipeline.Reject(http.StatusNotFound, schemas.CodeUserNotFound, "no user with this id", nil)
			}
			continue
		}
		if it.before != "" {
			// Credited under the per-transaction rule before an upgrade
			// and read again: it earned its credit then.
			if _, ok := applied[reputation.SourceKey{UserID: ev.UserID, Kind: ev.Kind, SourceID: it.before}]; ok {
				continue
			}
		}
		key := reputation.SourceKey{UserID: ev.UserID, Kind: ev.Kind, SourceID: ev.SourceID}
		if ev.SourceID != "" {
			if prev, ok := applied[key]; ok {
				if !it.derived {
					r := resultOf(prev)
					r.Idempotent = true
					outcomes[it.idx] = pipeline.JSON(http.StatusOK, r)
					outcomes[it.idx].Unrecorded = true
				}
				continue
			}
		}
		sc, ok := scores[ev.UserID]
		if !ok {
			sc = reputation.Score{UserID: ev.UserID, Rank: schemas.RankOf(0)}
		}
		before, beforeRank := sc.Score, sc.Rank
		sc.Score += ev.Weight
		sc.Rank = schemas.RankOf(sc.Score)
		sc.EventCount++
		sc.UpdatedAt = now
		scores[ev.UserID] = sc
		touched[ev.UserID] = true
		// Derived from the record and what it credits: applied again (after
		// a restore, or re-read), the event and its emissions are the same.
		c := cmds[it.idx].Env
		e := reputation.Event{ID: schemas.DerivedID(c.ID, "reputation:"+ev.UserID+":"+ev.Kind+":"+ev.SourceID, c.OccurredAt),
			UserID: ev.UserID, Kind: ev.Kind, SourceModule: ev.SourceModule,
			Weight: ev.Weight, SourceID: ev.SourceID, Meta: it.meta, ScoreAfter: sc.Score,
			RankBefore: beforeRank, RankAfter: sc.Rank, Seq: sc.EventCount, CreatedAt: now}
		events = append(events, e)
		if ev.SourceID != "" {
			applied[key] = e
		}
		r := resultOf(e)
		r.PreviousScore = before
		emits, err := emissions(e, before, r.Promoted, now, c.OccurredAt)
		if err != nil {
			return nil, err
		}
		if it.derived {
			outcomes[it.idx].Emit = append(outcomes[it.idx].Emit, emits...)
			continue
		}
		o := pipeline.JSON(http.StatusCreated, r)
		o.Emit = emits
		// With a source, the unique (user, kind, source) answers a
		// redelivery: no processed-command row is needed.
		o.Unrecorded = ev.SourceID != ""
		outcomes[it.idx] = o
	}
	if len(events) == 0 {
		return outcomes, nil
	}
	if err := reputation.InsertEvents(ctx, tx, events); err != nil {
		return nil, err
	}
	var upd []reputation.Score
	for u := range touched {
		upd = append(upd, scores[u])
	}
	sort.Slice(upd, func(i, j int) bool { return upd[i].UserID < upd[j].UserID })
	if err := reputation.UpsertScores(ctx, tx, upd); err != nil {
		return nil, err
	}
	return outcomes, nil
}

// items reads the batch into the reputation events to apply, in record
// order: a command's own, or what an event record earns by its derivation.
// Rejected commands get their outcome here; an event record is answered
// 200 and never recorded (nobody waits for it, and its derived events are
// applied once by their sources).
func (a *Applier) items(ctx context.Context, tx pgx.Tx, cmds []pipeline.Command, outcomes []pipeline.Outcome) ([]item, error) {
	var items []item
	var derivedFrom []int
	var readings []reading // of derivedFrom's events
	var wallets []string
	for i, c := range cmds {
		if c.Topic == "" || c.Topic == topics.ReputationCommands {
			p, rej := decode(c.Env)
			if rej != nil {
				outcomes[i] = *rej
				continue
			}
			items = append(items, item{cmd: *p, idx: i})
			continue
		}
		outcomes[i] = pipeline.Outcome{Status: http.StatusOK, Unrecorded: true}
		d, ok := a.derived[c.Env.Type]
		if !ok || d.topic != c.Topic {
			continue
		}
		r, err := d.read(c.Env)
		if err != nil {
			continue // an event whose data does not read earns nothing
		}
		wallets = append(wallets, r.wallets...)
		derivedFrom = append(derivedFrom, i)
		readings = append(readings, r)
	}
	if len(derivedFrom) == 0 {
		return items, nil
	}
	wallet, err := a.walletsOf(ctx, tx, wallets)
	if err != nil {
		return nil, err
	}
	for j, i := range derivedFrom {
		for _, ev := range readings[j].earn(wallet) {
			items = append(items, item{cmd: cmd{ev: ev.ReputationEvent}, idx: i, derived: true, before: ev.Before})
		}
	}
	// Commands and events interleave in record order, which is each
	// topic's partition order; applying in record index order keeps it.
	sort.SliceStable(items, func(x, y int) bool { return items[x].idx < items[y].idx })
	return items, nil
}

// walletsOf resolves wallets' owners and currencies, from the cache or in
// one query.
func (a *Applier) walletsOf(ctx context.Context, q postgres.Querier, ids []string) (func(string) Wallet, error) {
	found := make(map[string]Wallet, len(ids))
	var unknown []string
	a.mu.Lock()
	for _, w := range ids {
		if v, ok := a.wallets[w]; ok {
			found[w] = v
		} else if w != "" {
			unknown = append(unknown, w)
		}
	}
	a.mu.Unlock()
	if len(unknown) > 0 {
		read, err := reputation.Wallets(ctx, q, unknown)
		if err != nil {
			return nil, err
		}
		a.mu.Lock()
		if len(a.wallets)+len(read) > maxWallets {
			a.wallets = map[string]Wallet{}
		}
		for w, v := range read {
			a.wallets[w] = Wallet{Owner: v.Owner, Currency: v.Currency}
			found[w] = a.wallets[w]
		}
		a.mu.Unlock()
	}
	return func(w string) Wallet { return found[w] }, nil
}

func resultOf(e reputation.Event) Result {
	return Result{EventID: e.ID, UserID: e.UserID, Weight: e.Weight, PreviousScore: e.ScoreAfter - e.Weight,
		NewScore: e.ScoreAfter, PreviousRank: e.RankBefore, NewRank: e.RankAfter,
		Promoted: schemas.RankLevel(e.RankAfter) > schemas.RankLevel(e.RankBefore)}
}

// emissions are the events of e; their ids are derived from e's id and at
// (its command's occurredAt).
func emissions(e reputation.Event, before int64, promoted bool, now, at time.Time) ([]pipeline.Emission, error) {
	upd, err := schemas.New(schemas.TypeScoreUpdated, e.UserID, e.UserID, schemas.ScoreUpdated{
		EventID: e.ID, UserID: e.UserID, Kind: e.Kind, SourceModule: e.SourceModule, Weight: e.Weight,
		PreviousScore: before, NewScore: e.ScoreAfter, PreviousRank: e.RankBefore, NewRank: e.RankAfter,
		Promoted: promoted, Seq: e.Seq, SourceID: e.SourceID}, now)
	if err != nil {
		return nil, err
	}
	upd.ID = schemas.DerivedID(e.ID, "event:"+schemas.TypeScoreUpdated, at)
	out := []pipeline.Emission{{Topic: topics.EventsReputation, Env: upd}}
	if promoted {
		pr, err := schemas.New(schemas.TypeRankPromoted, e.UserID, e.UserID, schemas.RankPromoted{
			UserID: e.UserID, PreviousRank: e.RankBefore, NewRank: e.RankAfter, Score: e.ScoreAfter, EventID: e.ID}, now)
		if err != nil {
			return nil, err
		}
		pr.ID = schemas.DerivedID(e.ID, "event:"+schemas.TypeRankPromoted, at)
		out = append(out, pipeline.Emission{Topic: topics.EventsReputation, Env: pr})
	}
	return out, nil
}

// decode reads and validates one command; a non-nil outcome rejects it.
func decode(env schemas.Envelope) (*cmd, *pipeline.Outcome) {
	reject := func(status int, code, msg string, fields map[string]string) (*cmd, *pipeline.Outcome) {
		var extra map[string]any
		if fields != nil {
			extra = map[string]any{"fields": fields}
		}
		o := pipeline.Reject(status, code, msg, extra)
		return nil, &o
	}
	if env.Type != schemas.TypeReputationEvent {
		o := pipeline.Unreadable(fmt.Sprintf("%s is not a reputation command", env.Type))
		return nil, &o
	}
	ev, err := schemas.DataAs[schemas.ReputationEvent](env)
	if err != nil {
		o := pipeline.Unreadable("the command data is not a reputation event")
		return nil, &o
	}
	fields := map[string]string{}
	var problems schemas.FieldProblems
	if errors.As(ev.Validate(), &problems) {
		fields = problems
	}
	var meta []byte
	if ev.Meta != nil {
		meta, err = json.Marshal(ev.Meta)
		switch {
		case err != nil:
			fields["meta"] = "must be a JSON object"
		case len(meta) > schemas.ReputationMaxMeta:
			fields["meta"] = "must be at most 16 KiB"
		}
	}
	if len(fields) > 0 {
		return reject(http.StatusUnprocessableEntity, schemas.CodeValidationFailed, "some fields are missing or invalid", fields)
	}
	return &cmd{ev: ev, meta: meta}, nil
}
