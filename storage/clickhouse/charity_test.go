package clickhouse

import (
	"context"
	"strconv"
	"testing"
	"time"
)

func TestCharityStatsDedupe(t *testing.T) {
	conn, db := testDB(t)
	ctx := context.Background()
	now := time.Now().UTC()
	don := func(id, donor, category string, amount int) EventRow {
		return EventRow{ID: id, Topic: "events.charity", Type: "donation.received", ActorUserID: donor, OccurredAt: now,
			Data: `{"amountKzt":` + strconv.Itoa(amount) + `,"anonymous":false,"campaignId":"c","category":"` + category + `"}`}
	}
	rows := Rows{Events: []EventRow{
		don("d1", "alice", "water", 100), don("d1", "alice", "water", 100), // a duplicate
		don("d2", "bob", "water", 50), don("d3", "alice", "school", 300), don("d4", "carol", "food", 10),
		{ID: "g1", Topic: "events.charity", Type: "campaign.goal_reached", OccurredAt: now, Data: `{"raisedKzt":999}`},
	}}
	if err := Insert(ctx, conn, db, rows); err != nil {
		t.Fatal(err)
	}
	s, err := QueryCharityStats(ctx, conn, db)
	if err != nil {
		t.Fatal(err)
	}
	if s.TotalRaisedKzt != 460 || s.DonorCount != 3 {
		t.Fatalf("stats = %+v, want 460 raised by 3 donors", s)
	}
	want := []CategoryRaised{{"school", 300}, {"water", 150}, {"food", 10}}
	if len(s.TopCategories) != len(want) {
		t.Fatalf("categories = %+v", s.TopCategories)
	}
	for i, w := range want {
		if s.TopCategories[i] != w {
			t.Fatalf("categories = %+v, want %+v", s.TopCategories, want)
		}
	}
	empty, db2 := testDB(t)
	s, err = QueryCharityStats(ctx, empty, db2)
	if err != nil || s.TotalRaisedKzt != 0 || s.DonorCount != 0 || len(s.TopCategories) != 0 {
		t.Fatalf("empty stats = %+v %v", s, err)
	}
}
