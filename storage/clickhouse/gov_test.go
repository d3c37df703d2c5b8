package clickhouse

import (
	"context"
	"sort"
	"testing"
	"time"
)

// The governance roll-up folds each proposal's events into its latest
// status and counts duplicates (the sink's redeliveries) once.
func TestGovStatsFoldsAndDedupes(t *testing.T) {
	conn, db := testDB(t)
	ctx := context.Background()
	now := time.Now().UTC()
	ev := func(id, typ, data string) EventRow {
		return EventRow{ID: id, Topic: "events.gov", Type: typ, Key: "k", OccurredAt: now, Data: data}
	}
	rows := []EventRow{
		// p1: created, opened, passed with 3 ballots; the tally repeats
		// "ballots" and names an option "status" after the top-level fields.
		ev("a1", "proposal.created", `{"proposalId":"p1","title":"a \"status\":\"x\"","category":"infra","status":"draft","ballots":0}`),
		ev("a2", "proposal.opened", `{"proposalId":"p1","category":"infra","status":"open","ballots":0}`),
		ev("a3", "proposal.passed", `{"proposalId":"p1","category":"infra","status":"executed","ballots":3,"tally":{"ballots":3,"tallyNow":{"status":2}}}`),
		ev("a3", "proposal.passed", `{"proposalId":"p1","category":"infra","status":"executed","ballots":3,"tally":{"ballots":3,"tallyNow":{"status":2}}}`),
		// p2: rejected with 1 ballot.
		ev("b1", "proposal.created", `{"proposalId":"p2","category":"infra","status":"draft","ballots":0}`),
		ev("b2", "proposal.opened", `{"proposalId":"p2","category":"infra","status":"open","ballots":0}`),
		ev("b3", "proposal.rejected", `{"proposalId":"p2","category":"infra","status":"rejected","ballots":1}`),
		// p3 open, p4 draft (twice, a redelivery).
		ev("c1", "proposal.created", `{"proposalId":"p3","category":"ops","status":"draft","ballots":0}`),
		ev("c2", "proposal.opened", `{"proposalId":"p3","category":"ops","status":"open","ballots":0}`),
		ev("d1", "proposal.created", `{"proposalId":"p4","category":"ops","status":"draft","ballots":0}`),
		ev("d1", "proposal.created", `{"proposalId":"p4","category":"ops","status":"draft","ballots":0}`),
		// Another module's event is ignored.
		{ID: "x1", Topic: "events.fiat", Type: "transfer.completed", OccurredAt: now, Data: `{"status":"open"}`},
	}
	if err := Insert(ctx, conn, db, Rows{Events: rows}); err != nil {
		t.Fatal(err)
	}
	got, err := QueryGovStats(ctx, conn, db)
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(got, func(i, j int) bool { return got[i].Status+got[i].Category < got[j].Status+got[j].Category })
	want := []GovStatusCount{
		{Status: "draft", Category: "ops", Proposals: 1},
		{Status: "executed", Category: "infra", Proposals: 1, Ballots: 3},
		{Status: "open", Category: "ops", Proposals: 1},
		{Status: "rejected", Category: "infra", Proposals: 1, Ballots: 1},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %+v, want %+v", got, want)
		}
	}
}
