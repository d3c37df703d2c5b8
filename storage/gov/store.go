// Package gov stores governance proposals and ballots. The gateway writes
// them directly (architecture.md allows it for low write rates); every state
// change commits together with its outbox rows (events, ledger entry,
// reputation events) in one transaction.
package gov

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/storage/postgres"
)

// ErrInvalidState is a transition the proposal's status does not allow.
var ErrInvalidState = errors.New("invalid proposal state")

// ErrVotingClosed is a ballot on a proposal that is not open or outside its
// voting window.
var ErrVotingClosed = errors.New("voting closed")

// ErrAlreadyVoted is a second ballot of one user on one proposal, refused
// by the unique index on (proposal_id, user_id).
var ErrAlreadyVoted = errors.New("already voted")

// Proposal is one row of gov_proposals.
type Proposal struct {
	ID                    string
	Title                 string
	Summary               string
	Body                  string
	Category              string
	VoteMode              string
	Options               []string
	Quorum                int64
	Threshold             string
	VotingDurationSeconds int64
	Status                string
	AuthorUserID          string
	VotesOpenAt           *time.Time
	VotesCloseAt          *time.Time
	ClosedAt              *time.Time
	// Ballots is the ballot count frozen at close (nil before).
	Ballots *int64
	// Tally is the tally frozen at close (nil before).
	Tally     json.RawMessage
	CreatedAt time.Time
}

// Ballot is one row of gov_ballots. Weights keep the exact decimals the
// voter sent.
type Ballot struct {
	ID         string
	ProposalID string
	UserID     string
	Choice     string
	Ranking    []string
	Weights    map[string]string
	Reason     string
	CreatedAt  time.Time
}

// Filter selects proposals; empty fields match everything.
type Filter struct {
	Status, Category, AuthorUserID string
}

// Store is the governance repository.
type Store struct {
	pool *pgxpool.Pool
}

// NewStore builds the repository.
func NewStore(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

const insertProposalSQL = `
INSERT INTO gov_proposals (id, title, summary, body, category, vote_mode, options, quorum, threshold,
    voting_duration_seconds, status, author_user_id, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`

// Create inserts a draft and queues its events in the same transaction.
// When idem is set (a request with an Idempotency-Key), the answer it
// carries is recorded under its command id in that transaction too; a
// command id recorded before creates nothing and returns the earlier
// record, also when the two requests race.
func (s *Store) Create(ctx context.Context, p Proposal, events []pipeline.OutboxRow, idem *pipeline.Processed) (*pipeline.Processed, error) {
	opts, err := json.Marshal(nonNil(p.Options))
	if err != nil {
		return nil, err
	}
	var prior *pipeline.Processed
	lookup := func(q postgres.Querier) error {
		found, err := pipeline.LookupProcessed(ctx, q, []string{idem.CommandID})
		if err != nil {
			return err
		}
		if r, ok := found[idem.CommandID]; ok {
			prior = &r
		}
		return nil
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if idem != nil {
			if err := lookup(tx); err != nil || prior != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, insertProposalSQL, p.ID, p.Title, p.Summary, p.Body, p.Category, p.VoteMode, opts,
			p.Quorum, p.Threshold, p.VotingDurationSeconds, p.Status, p.AuthorUserID, p.CreatedAt); err != nil {
			return err
		}
		if idem != nil {
			if err := pipeline.InsertProcessed(ctx, tx, []pipeline.Processed{*idem}); err != nil {
				return err
			}
		}
		return pipeline.InsertOutbox(ctx, tx, events)
	})
	if idem != nil && errors.Is(postgres.Translate(err), postgres.ErrConflict) {
		// A concurrent request with the same key won the race.
		err = lookup(s.pool)
	}
	if err != nil {
		return nil, fmt.Errorf("create proposal %s: %w", p.ID, postgres.Translate(err))
	}
	return prior, nil
}

const selectProposalSQL = `
SELECT id, title, summary, body, category, vote_mode, options, quorum, threshold, voting_duration_seconds,
    status, author_user_id, votes_open_at, votes_close_at, closed_at, ballots, tally, created_at
FROM gov_proposals `

func scanProposal(row pgx.Row) (Proposal, error) {
	var p Proposal
	var opts []byte
	var ballots *int32
	var tally []byte
	err := row.Scan(&p.ID, &p.Title, &p.Summary, &p.Body, &p.Category, &p.VoteMode, &opts, &p.Quorum, &p.Threshold,
		&p.VotingDurationSeconds, &p.Status, &p.AuthorUserID, &p.VotesOpenAt, &p.VotesCloseAt, &p.ClosedAt,
		&ballots, &tally, &p.CreatedAt)
	if err != nil {
		return Proposal{}, err
	}
	if err := json.Unmarshal(opts, &p.Options); err != nil {
		return Proposal{}, fmt.Errorf("decode options of proposal %s: %w", p.ID, err)
	}
	if ballots != nil {
		n := int64(*ballots)
		p.Ballots = &n
	}
	if tally != nil {
		p.Tally = tally
	}
	utc(p.VotesOpenAt)
	utc(p.VotesCloseAt)
	utc(p.ClosedAt)
	p.CreatedAt = p.CreatedAt.UTC()
	return p, nil
}

