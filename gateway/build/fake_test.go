package build

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/build"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/storage/postgres"
)

// fakeStore serves fixed open vacancies and sitemap entries.
type fakeStore struct {
	open    []build.Vacancy
	entries []build.SitemapEntry
	stamps  int64
}

func (f *fakeStore) ListOpenAfter(context.Context, build.Filter, time.Time, schemas.Position, int) ([]build.Vacancy, int, int, error) {
	return nil, 0, 0, nil
}

// SitemapStamp reports a change on every call: the tests edit the fake
// between requests, so the sitemap is always rebuilt.
func (f *fakeStore) SitemapStamp(context.Context, time.Time) (int64, time.Time, error) {
	f.stamps++
	return f.stamps, time.Time{}, nil
}

func (f *fakeStore) CreateProject(context.Context, build.Project) error { return nil }
func (f *fakeStore) Project(context.Context, string) (build.Project, error) {
	return build.Project{}, postgres.ErrNotFound
}
func (f *fakeStore) ListProjects(context.Context, string, int, int) ([]build.Project, error) {
	return nil, nil
}
func (f *fakeStore) CreateVacancy(context.Context, *build.Vacancy, int, pipeline.OutboxRow) error {
	return nil
}
func (f *fakeStore) CloseVacancy(context.Context, string, string, time.Time, func(build.Vacancy) (pipeline.OutboxRow, error)) (build.Vacancy, bool, error) {
	return build.Vacancy{}, false, postgres.ErrNotFound
}
func (f *fakeStore) ListOwned(context.Context, string, int, int) ([]build.Vacancy, int, error) {
	return nil, 0, nil
}
func (f *fakeStore) ListOpen(_ context.Context, _ build.Filter, _ time.Time, limit, offset int) ([]build.Vacancy, int, error) {
	if offset > len(f.open) {
		offset = len(f.open)
	}
	return f.open[offset:min(offset+limit, len(f.open))], len(f.open), nil
}
func (f *fakeStore) OpenVacancy(_ context.Context, id string, _ time.Time) (build.Vacancy, error) {
	for _, v := range f.open {
		if v.ID == id {
			return v, nil
		}
	}
	return build.Vacancy{}, postgres.ErrNotFound
}
func (f *fakeStore) OpenOfProject(context.Context, string, time.Time, int) ([]build.Vacancy, error) {
	return nil, nil
}
func (f *fakeStore) OpenOfEmployer(context.Context, string, time.Time, int) ([]build.Vacancy, error) {
	return nil, nil
}
func (f *fakeStore) SitemapEntries(context.Context, time.Time, int) ([]build.SitemapEntry, error) {
	return f.entries, nil
}
func (f *fakeStore) CreateKey(context.Context, build.Key, []byte, int) error { return nil }
func (f *fakeStore) ListKeys(context.Context, string) ([]build.Key, error)   { return nil, nil }
func (f *fakeStore) RevokeKey(context.Context, string, string, time.Time) (build.Key, error) {
	return build.Key{}, postgres.ErrNotFound
}
func (f *fakeStore) KeyByHash(context.Context, []byte) (build.Key, error) {
	return build.Key{}, postgres.ErrNotFound
}

type okPinger struct{}

func (okPinger) Ping(context.Context) error { return nil }

var testNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// newTestServer mounts the module on a real server (error mapping, routes)
// over store.
func newTestServer(t *testing.T, store Store, cfg Config) *server.Server {
	t.Helper()
	lim := ratelimit.New(ratelimit.Limits{}, time.Now)
	srv := server.New(lim, prometheus.NewRegistry(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if cfg.PublicBaseURL == "" {
		cfg.PublicBaseURL = "https://jobs.example"
	}
	if cfg.PlanLimit == 0 {
		cfg.PlanLimit = 5
	}
	h, err := NewHandlers(store, lim, okPinger{}, func(c *fiber.Ctx) error { return c.Next() }, func() time.Time { return testNow }, srv.Routes, cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.Register(srv.Root())
	srv.Finish()
	return srv
}

func get(t *testing.T, srv *server.Server, path string, headers map[string]string) (int, string, map[string][]string) {
	t.Helper()
	req := httptest.NewRequest("GET", path, nil)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := srv.App.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}
