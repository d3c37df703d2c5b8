package reputation

import (
	"context"
	"testing"
	"time"

	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/reputation"
	"github.com/fintech/platform/topics"
)

// TestDonationCreditedUnderItsOldSourceIsNotCreditedAgain: releases before
// the daily donor rule sent a charity-donor command per donation, its
// source the donation id. When events.charity is read from the start after
// an upgrade, such a donation earns nothing again; a donation that was
// never credited still earns its points.
func TestDonationCreditedUnderItsOldSourceIsNotCreditedAgain(t *testing.T) {
	pool, apply := applyOn(t, "donor")
	ctx := context.Background()
	day := time.Date(2026, 10, 1, 10, 0, 0, 0, time.UTC)
	old, fresh := schemas.NewID(), schemas.NewID()
	// What an old release's fiat applier sent for the donation old.
	legacy := eventCmd(t, topics.ReputationCommands, schemas.TypeReputationEvent, "donor", "donor", schemas.ReputationEvent{
		UserID: "donor", Kind: schemas.RepKindCharityDonor, SourceModule: "charity", Weight: weightCharityDonor, SourceID: old}, day)
	if out := apply(legacy); out[0].Status != 201 {
		t.Fatalf("legacy command: %d %s", out[0].Status, out[0].Body)
	}
	donation := func(id, camp string) pipeline.Command {
		return eventCmd(t, topics.EventsCharity, schemas.TypeDonationReceived, camp, "donor", schemas.DonationReceived{
			DonationID: id, CampaignID: camp, AmountKzt: schemas.DonationReputationMinKzt, CreatedAt: day}, day)
	}
	out := apply(donation(old, "camp-a"), donation(fresh, "camp-b"))
	if len(out[0].Emit) != 0 {
		t.Fatalf("the donation credited under its old source earned again: %+v", out[0].Emit)
	}
	if len(out[1].Emit) == 0 {
		t.Fatal("a donation never credited earned nothing")
	}
	s, _, err := reputation.NewStore(pool).ScoreOf(ctx, "donor")
	if err != nil || s.Score != 2*weightCharityDonor || s.EventCount != 2 {
		t.Fatalf("score %d over %d events (%v), want %d over 2", s.Score, s.EventCount, err, 2*weightCharityDonor)
	}
}