func utc(t *time.Time) {
	if t != nil {
		*t = t.UTC()
	}
}

// Get returns one proposal; postgres.ErrNotFound when there is none.
func (s *Store) Get(ctx context.Context, id string) (Proposal, error) {
	p, err := scanProposal(s.pool.QueryRow(ctx, selectProposalSQL+`WHERE id = $1`, id))
	if err != nil {
		return Proposal{}, fmt.Errorf("read proposal %s: %w", id, postgres.Translate(err))
	}
	return p, nil
}

// List returns up to limit proposals matching f, newest first by creation
// time then id, strictly before the position after (when set).
func (s *Store) List(ctx context.Context, f Filter, after schemas.Position, limit int) ([]Proposal, error) {
	rows, err := s.pool.Query(ctx, selectProposalSQL+`
WHERE ($1 = '' OR status = $1) AND ($2 = '' OR category = $2) AND ($3 = '' OR author_user_id = $3)
  AND ($4 = '' OR (created_at, id) < ($6, $4))
ORDER BY created_at DESC, id DESC LIMIT $5`, f.Status, f.Category, f.AuthorUserID, after.ID, limit, after.At)
	if err != nil {
		return nil, fmt.Errorf("list proposals: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Proposal, error) { return scanProposal(r) })
	if err != nil {
		return nil, fmt.Errorf("list proposals: %w", err)
	}
	return out, nil
}

// Open moves a draft to open with its voting window and queues events.
// Any other status is ErrInvalidState.
func (s *Store) Open(ctx context.Context, id string, openAt, closeAt time.Time, events []pipeline.OutboxRow) (Proposal, error) {
	var out Proposal
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		p, err := scanProposal(tx.QueryRow(ctx, selectProposalSQL+`WHERE id = $1 FOR UPDATE`, id))
		if err != nil {
			return postgres.Translate(err)
		}
		if p.Status != schemas.ProposalDraft {
			return ErrInvalidState
		}
		if _, err := tx.Exec(ctx, `UPDATE gov_proposals SET status = $2, votes_open_at = $3, votes_close_at = $4 WHERE id = $1`,
			id, schemas.ProposalOpen, openAt, closeAt); err != nil {
			return err
		}
		p.Status, p.VotesOpenAt, p.VotesCloseAt = schemas.ProposalOpen, &openAt, &closeAt
		out = p
		return pipeline.InsertOutbox(ctx, tx, events)
	})
	if err != nil {
		return Proposal{}, fmt.Errorf("open proposal %s: %w", id, err)
	}
	return out, nil
}

const insertBallotSQL = `
INSERT INTO gov_ballots (id, proposal_id, user_id, choice, ranking, weights, reason, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`

// Vote records a ballot on an open proposal inside its voting window (else
// ErrVotingClosed), queues events, and returns every ballot of the proposal
// as of the commit. The proposal row is share-locked, so a concurrent close
// either sees this ballot or is seen by it as closed. A second ballot of
// the same user is ErrAlreadyVoted.
func (s *Store) Vote(ctx context.Context, b Ballot, events []pipeline.OutboxRow) ([]Ballot, error) {
	var ranking, weights []byte
	var err error
	if b.Ranking != nil {
		if ranking, err = json.Marshal(b.Ranking); err != nil {
			return nil, err
		}
	}
	if b.Weights != nil {
		if weights, err = json.Marshal(b.Weights); err != nil {
			return nil, err
		}
	}
	var all []Ballot
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var status string
		var openAt, closeAt *time.Time
		err := tx.QueryRow(ctx, `SELECT status, votes_open_at, votes_close_at FROM gov_proposals WHERE id = $1 FOR SHARE`,
			b.ProposalID).Scan(&status, &openAt, &closeAt)
		if err != nil {
			return postgres.Translate(err)
		}
		if status != schemas.ProposalOpen || openAt == nil || closeAt == nil ||
			b.CreatedAt.Before(*openAt) || !b.CreatedAt.Before(*closeAt) {
			return ErrVotingClosed
		}
		if _, err := tx.Exec(ctx, insertBallotSQL, b.ID, b.ProposalID, b.UserID, b.Choice, ranking, weights,
			b.Reason, b.CreatedAt); err != nil {
			if errors.Is(postgres.Translate(err), postgres.ErrConflict) {
				return ErrAlreadyVoted
			}
			return err
		}
		if err := pipeline.InsertOutbox(ctx, tx, events); err != nil {
			return err
		}
		all, err = ballots(ctx, tx, b.ProposalID)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("vote on proposal %s: %w", b.ProposalID, err)
	}
	return all, nil
}

// Decision is what closing a proposal records: its final status, the
// frozen tally and ballot count, and the outbox rows it emits.
type Decision struct {
	Status  string
	Ballots int64
	Tally   json.RawMessage
	Events  []pipeline.OutboxRow
}

