package ledger_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	cledger "github.com/fintech/platform/consumers/ledger"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/gov"
	"github.com/fintech/platform/storage/postgres/pgtest"
)

// Closed proposals (storage/gov) without a gov:decision entry are found by
// the ledger's
// re-anchoring routine, with their frozen tally as meta.
func TestMissingDecisionsSource(t *testing.T) {
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	st := gov.NewStore(pool)
	if _, err := pool.Exec(ctx, `INSERT INTO users (id, email, name, password_hash, created_at) VALUES ('author', 'author@example.com', '', 'x', now())`); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	mk := func() string {
		p := gov.Proposal{ID: schemas.NewID(), Title: "t", Category: "c", VoteMode: schemas.VoteModeYesNoAbstain,
			Quorum: 1, Threshold: "0.5", VotingDurationSeconds: 60, Status: schemas.ProposalDraft, AuthorUserID: "author", CreatedAt: now}
		if _, err := st.Create(ctx, p, nil, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Open(ctx, p.ID, now, now.Add(time.Minute), nil); err != nil {
			t.Fatal(err)
		}
		return p.ID
	}
	closed, open := mk(), mk()
	_ = open
	if _, err := st.Close(ctx, closed, "admin", now, func(gov.Proposal, []gov.Ballot) (gov.Decision, error) {
		return gov.Decision{Status: schemas.ProposalRejected, Tally: json.RawMessage(`{"ballots":0,"quorumMet":false}`)}, nil
	}); err != nil {
		t.Fatal(err)
	}
	src := cledger.SQLSource{Label: "gov", Table: "gov_proposals", Query: gov.MissingDecisionsSQL}
	var found []schemas.LedgerAppend
	if err := src.Missing(ctx, pool, func(a schemas.LedgerAppend) error { found = append(found, a); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 || found[0].SourceID != closed || found[0].Kind != schemas.LedgerKindGovernance ||
		found[0].ActorUserID != "admin" || found[0].AmountCents != nil {
		t.Fatalf("found %+v", found)
	}
	tally, _ := found[0].Meta["tally"].(map[string]any)
	if found[0].Meta["status"] != "rejected" || tally["quorumMet"] != false || found[0].Meta["closedAt"] != now.Format(time.RFC3339) {
		t.Fatalf("meta %v", found[0].Meta)
	}
	counts, err := cledger.Reanchor(ctx, pool, []cledger.Source{src}, time.Now, true)
	if err != nil || counts["gov"] != 1 {
		t.Fatalf("dry run %v %v", counts, err)
	}
}
