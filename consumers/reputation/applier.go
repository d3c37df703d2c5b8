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
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/reputation"
	"github.com/fintech/platform/topics"
)

// Result is the answer to an applied event: the contract's type.
type Result = schemas.ReputationEventResult

// Applier is the pipeline.Handler of the reputation-applier group.
type Applier struct {
	now func() time.Time
}

var _ pipeline.Handler = (*Applier)(nil)

// NewApplier builds the applier.
func NewApplier(now func() time.Time) *Applier { return &Applier{now: now} }

type cmd struct {
	ev   schemas.ReputationEvent
	meta []byte
}

// Apply applies the batch in order. An event whose (user, kind, sourceId)
// was applied before, in the table or earlier in the batch, is answered 200
// with the original result and changes nothing; an unknown user is 404
// user_not_found.
func (a *Applier) Apply(ctx context.Context, tx pgx.Tx, cmds []pipeline.Command) ([]pipeline.Outcome, error) {
	outcomes := make([]pipeline.Outcome, len(cmds))
	parsed := make([]*cmd, len(cmds))
	var users []string
	var keys []reputation.SourceKey
	for i, c := range cmds {
		p, rej := decode(c.Env)
		if rej != nil {
			outcomes[i] = *rej
			continue
		}
		parsed[i] = p
		users = append(users, p.ev.UserID)
		if p.ev.SourceID != "" {
			keys = append(keys, reputation.SourceKey{UserID: p.ev.UserID, Kind: p.ev.Kind, SourceID: p.ev.SourceID})
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
	scores, err := reputation.LockScores(ctx, tx, known)
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
	for i, p := range parsed {
		if p == nil {
			continue
		}
		ev := p.ev
		if !exists[ev.UserID] {
			outcomes[i] = pipeline.Reject(http.StatusNotFound, schemas.CodeUserNotFound, "no user with this id", nil)
			continue
		}
		key := reputation.SourceKey{UserID: ev.UserID, Kind: ev.Kind, SourceID: ev.SourceID}
		if ev.SourceID != "" {
			if prev, ok := applied[key]; ok {
				r := resultOf(prev)
				r.Idempotent = true
				outcomes[i] = pipeline.JSON(http.StatusOK, r)
				outcomes[i].Unrecorded = true
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
		e := reputation.Event{ID: schemas.NewID(), UserID: ev.UserID, Kind: ev.Kind, SourceModule: ev.SourceModule,
			Weight: ev.Weight, SourceID: ev.SourceID, Meta: p.meta, ScoreAfter: sc.Score,
			RankBefore: beforeRank, RankAfter: sc.Rank, Seq: sc.EventCount, CreatedAt: now}
		events = append(events, e)
		if ev.SourceID != "" {
			applied[key] = e
		}
		r := resultOf(e)
		r.PreviousScore = before
		o := pipeline.JSON(http.StatusCreated, r)
		emits, err := emissions(e, before, r.Promoted, now)
		if err != nil {
			return nil, err
		}
		o.Emit = emits
		// With a source, the unique (user, kind, source) answers a
		// redelivery: no processed-command row is needed.
		o.Unrecorded = ev.SourceID != ""
		outcomes[i] = o
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

func resultOf(e reputation.Event) Result {
	return Result{EventID: e.ID, UserID: e.UserID, Weight: e.Weight, PreviousScore: e.ScoreAfter - e.Weight,
		NewScore: e.ScoreAfter, PreviousRank: e.RankBefore, NewRank: e.RankAfter,
		Promoted: schemas.RankLevel(e.RankAfter) > schemas.RankLevel(e.RankBefore)}
}

func emissions(e reputation.Event, before int64, promoted bool, now time.Time) ([]pipeline.Emission, error) {
	upd, err := schemas.New(schemas.TypeScoreUpdated, e.UserID, e.UserID, schemas.ScoreUpdated{
		EventID: e.ID, UserID: e.UserID, Kind: e.Kind, SourceModule: e.SourceModule, Weight: e.Weight,
		PreviousScore: before, NewScore: e.ScoreAfter, PreviousRank: e.RankBefore, NewRank: e.RankAfter,
		Promoted: promoted, Seq: e.Seq, SourceID: e.SourceID}, now)
	if err != nil {
		return nil, err
	}
	out := []pipeline.Emission{{Topic: topics.EventsReputation, Env: upd}}
	if promoted {
		pr, err := schemas.New(schemas.TypeRankPromoted, e.UserID, e.UserID, schemas.RankPromoted{
			UserID: e.UserID, PreviousRank: e.RankBefore, NewRank: e.RankAfter, Score: e.ScoreAfter, EventID: e.ID}, now)
		if err != nil {
			return nil, err
		}
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