// Close locks an open proposal (anything else is ErrInvalidState), reads
// every ballot, lets decide tally them, and records the decision with its
// outbox rows in the same transaction.
func (s *Store) Close(ctx context.Context, id, actor string, now time.Time,
	decide func(p Proposal, ballots []Ballot) (Decision, error)) (Proposal, error) {
	var out Proposal
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		p, err := scanProposal(tx.QueryRow(ctx, selectProposalSQL+`WHERE id = $1 FOR UPDATE`, id))
		if err != nil {
			return postgres.Translate(err)
		}
		if p.Status != schemas.ProposalOpen {
			return ErrInvalidState
		}
		all, err := ballots(ctx, tx, id)
		if err != nil {
			return err
		}
		p.ClosedAt = &now
		d, err := decide(p, all)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE gov_proposals SET status = $2, closed_at = $3, closed_by = $4, ballots = $5, tally = $6
WHERE id = $1`, id, d.Status, now, actor, d.Ballots, []byte(d.Tally)); err != nil {
			return err
		}
		p.Status, p.Ballots, p.Tally = d.Status, &d.Ballots, d.Tally
		out = p
		return pipeline.InsertOutbox(ctx, tx, d.Events)
	})
	if err != nil {
		return Proposal{}, fmt.Errorf("close proposal %s: %w", id, err)
	}
	return out, nil
}

const selectBallotSQL = `SELECT id, proposal_id, user_id, choice, ranking, weights, reason, created_at FROM gov_ballots `

func scanBallot(row pgx.Row) (Ballot, error) {
	var b Ballot
	var ranking, weights []byte
	if err := row.Scan(&b.ID, &b.ProposalID, &b.UserID, &b.Choice, &ranking, &weights, &b.Reason, &b.CreatedAt); err != nil {
		return Ballot{}, err
	}
	if ranking != nil {
		if err := json.Unmarshal(ranking, &b.Ranking); err != nil {
			return Ballot{}, fmt.Errorf("decode ranking of ballot %s: %w", b.ID, err)
		}
	}
	if weights != nil {
		if err := json.Unmarshal(weights, &b.Weights); err != nil {
			return Ballot{}, fmt.Errorf("decode weights of ballot %s: %w", b.ID, err)
		}
	}
	b.CreatedAt = b.CreatedAt.UTC()
	return b, nil
}

func ballots(ctx context.Context, q postgres.Querier, proposalID string) ([]Ballot, error) {
	return listBallots(ctx, q, proposalID, "", 0)
}

func listBallots(ctx context.Context, q postgres.Querier, proposalID, after string, limit int) ([]Ballot, error) {
	sql := selectBallotSQL + `WHERE proposal_id = $1 AND ($2 = '' OR id > $2) ORDER BY id`
	args := []any{proposalID, after}
	if limit > 0 {
		sql += ` LIMIT $3`
		args = append(args, limit)
	}
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("read ballots of %s: %w", proposalID, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Ballot, error) { return scanBallot(r) })
	if err != nil {
		return nil, fmt.Errorf("read ballots of %s: %w", proposalID, err)
	}
	return out, nil
}

// Ballots returns every ballot of a proposal in id order.
func (s *Store) Ballots(ctx context.Context, proposalID string) ([]Ballot, error) {
	return ballots(ctx, s.pool, proposalID)
}

// ListBallots returns up to limit ballots of a proposal after the id after,
// in id order.
func (s *Store) ListBallots(ctx context.Context, proposalID, after string, limit int) ([]Ballot, error) {
	return listBallots(ctx, s.pool, proposalID, after, limit)
}

// CountOpen is the number of proposals in status open.
func (s *Store) CountOpen(ctx context.Context) (int64, error) {
	var n int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM gov_proposals WHERE status = 'open'`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count open proposals: %w", err)
	}
	return n, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// MissingDecisionsSQL lists, in the columns of a ledger re-anchoring source
// (consumers/ledger.SQLSource), every closed proposal without its
// gov:decision entry, with the tally frozen at close as the entry's meta.
const MissingDecisionsSQL = `
SELECT '' AS entry_id,
       'gov:decision' AS kind,
       p.id AS source_id,
       coalesce(p.closed_by, '') AS actor_user_id,
       NULL::bigint AS amount_cents,
       '' AS currency,
       json_build_object('reanchored', true, 'proposalId', p.id, 'title', p.title, 'category', p.category,
                         'voteMode', p.vote_mode, 'options', p.options, 'authorUserId', p.author_user_id,
                         'status', p.status, 'tally', p.tally,
                         'closedAt', to_char(p.closed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))::text AS meta
FROM gov_proposals p
WHERE p.status IN ('executed', 'rejected')
  AND NOT EXISTS (SELECT 1 FROM ledger_entries e WHERE e.kind = 'gov:decision' AND e.source_id = p.id)
ORDER BY p.closed_at, p.id`
