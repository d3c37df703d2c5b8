package gov_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/gov"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/storage/postgres"
	"github.com/fintech/platform/storage/postgres/pgtest"
)

func addUser(t *testing.T, pool *pgxpool.Pool, id string) {
	t.Helper()
	if _, err := pool.Exec(context.Background(), `INSERT INTO users (id, email, name, password_hash, created_at) VALUES ($1, $2, '', 'x', now())`,
		id, id+"@example.com"); err != nil {
		t.Fatal(err)
	}
}

func outboxCount(t *testing.T, pool *pgxpool.Pool) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM outbox`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func row(typ string) pipeline.OutboxRow {
	return pipeline.OutboxRow{Topic: "events.gov", Key: "k", Type: typ, EventID: schemas.NewID(), Payload: []byte(`{}`)}
}

func TestProposalLifecycleAndOneBallotPerUser(t *testing.T) {
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	st := gov.NewStore(pool)
	for _, u := range []string{"author", "v1", "v2", "admin"} {
		addUser(t, pool, u)
	}
	now := time.Now().UTC().Truncate(time.Second)
	p := gov.Proposal{ID: schemas.NewID(), Title: "t", Category: "infra", VoteMode: schemas.VoteModeRanked,
		Options: []string{"A", "B"}, Quorum: 1, Threshold: "0.5", VotingDurationSeconds: 60,
		Status: schemas.ProposalDraft, AuthorUserID: "author", CreatedAt: now}
	if _, err := st.Create(ctx, p, []pipeline.OutboxRow{row("proposal.created")}, nil); err != nil {
		t.Fatal(err)
	}
	got, err := st.Get(ctx, p.ID)
	if err != nil || got.Status != schemas.ProposalDraft || len(got.Options) != 2 || got.VotesOpenAt != nil {
		t.Fatalf("get: %+v %v", got, err)
	}
	if _, err := st.Get(ctx, "nope"); !errors.Is(err, postgres.ErrNotFound) {
		t.Fatalf("unknown id: %v", err)
	}

	// Voting on a draft is refused and records nothing.
	b := gov.Ballot{ID: schemas.NewID(), ProposalID: p.ID, UserID: "v1", Ranking: []string{"A", "B"}, CreatedAt: now}
	if _, err := st.Vote(ctx, b, nil); !errors.Is(err, gov.ErrVotingClosed) {
		t.Fatalf("vote on draft: %v", err)
	}
	closeAt := now.Add(time.Minute)
	if _, err := st.Open(ctx, p.ID, now, closeAt, []pipeline.OutboxRow{row("proposal.opened")}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Open(ctx, p.ID, now, closeAt, nil); !errors.Is(err, gov.ErrInvalidState) {
		t.Fatalf("second open: %v", err)
	}
	// Outside the window is voting_closed even while open.
	late := b
	late.CreatedAt = closeAt
	if _, err := st.Vote(ctx, late, nil); !errors.Is(err, gov.ErrVotingClosed) {
		t.Fatalf("vote at votesCloseAt: %v", err)
	}

	// Concurrent ballots of one user: exactly one is recorded.
	var wg sync.WaitGroup
	var mu sync.Mutex
	okN, dupN := 0, 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			bb := b
			bb.ID = schemas.NewID()
			_, err := st.Vote(ctx, bb, []pipeline.OutboxRow{row("reputation.event")})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				okN++
			case errors.Is(err, gov.ErrAlreadyVoted):
				dupN++
			default:
				t.Errorf("vote: %v", err)
			}
		}()
	}
	wg.Wait()
	if okN != 1 || dupN != 7 {
		t.Fatalf("concurrent ballots of one user: %d recorded, %d already_voted", okN, dupN)
	}
	b2 := gov.Ballot{ID: schemas.NewID(), ProposalID: p.ID, UserID: "v2", Ranking: []string{"B", "A"}, CreatedAt: now.Add(time.Second)}
	all, err := st.Vote(ctx, b2, nil)
	if err != nil || len(all) != 2 || all[0].UserID == all[1].UserID {
		t.Fatalf("second voter: %+v %v", all, err)
	}

	before := outboxCount(t, pool)
	closed, err := st.Close(ctx, p.ID, "admin", now.Add(2*time.Second), func(p gov.Proposal, ballots []gov.Ballot) (gov.Decision, error) {
		if len(ballots) != 2 {
			return gov.Decision{}, fmt.Errorf("decide saw %d ballots", len(ballots))
		}
		return gov.Decision{Status: schemas.ProposalExecuted, Ballots: 2, Tally: json.RawMessage(`{"ballots":2}`),
			Events: []pipeline.OutboxRow{row("proposal.passed"), row("ledger.append")}}, nil
	})
	if err != nil || closed.Status != schemas.ProposalExecuted || *closed.Ballots != 2 {
		t.Fatalf("close: %+v %v", closed, err)
	}
	if n := outboxCount(t, pool); n != before+2 {
		t.Fatalf("close queued %d outbox rows, want 2", n-before)
	}
	again, err := st.Get(ctx, p.ID)
	if err != nil || again.Status != schemas.ProposalExecuted || string(again.Tally) != `{"ballots": 2}` || again.ClosedAt == nil {
		t.Fatalf("after close: %+v %s %v", again, again.Tally, err)
	}
	if _, err := st.Close(ctx, p.ID, "admin", now, nil); !errors.Is(err, gov.ErrInvalidState) {
		t.Fatalf("second close: %v", err)
	}
	b3 := gov.Ballot{ID: schemas.NewID(), ProposalID: p.ID, UserID: "author", Ranking: []string{"A", "B"}, CreatedAt: now.Add(3 * time.Second)}
	if _, err := st.Vote(ctx, b3, nil); !errors.Is(err, gov.ErrVotingClosed) {
		t.Fatalf("vote after close: %v", err)
	}

	// A failed decision rolls the close back.
	p2 := p
	p2.ID = schemas.NewID()
	if _, err := st.Create(ctx, p2, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Open(ctx, p2.ID, now, closeAt, nil); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if _, err := st.Close(ctx, p2.ID, "admin", now, func(gov.Proposal, []gov.Ballot) (gov.Decision, error) { return gov.Decision{}, boom }); !errors.Is(err, boom) {
		t.Fatalf("close with failing decide: %v", err)
	}
	if g, _ := st.Get(ctx, p2.ID); g.Status != schemas.ProposalOpen {
		t.Fatalf("status after failed close: %s", g.Status)
	}

	// Lists: filters, newest first, paging.
	list, err := st.List(ctx, gov.Filter{Status: schemas.ProposalOpen}, schemas.Position{}, 10)
	if err != nil || len(list) != 1 || list[0].ID != p2.ID {
		t.Fatalf("open list: %+v %v", list, err)
	}
	newer, older := max(p.ID, p2.ID), min(p.ID, p2.ID) // ids are time-ordered ksuids
	list, err = st.List(ctx, gov.Filter{Category: "infra", AuthorUserID: "author"}, schemas.Position{}, 1)
	if err != nil || len(list) != 1 || list[0].ID != newer {
		t.Fatalf("first page: %+v %v", list, err)
	}
	list, err = st.List(ctx, gov.Filter{Category: "infra"}, schemas.Position{At: list[0].CreatedAt, ID: list[0].ID}, 10)
	if err != nil || len(list) != 1 || list[0].ID != older {
		t.Fatalf("second page: %+v %v", list, err)
	}
	if n, err := st.CountOpen(ctx); err != nil || n != 1 {
		t.Fatalf("open count %d %v", n, err)
	}
	page, err := st.ListBallots(ctx, p.ID, "", 1)
	if err != nil || len(page) != 1 {
		t.Fatalf("ballot page: %+v %v", page, err)
	}
	page, err = st.ListBallots(ctx, p.ID, page[0].ID, 10)
	if err != nil || len(page) != 1 || page[0].ID <= all[0].ID {
		t.Fatalf("ballot page 2: %+v %v", page, err)
	}
}

// Requests with one Idempotency-Key create one proposal, also when they race.
func TestCreateIdempotent(t *testing.T) {
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	st := gov.NewStore(pool)
	addUser(t, pool, "author")
	var wg sync.WaitGroup
	var mu sync.Mutex
	created, replayed := 0, 0
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := gov.Proposal{ID: schemas.NewID(), Title: "t", Category: "c", VoteMode: schemas.VoteModeYesNoAbstain,
				Quorum: 1, Threshold: "0.5", VotingDurationSeconds: 60, Status: schemas.ProposalDraft, AuthorUserID: "author",
				CreatedAt: time.Now().UTC()}
			idem := &pipeline.Processed{CommandID: "idem-1", CommandType: "gov.proposal.create", RequestHash: "h",
				Status: 201, Body: []byte(`{"id":"` + p.ID + `"}`)}
			prior, err := st.Create(ctx, p, []pipeline.OutboxRow{row("proposal.created")}, idem)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				t.Errorf("create: %v", err)
			case prior == nil:
				created++
			case prior.RequestHash == "h" && prior.Status == 201:
				replayed++
			}
		}()
	}
	wg.Wait()
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM gov_proposals`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if created != 1 || replayed != 5 || n != 1 || outboxCount(t, pool) != 1 {
		t.Fatalf("created %d replayed %d rows %d outbox %d", created, replayed, n, outboxCount(t, pool))
	}
}
