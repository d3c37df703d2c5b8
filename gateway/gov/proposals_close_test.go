package gov

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/gov"
	"github.com/fintech/platform/topics"
)

// decide builds exactly what a close records: the status, one gov:decision
// ledger entry with the full tally, the proposal event, and gov-author by
// outcome (+5 passed, +1 rejected with quorum, nothing without quorum).
func TestDecide(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	p := store.Proposal{ID: "p1", Title: "T", Category: "c", VoteMode: schemas.VoteModeYesNoAbstain, Quorum: 3,
		Threshold: "0.5", Status: schemas.ProposalOpen, AuthorUserID: "author"}
	ballots := func(choices ...string) []store.Ballot {
		out := make([]store.Ballot, len(choices))
		for i, c := range choices {
			out[i] = store.Ballot{ID: "b" + c, Choice: c}
		}
		return out
	}
	tests := []struct {
		name    string
		ballots []store.Ballot
		status  string
		event   string
		weight  int64 // 0 = no gov-author
	}{
		{"passed", ballots("yes", "yes", "no"), schemas.ProposalExecuted, schemas.TypeProposalPassed, 5},
		{"rejected with quorum", ballots("yes", "no", "abstain"), schemas.ProposalRejected, schemas.TypeProposalRejected, 1},
		{"rejected without quorum", ballots("yes", "yes"), schemas.ProposalRejected, schemas.TypeProposalRejected, 0},
		{"no ballots", nil, schemas.ProposalRejected, schemas.TypeProposalRejected, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d, err := decide(p, tt.ballots, "admin", now)
			if err != nil {
				t.Fatal(err)
			}
			if d.Status != tt.status || d.Ballots != int64(len(tt.ballots)) {
				t.Fatalf("decision %+v", d)
			}
			byTopic := map[string][]schemas.Envelope{}
			for _, r := range d.Events {
				env, err := schemas.Decode(r.Payload)
				if err != nil {
					t.Fatal(err)
				}
				byTopic[r.Topic] = append(byTopic[r.Topic], env)
			}
			if len(byTopic[topics.EventsGov]) != 1 || byTopic[topics.EventsGov][0].Type != tt.event || byTopic[topics.EventsGov][0].Key != "p1" {
				t.Fatalf("events %+v", byTopic[topics.EventsGov])
			}
			ev, _ := schemas.DataAs[schemas.ProposalEvent](byTopic[topics.EventsGov][0])
			if ev.Status != tt.status || ev.AuthorUserID != "author" || ev.Ballots != int64(len(tt.ballots)) || len(ev.Tally) == 0 {
				t.Fatalf("event data %+v", ev)
			}
			if len(byTopic[topics.LedgerAppend]) != 1 {
				t.Fatalf("ledger %+v", byTopic[topics.LedgerAppend])
			}
			entry, _ := schemas.DataAs[schemas.LedgerAppend](byTopic[topics.LedgerAppend][0])
			var tally View
			raw, _ := json.Marshal(entry.Meta["tally"])
			if err := json.Unmarshal(raw, &tally); err != nil || entry.Kind != schemas.LedgerKindGovernance || entry.SourceID != "p1" ||
				entry.Meta["status"] != tt.status || tally.Ballots != int64(len(tt.ballots)) || len(tally.TallyNow) != 3 {
				t.Fatalf("entry %+v (%v)", entry, err)
			}
			reps := byTopic[topics.ReputationCommands]
			if tt.weight == 0 {
				if len(reps) != 0 {
					t.Fatalf("gov-author without quorum: %+v", reps)
				}
				return
			}
			if len(reps) != 1 || reps[0].Key != "author" {
				t.Fatalf("reputation %+v", reps)
			}
			rep, _ := schemas.DataAs[schemas.ReputationEvent](reps[0])
			if rep.Kind != schemas.RepKindGovAuthor || rep.Weight != tt.weight || rep.UserID != "author" || rep.SourceID != "p1" {
				t.Fatalf("gov-author %+v", rep)
			}
		})
	}
}
