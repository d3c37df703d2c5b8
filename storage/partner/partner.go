// Package partner stores what the partner rails (rights, chess, cert)
// report: royalties, podium entries, tournaments and certification payouts.
// Each write records the row and queues its event in the outbox in one
// transaction; duplicate deliveries are decided by unique indexes with
// ON CONFLICT DO NOTHING, so concurrent copies of one delivery record once.
// Records are keyed by the lower-cased e-mail and read by whoever holds it.
package partner

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/storage/postgres"
)

// Store is the partner rails' repository.
type Store struct {
	pool *pgxpool.Pool
}

// NewStore builds the repository.
func NewStore(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// EventFunc builds the outbox row announcing a newly recorded row; userID is
// the account holding the row's e-mail at that moment ("" when none).
type EventFunc[T any] func(row T, userID string) (pipeline.OutboxRow, error)

// RoyaltyRow is a recorded royalty.
type RoyaltyRow struct {
	ID         string    `db:"id"`
	EventID    string    `db:"event_id"`
	Email      string    `db:"email"`
	ProductKey string    `db:"product_key"`
	Period     string    `db:"period"`
	Amount     int64     `db:"amount"`
	PaidAt     time.Time `db:"paid_at"`
	// RecordedAt is when the platform received it: the order of the lists.
	RecordedAt time.Time `db:"recorded_at"`
}

// View is the API shape.
func (r RoyaltyRow) View() schemas.Royalty {
	return schemas.Royalty{ID: r.ID, ProductKey: r.ProductKey, Period: r.Period, Amount: r.Amount,
		PaidAt: r.PaidAt.UTC(), EventID: r.EventID}
}

// PrizeRow is a recorded podium entry.
type PrizeRow struct {
	ID           string    `db:"id"`
	TournamentID string    `db:"tournament_id"`
	Place        int       `db:"place"`
	Email        string    `db:"email"`
	Amount       int64     `db:"amount"`
	FinalizedAt  time.Time `db:"finalized_at"`
	// RecordedAt is when the platform received it: the order of the lists.
	RecordedAt time.Time `db:"recorded_at"`
}

// View is the API shape.
func (r PrizeRow) View() schemas.Prize {
	return schemas.Prize{ID: r.ID, TournamentID: r.TournamentID, Place: r.Place, Amount: r.Amount,
		FinalizedAt: r.FinalizedAt.UTC()}
}

// TournamentRow is a published tournament.
type TournamentRow struct {
	ID          string    `db:"id"`
	StartsAt    time.Time `db:"starts_at"`
	Format      string    `db:"format"`
	PrizePool   int64     `db:"prize_pool"`
	Capacity    int       `db:"capacity"`
	Entries     int       `db:"entries"`
	PublishedAt time.Time `db:"published_at"`
	UpdatedAt   time.Time `db:"updated_at"`
	// Version is the partner's version of the tournament (0: unversioned).
	Version int64 `db:"version"`
}

// View is the API shape.
func (r TournamentRow) View() schemas.Tournament {
	return schemas.Tournament{ID: r.ID, StartsAt: r.StartsAt.UTC(), Format: r.Format, PrizePool: r.PrizePool,
		Entries: r.Entries, Capacity: r.Capacity}
}

// CertPayoutRow is a recorded certification payout.
type CertPayoutRow struct {
	ID                string    `db:"id"`
	EventID           string    `db:"event_id"`
	Email             string    `db:"email"`
	ArtifactVersionID string    `db:"artifact_version_id"`
	Amount            int64     `db:"amount"`
	CertifiedAt       time.Time `db:"certified_at"`
	// RecordedAt is when the platform received it: the order of the lists.
	RecordedAt time.Time `db:"recorded_at"`
}

// View is the API shape.
func (r CertPayoutRow) View() schemas.CertPayout {
	return schemas.CertPayout{ID: r.ID, ArtifactVersionID: r.ArtifactVersionID, Amount: r.Amount,
		CertifiedAt: r.CertifiedAt.UTC(), EventID: r.EventID}
}

const (
	royaltyColumns    = `id, event_id, email, product_key, period, amount, paid_at`
	royaltyRead       = royaltyColumns + `, recorded_at`
	prizeColumns      = `id, tournament_id, place, email, amount, finalized_at`
	prizeRead         = prizeColumns + `, recorded_at`
	tournamentColumns = `id, starts_at, format, prize_pool, capacity, entries, published_at, updated_at, version`
	certColumns       = `id, event_id, email, artifact_version_id, amount, certified_at`
	certRead          = certColumns + `, recorded_at`
)

const userIDSQL = `SELECT lower(email), id FROM users WHERE lower(email) = ANY($1) AND email_verified_at IS NOT NULL`

// userIDs maps the lower-cased e-mails that belong to an account that
// verified them to its id. An event names only such an account, so that
// whoever registered an address first, without proving it is theirs, never
// receives its earnings on a stream or webhook; the record itself is shown
// to the owner once verified, and its event is not sent again.
func userIDs(ctx context.Context, q postgres.Querier, emails []string) (map[string]string, error) {
	rows, err := q.Query(ctx, userIDSQL, emails)
	if err != nil {
		return nil, fmt.Errorf("find accounts by e-mail: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var email, id string
		if err := rows.Scan(&email, &id); err != nil {
			return nil, fmt.Errorf("scan account: %w", err)
		}
		out[email] = id
	}
	return out, rows.Err()
}

// recordOnce inserts one row keyed by a unique partner id, or finds the row
// a previous delivery recorded. insertSQL must end in ON CONFLICT DO NOTHING
// RETURNING the columns; existingSQL selects the row by the same key ($1).
func recordOnce[T any](ctx context.Context, pool *pgxpool.Pool, insertSQL string, args []any,
	existingSQL, key, email string, event EventFunc[T]) (T, bool, error) {
	var (
		row      T
		inserted bool
	)
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, insertSQL, args...)
		if err != nil {
			return err
		}
		got, err := pgx.CollectRows(rows, pgx.RowToStructByName[T])
		if err != nil {
			return err
		}
		if len(got) == 0 {
			// A previous (or concurrent, now committed) delivery recorded it.
			rows, err := tx.Query(ctx, existingSQL, key)
			if err != nil {
				return err
			}
			row, err = pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[T])
			return err
		}
		row, inserted = got[0], true
		users, err := userIDs(ctx, tx, []string{email})
		if err != nil {
			return err
		}
		ev, err := event(row, users[email])
		if err != nil {
			return err
		}
		return pipeline.InsertOutbox(ctx, tx, []pipeline.OutboxRow{ev})
	})
	if err != nil {
		var zero T
		return zero, false, postgres.Translate(err)
	}
	return row, inserted, nil
}

