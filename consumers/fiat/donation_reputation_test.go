package fiat_test

import (
	"testing"
	"time"

	cfiat "github.com/fintech/platform/consumers/fiat"
	"github.com/fintech/platform/consumers/pipeline"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/postgres/pgtest"
)

// TestDonationReputationBudget: a donation below the minimum earns no
// charity-donor event, and the donor's events of one campaign and day share
// one source id (the reputation consumer applies them once), while another
// campaign earns its own.
func TestDonationReputationBudget(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	campA := campaign(t, pool, 1_000_000, nil)
	campB := campaign(t, pool, 1_000_000, nil)
	w := fund(t, pool, "donor", 100_000)
	h, err := cfiat.NewHandler(caps, time.Now, quiet)
	if err != nil {
		t.Fatal(err)
	}
	outs := applyBatch(t, pool, h, []pipeline.Command{
		donateCmd(t, campA, w, "donor", schemas.DonationReputationMinKzt-1, false),
		donateCmd(t, campA, w, "donor", schemas.DonationReputationMinKzt, false),
		donateCmd(t, campA, w, "donor", schemas.DonationReputationMinKzt*2, false),
		donateCmd(t, campB, w, "donor", schemas.DonationReputationMinKzt, false),
	})
	sources := make([][]string, len(outs))
	for i, o := range outs {
		if o.Status != 201 {
			t.Fatalf("donation %d: %d %s", i, o.Status, o.Body)
		}
		for _, e := range o.Emit {
			if e.Env.Type == schemas.TypeReputationEvent {
				ev, err := schemas.DataAs[schemas.ReputationEvent](e.Env)
				if err != nil {
					t.Fatal(err)
				}
				sources[i] = append(sources[i], ev.SourceID)
			}
		}
	}
	if len(sources[0]) != 0 {
		t.Fatalf("a donation below the minimum earned reputation: %v", sources[0])
	}
	for i := 1; i < 4; i++ {
		if len(sources[i]) != 1 {
			t.Fatalf("donation %d: %d reputation events", i, len(sources[i]))
		}
	}
	if sources[1][0] != sources[2][0] {
		t.Fatalf("two donations to one campaign on one day have sources %q and %q: both would count", sources[1][0], sources[2][0])
	}
	if sources[3][0] == sources[1][0] {
		t.Fatalf("another campaign shares the source %q", sources[3][0])
	}
}
