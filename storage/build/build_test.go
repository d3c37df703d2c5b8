package build_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/build"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/storage/postgres"
	"github.com/fintech/platform/storage/postgres/pgtest"
)

func event(id string) pipeline.OutboxRow {
	return pipeline.OutboxRow{Topic: "events.build", Key: id, Type: schemas.TypeVacancyOpened, EventID: schemas.NewID(), Payload: []byte(`{}`)}
}

func closeEvent(v build.Vacancy) (pipeline.OutboxRow, error) { return event(v.ID), nil }

func newVacancy(project, employer, city string, skills []string, now time.Time) *build.Vacancy {
	return &build.Vacancy{ID: schemas.NewID(), ProjectID: project, EmployerID: employer, Title: "Go engineer",
		Description: "d", Salary: 100, SalaryCurrency: "KZT", Skills: skills, City: city,
		CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
}

// TestCreateVacancyLimitIsExactUnderConcurrency starts many concurrent
// creates for one employer: exactly limit succeed, the rest are refused, and
// each success queued exactly one event.
func TestCreateVacancyLimitIsExactUnderConcurrency(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	s := build.NewStore(pool)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond)
	p := build.Project{ID: schemas.NewID(), EmployerID: "emp1", Name: "P", CreatedAt: now}
	if err := s.CreateProject(ctx, p); err != nil {
		t.Fatal(err)
	}
	const limit, tries = 3, 12
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, refused := 0, 0
	for i := 0; i < tries; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := newVacancy(p.ID, "emp1", "Almaty", nil, now)
			err := s.CreateVacancy(ctx, v, limit, event(v.ID))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case errors.Is(err, build.ErrPlanLimit):
				refused++
			default:
				t.Errorf("create: %v", err)
			}
		}()
	}
	wg.Wait()
	if ok != limit || refused != tries-limit {
		t.Fatalf("ok %d refused %d, want %d and %d", ok, refused, limit, tries-limit)
	}
	var outbox int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM outbox WHERE topic = 'events.build'`).Scan(&outbox); err != nil {
		t.Fatal(err)
	}
	if outbox != limit {
		t.Fatalf("outbox rows %d, want %d", outbox, limit)
	}
	// Closing one frees a slot.
	items, _, err := s.ListOwned(ctx, "emp1", 10, 0)
	if err != nil || len(items) != limit {
		t.Fatalf("owned %d %v", len(items), err)
	}
	if _, closed, err := s.CloseVacancy(ctx, items[0].ID, "emp1", now, closeEvent); err != nil || !closed {
		t.Fatalf("close: %v %v", closed, err)
	}
	if _, closed, err := s.CloseVacancy(ctx, items[0].ID, "emp1", now, closeEvent); err != nil || closed {
		t.Fatalf("second close: %v %v", closed, err)
	}
	if _, _, err := s.CloseVacancy(ctx, items[1].ID, "emp2", now, closeEvent); !errors.Is(err, postgres.ErrNotFound) {
		t.Fatalf("close by another employer: %v", err)
	}
	v := newVacancy(p.ID, "emp1", "Almaty", nil, now)
	if err := s.CreateVacancy(ctx, v, limit, event(v.ID)); err != nil {
		t.Fatalf("create after close: %v", err)
	}
}

func TestCreateVacancyOtherEmployersProject(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	s := build.NewStore(pool)
	ctx := context.Background()
	now := time.Now().UTC()
	p := build.Project{ID: schemas.NewID(), EmployerID: "emp1", Name: "P", CreatedAt: now}
	if err := s.CreateProject(ctx, p); err != nil {
		t.Fatal(err)
	}
	for _, v := range []*build.Vacancy{newVacancy(p.ID, "emp2", "X", nil, now), newVacancy("nope", "emp1", "X", nil, now)} {
		if err := s.CreateVacancy(ctx, v, 5, event(v.ID)); !errors.Is(err, postgres.ErrNotFound) {
			t.Fatalf("want not found, got %v", err)
		}
	}
}

func TestListOpenFiltersAndOrder(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	s := build.NewStore(pool)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond)
	p := build.Project{ID: schemas.NewID(), EmployerID: "emp1", Name: "P", CreatedAt: now}
	if err := s.CreateProject(ctx, p); err != nil {
		t.Fatal(err)
	}
	mk := func(city string, skills []string, at time.Time, exp time.Duration) string {
		v := newVacancy(p.ID, "emp1", city, skills, at)
		v.ExpiresAt = now.Add(exp)
		if err := s.CreateVacancy(ctx, v, 100, event(v.ID)); err != nil {
			t.Fatal(err)
		}
		return v.ID
	}
	a := mk("Almaty", []string{"Go", "SQL"}, now.Add(-3*time.Minute), time.Hour)
	b := mk("almaty", []string{"rust"}, now.Add(-2*time.Minute), time.Hour)
	c := mk("Astana", []string{"GO"}, now.Add(-1*time.Minute), time.Hour)
	_ = mk("Almaty", []string{"go"}, now.Add(-4*time.Minute), -time.Second) // created valid, now expired
	tests := []struct {
		name string
		f    build.Filter
		want []string
	}{
		{"all newest first", build.Filter{}, []string{c, b, a}},
		{"city case-insensitive", build.Filter{City: "ALMATY"}, []string{b, a}},
		{"city exact, not prefix", build.Filter{City: "Alm"}, nil},
		{"skill membership", build.Filter{Skill: "go"}, []string{c, a}},
		{"both", build.Filter{City: "almaty", Skill: "SQL"}, []string{a}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			items, total, err := s.ListOpen(ctx, tt.f, now, 10, 0)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, v := range items {
				got = append(got, v.ID)
			}
			if total != len(tt.want) || len(got) != len(tt.want) {
				t.Fatalf("got %v (total %d), want %v", got, total, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("got %v, want %v", got, tt.want)
				}
			}
		})
	}
	items, total, err := s.ListOpen(ctx, build.Filter{}, now, 1, 1)
	if err != nil || total != 3 || len(items) != 1 || items[0].ID != b {
		t.Fatalf("page 2: %v %d %v", items, total, err)
	}
	if _, err := s.OpenVacancy(ctx, "missing", now); !errors.Is(err, postgres.ErrNotFound) {
		t.Fatalf("missing: %v", err)
	}
	entries, err := s.SitemapEntries(ctx, now, 10)
	if err != nil || len(entries) != 5 || entries[0].ID != c || entries[3].Kind != "project" || entries[4].Kind != "employer" {
		t.Fatalf("sitemap entries %+v %v", entries, err)
	}
}

func TestPartnerKeys(t *testing.T) {
	pool, _ := pgtest.NewDB(t)
	s := build.NewStore(pool)
	ctx := context.Background()
	now := time.Now().UTC()
	h := sha256.Sum256([]byte("qb_pk_example"))
	k := build.Key{ID: schemas.NewID(), EmployerID: "emp1", CreatedAt: now}
	if err := s.CreateKey(ctx, k, h[:], 3); err != nil {
		t.Fatal(err)
	}
	if got, err := s.KeyByHash(ctx, h[:]); err != nil || got.ID != k.ID {
		t.Fatalf("lookup: %+v %v", got, err)
	}
	other := sha256.Sum256([]byte("qb_pk_other"))
	if _, err := s.KeyByHash(ctx, other[:]); !errors.Is(err, postgres.ErrNotFound) {
		t.Fatalf("unknown: %v", err)
	}
	if _, err := s.RevokeKey(ctx, k.ID, "emp2", now); !errors.Is(err, postgres.ErrNotFound) {
		t.Fatalf("revoke by another: %v", err)
	}
	if r, err := s.RevokeKey(ctx, k.ID, "emp1", now); err != nil || r.RevokedAt == nil {
		t.Fatalf("revoke: %+v %v", r, err)
	}
	if _, err := s.KeyByHash(ctx, h[:]); !errors.Is(err, postgres.ErrNotFound) {
		t.Fatalf("revoked: %v", err)
	}
}