const insertRoyaltySQL = `INSERT INTO partner_royalties (` + royaltyColumns + `)
VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (event_id) DO NOTHING RETURNING ` + royaltyRead

const royaltyByEventSQL = `SELECT ` + royaltyRead + ` FROM partner_royalties WHERE event_id = $1`

// RecordRoyalty records r unless its EventID was recorded before, and then
// queues event's row. It returns the stored royalty (the earlier one on a
// replay) and whether this call recorded it.
func (s *Store) RecordRoyalty(ctx context.Context, r RoyaltyRow, event EventFunc[RoyaltyRow]) (RoyaltyRow, bool, error) {
	row, inserted, err := recordOnce(ctx, s.pool, insertRoyaltySQL,
		[]any{r.ID, r.EventID, r.Email, r.ProductKey, r.Period, r.Amount, r.PaidAt},
		royaltyByEventSQL, r.EventID, r.Email, event)
	if err != nil {
		return RoyaltyRow{}, false, fmt.Errorf("record royalty %s: %w", r.EventID, err)
	}
	return row, inserted, nil
}

const insertCertSQL = `INSERT INTO partner_cert_payouts (` + certColumns + `)
VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (event_id) DO NOTHING RETURNING ` + certRead

const certByEventSQL = `SELECT ` + certRead + ` FROM partner_cert_payouts WHERE event_id = $1`

// RecordCertPayout records p unless its EventID was recorded before, like
// RecordRoyalty.
func (s *Store) RecordCertPayout(ctx context.Context, p CertPayoutRow, event EventFunc[CertPayoutRow]) (CertPayoutRow, bool, error) {
	row, inserted, err := recordOnce(ctx, s.pool, insertCertSQL,
		[]any{p.ID, p.EventID, p.Email, p.ArtifactVersionID, p.Amount, p.CertifiedAt},
		certByEventSQL, p.EventID, p.Email, event)
	if err != nil {
		return CertPayoutRow{}, false, fmt.Errorf("record cert payout %s: %w", p.EventID, err)
	}
	return row, inserted, nil
}

const insertPrizesSQL = `INSERT INTO partner_prizes (` + prizeColumns + `)
SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::bigint[], $6::timestamptz[])
ON CONFLICT (tournament_id, place, email) DO NOTHING RETURNING id`

const podiumSQL = `SELECT ` + prizeRead + ` FROM partner_prizes
WHERE tournament_id = $1 AND (place, email) IN (SELECT * FROM unnest($2::int[], $3::text[]))
ORDER BY place, email`

// RecordPodium records the entries of one tournament's podium that were not
// recorded before (by tournament, place and e-mail) and queues one event per
// new entry. It returns the newly recorded entries and the earlier ones the
// delivery repeated, each ordered by place and e-mail. Every entry must carry
// the same TournamentID, and no (place, e-mail) twice.
func (s *Store) RecordPodium(ctx context.Context, entries []PrizeRow, event EventFunc[PrizeRow]) (recorded, replayed []PrizeRow, err error) {
	if len(entries) == 0 {
		return nil, nil, nil
	}
	entries = append([]PrizeRow(nil), entries...)
	// One order for every delivery, so concurrent podiums never deadlock.
	sort.Slice(entries, func(i, j int) bool {
		if entries[i].Place != entries[j].Place {
			return entries[i].Place < entries[j].Place
		}
		return entries[i].Email < entries[j].Email
	})
	n := len(entries)
	ids, tids, emails := make([]string, n), make([]string, n), make([]string, n)
	places, amounts, times := make([]int32, n), make([]int64, n), make([]time.Time, n)
	for i, e := range entries {
		ids[i], tids[i], places[i], emails[i], amounts[i], times[i] = e.ID, e.TournamentID, int32(e.Place), e.Email, e.Amount, e.FinalizedAt
	}
	tournament := entries[0].TournamentID
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		recorded, replayed = nil, nil
		inserted, err := postgres.StringSet(ctx, tx, insertPrizesSQL, ids, tids, places, emails, amounts, times)
		if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, podiumSQL, tournament, places, emails)
		if err != nil {
			return err
		}
		all, err := pgx.CollectRows(rows, pgx.RowToStructByName[PrizeRow])
		if err != nil {
			return err
		}
		for _, r := range all {
			if inserted[r.ID] {
				recorded = append(recorded, r)
			} else {
				replayed = append(replayed, r)
			}
		}
		if len(recorded) == 0 {
			return nil
		}
		users, err := userIDs(ctx, tx, emails)
		if err != nil {
			return err
		}
		events := make([]pipeline.OutboxRow, 0, len(recorded))
		for _, r := range recorded {
			ev, err := event(r, users[r.Email])
			if err != nil {
				return err
			}
			events = append(events, ev)
		}
		return pipeline.InsertOutbox(ctx, tx, events)
	})
	if err != nil {
		return nil, nil, fmt.Errorf("record podium of %s: %w", tournament, postgres.Translate(err))
	}
	return recorded, replayed, nil
}

// Publication is what PublishTournament did.
type Publication int

// The outcomes of a publication.
const (
	Unchanged Publication = iota // the same tournament was published before
	Created                      // first publication of the id
	Updated                      // a republication that changed some field
	Stale                        // an older version than the stored one: ignored
)

const insertTournamentSQL = `INSERT INTO partner_tournaments (` + tournamentColumns + `)
VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8) ON CONFLICT (id) DO NOTHING RETURNING ` + tournamentColumns

// updateTournamentSQL changes a tournament only for a newer version (a
// conditional UPDATE: concurrent deliveries serialise on the row, and the
// older one finds the condition false); unversioned updates (0) apply only
// while no versioned one is stored.
const updateTournamentSQL = `UPDATE partner_tournaments
SET starts_at = $2, format = $3, prize_pool = $4, capacity = $5, entries = $6, updated_at = $7, version = $8
WHERE id = $1 AND (starts_at, format, prize_pool, capacity, entries) IS DISTINCT FROM ($2, $3, $4, $5, $6)
  AND (version < $8 OR ($8 = 0 AND version = 0))
RETURNING ` + tournamentColumns

// bumpTournamentSQL records a newer version that changes nothing, so that
// an older one arriving later still cannot overwrite.
const bumpTournamentSQL = `UPDATE partner_tournaments SET version = $7
WHERE id = $1 AND (starts_at, format, prize_pool, capacity, entries) IS NOT DISTINCT FROM ($2, $3, $4, $5, $6)
  AND version < $7
RETURNING ` + tournamentColumns

const tournamentSQL = `SELECT ` + tournamentColumns + ` FROM partner_tournaments WHERE id = $1`

// sameAs reports whether r holds the fields a publication of t sets.
func (r TournamentRow) sameAs(t TournamentRow) bool {
	return r.StartsAt.Equal(t.StartsAt) && r.Format == t.Format && r.PrizePool == t.PrizePool &&
		r.Capacity == t.Capacity && r.Entries == t.Entries
}

// PublishTournament creates the tournament, or changes the fields a
// republication changed, and queues event's row when it did either. at is
// the publication time. A publication whose version is older than the
// stored one changes nothing (Stale), also under concurrent deliveries.
func (s *Store) PublishTournament(ctx context.Context, t TournamentRow, at time.Time,
	event func(TournamentRow) (pipeline.OutboxRow, error)) (TournamentRow, Publication, error) {
	var (
		row     TournamentRow
		outcome Publication
	)
	args := []any{t.ID, t.StartsAt, t.Format, t.PrizePool, t.Capacity, t.Entries, at, t.Version}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		for _, step := range []struct {
			sql     string
			args    []any
			outcome Publication
		}{
			{insertTournamentSQL, args, Created},
			{updateTournamentSQL, args, Updated},
			{bumpTournamentSQL, append(args[:6:6], t.Version), Unchanged},
			{tournamentSQL, args[:1], Unchanged},
		} {
			rows, err := tx.Query(ctx, step.sql, step.args...)
			if err != nil {
				return err
			}
			got, err := pgx.CollectRows(rows, pgx.RowToStructByName[TournamentRow])
			if err != nil {
				return err
			}
			if len(got) == 0 {
				continue
			}
			row, outcome = got[0], step.outcome
			if outcome == Unchanged {
				if !row.sameAs(t) {
					outcome = Stale // the stored version is newer (or equal with other fields)
				}
				return nil
			}
			ev, err := event(row)
			if err != nil {
				return err
			}
			return pipeline.InsertOutbox(ctx, tx, []pipeline.OutboxRow{ev})
		}
		return pgx.ErrNoRows
	})
	if err != nil {
		return TournamentRow{}, Unchanged, fmt.Errorf("publish tournament %s: %w", t.ID, postgres.Translate(err))
	}
	return row, outcome, nil
}
