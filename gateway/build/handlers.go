// Package build serves the partner vacancy feed: the employer side under
// /api/build (JWT: projects, vacancies, partner keys), the keyed partner JSON
// API under /api/build/public/v1 (X-Build-Key, CORS for any origin, a rate
// budget per key), the public vacancy pages under /build, the RSS feed, the
// sitemap and the drop-in widget script.
//
// Vacancy text is untrusted everywhere it is shown: pages go through
// html/template with JSON-LD from json.Marshal and a nonce CSP, feeds through
// encoding/xml with HTML-escaped descriptions, and the widget builds DOM nodes
// with textContent only.
package build

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/cors"

	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/gateway/openapi"
	"github.com/fintech/platform/gateway/platform"
	"github.com/fintech/platform/gateway/ratelimit"
	"github.com/fintech/platform/gateway/server"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/build"
	"github.com/fintech/platform/storage/pipeline"
)

// Path prefixes of the module.
const (
	Prefix       = "/api/build"
	PublicPrefix = Prefix + "/public"
	APIPrefix    = PublicPrefix + "/v1"
	PagePrefix   = "/build"
	SitemapPath  = "/sitemap.xml"
)

// HeaderKey carries the partner key.
const HeaderKey = "X-Build-Key"

// Projects is what the handlers need for projects.
type Projects interface {
	CreateProject(ctx context.Context, p build.Project) error
	Project(ctx context.Context, id string) (build.Project, error)
	ListProjects(ctx context.Context, employerID string, limit, offset int) ([]build.Project, error)
}

// Vacancies is what the employer side needs for vacancies.
type Vacancies interface {
	CreateVacancy(ctx context.Context, v *build.Vacancy, limit int, event pipeline.OutboxRow) error
	CloseVacancy(ctx context.Context, id, employerID string, now time.Time, event func(build.Vacancy) (pipeline.OutboxRow, error)) (build.Vacancy, bool, error)
	ListOwned(ctx context.Context, employerID string, limit, offset int) ([]build.Vacancy, int, error)
}

// Feed is what the partner API, pages, RSS and sitemap read.
type Feed interface {
	ListOpen(ctx context.Context, f build.Filter, now time.Time, limit, offset int) ([]build.Vacancy, int, error)
	ListOpenAfter(ctx context.Context, f build.Filter, now time.Time, after schemas.Position, limit int) ([]build.Vacancy, int, int, error)
	OpenVacancy(ctx context.Context, id string, now time.Time) (build.Vacancy, error)
	OpenOfProject(ctx context.Context, projectID string, now time.Time, limit int) ([]build.Vacancy, error)
	OpenOfEmployer(ctx context.Context, employerID string, now time.Time, limit int) ([]build.Vacancy, error)
	SitemapEntries(ctx context.Context, now time.Time, topEmployers int) ([]build.SitemapEntry, error)
	SitemapStamp(ctx context.Context, now time.Time) (int64, time.Time, error)
}

// Keys is what the handlers need for partner keys.
type Keys interface {
	CreateKey(ctx context.Context, k build.Key, hash []byte, max int) error
	ListKeys(ctx context.Context, employerID string) ([]build.Key, error)
	RevokeKey(ctx context.Context, id, employerID string, now time.Time) (build.Key, error)
	KeyByHash(ctx context.Context, hash []byte) (build.Key, error)
}

// Limiter charges a request to a rate-limit budget (ratelimit.Limiter).
type Limiter interface {
	Check(c *fiber.Ctx, class ratelimit.Class, key string) error
	Also(c *fiber.Ctx, class ratelimit.Class, key string) error
}

var _ Limiter = (*ratelimit.Limiter)(nil)

// Budgets charges an abuse budget (ratelimit.Budgets).
type Budgets interface {
	Take(c *fiber.Ctx, b schemas.Budget, account string) (*ratelimit.Ticket, error)
}

// Store is the whole repository the module uses.
type Store interface {
	Projects
	Vacancies
	Feed
	Keys
}

var _ Store = (*build.Store)(nil)

// Config tunes the module.
type Config struct {
	// PublicBaseURL is the absolute base of vacancy URLs, pages, RSS links
	// and the sitemap (PUBLIC_BASE_URL, no trailing slash).
	PublicBaseURL string
	// PlanLimit is how many OPEN vacancies one employer may hold
	// (BUILD_PLAN_VACANCY_LIMIT).
	PlanLimit int
	// SitemapMax is the most URLs in one sitemap; more make /sitemap.xml a
	// sitemap index. Default 5000 (spec: Limits).
	SitemapMax int
	// TopEmployers is how many employers the sitemap names. Default 100.
	TopEmployers int
	// Budgets charges partner key mints to the abuse budget
	// (schemas.BudgetPartnerKeyMint); nil charges nothing.
	Budgets Budgets
	// ProductPages are the site-relative product pages the sitemap names.
	// Default: the vacancy index page.
	ProductPages []string
}

func (c *Config) setDefaults() {
	c.PublicBaseURL = strings.TrimRight(c.PublicBaseURL, "/")
	if c.SitemapMax <= 0 {
		c.SitemapMax = 5000
	}
	if c.TopEmployers <= 0 {
		c.TopEmployers = 100
	}
	if c.ProductPages == nil {
		c.ProductPages = []string{PagePrefix + "/vacancies"}
	}
}

// Validate reports every problem of the configuration.
func (c Config) Validate() error {
	var errs []error
	if !strings.HasPrefix(c.PublicBaseURL, "http://") && !strings.HasPrefix(c.PublicBaseURL, "https://") {
		errs = append(errs, errors.New("build: PublicBaseURL must start with http:// or https://"))
	}
	if c.PlanLimit < 1 {
		errs = append(errs, errors.New("build: PlanLimit must be at least 1"))
	}
	return errors.Join(errs...)
}

// Handlers serve the build module.
type Handlers struct {
	store Store
	// partnerKeys finds the partner key of X-Build-Key (partner_keys.go).
	partnerKeys auth.KeyLookup[build.Key]
	limiter     Limiter
	db          platform.Pinger
	require     fiber.Handler
	now         func() time.Time
	routes      func() []server.Route
	cfg         Config

	sitemapCache sitemapCache
}

// NewHandlers builds the handlers. require authenticates employers (the JWT
// middleware); limiter charges invalid partner keys to the client IP; routes
// lists the server's routes for /openapi.json.
func NewHandlers(store Store, limiter Limiter, db platform.Pinger, require fiber.Handler, now func() time.Time,
	routes func() []server.Route, cfg Config) (*Handlers, error) {
	if store == nil || limiter == nil || db == nil || require == nil || now == nil || routes == nil {
		return nil, errors.New("build handlers: nil dependency")
	}
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Handlers{store: store, partnerKeys: partnerKeys(store), limiter: limiter, db: db, require: require, now: now, routes: routes, cfg: cfg}, nil
}

// partnerCORS answers any origin on the partner JSON API, with a preflight
// answer that allows the key header.
var partnerCORS = cors.New(cors.Config{
	AllowOrigins:  "*",
	AllowMethods:  "GET,HEAD,OPTIONS",
	AllowHeaders:  "X-Build-Key,Content-Type,Accept",
	ExposeHeaders: "RateLimit-Limit,RateLimit-Remaining,RateLimit-Reset,RateLimit-Policy,RateLimit,Retry-After,X-Request-Id",
	MaxAge:        600,
})

// Register mounts the routes. Each operation is declared with its request
// and answer types (server.Op): binding, validation and the OpenAPI slice
// come from these declarations.
func (h *Handlers) Register(r server.Router) {
	g := r.Group(Prefix).KeyArea("build")
	platform.Basics(g, "build", platform.Health(h.db, nil), openapi.Handler(h.routes, openapi.Doc{
		Title:       "Partner vacancy feeds",
		Description: "Employers post vacancies; partners read open ones with an X-Build-Key, embed the widget, or follow the RSS feed and sitemap.",
		Prefixes:    []string{Prefix, PagePrefix, SitemapPath},
	}))
	server.Post(g, "/projects", server.Op[createProjectRequest]{
		Summary:     "Create a project of the caller (employer)",
		Description: "Creates a project owned by the caller, under which vacancies are posted.",
		Class:       ratelimit.Write, Handle: h.createProject,
		Responses: []server.Response{server.Answers(http.StatusCreated, "the project", schemas.BuildProject{})},
	}, h.require)
	server.Get(g, "/projects", server.Op[offsetPaging]{
		Summary:     "The caller's projects, newest first",
		Description: "Pages through the caller's projects, newest first. Read-only.",
		Handle:      h.listProjects,
		Responses:   []server.Response{server.Answers(http.StatusOK, "the caller's projects", schemas.BuildProjects{})},
	}, h.require)
	server.Post(g, "/vacancies", server.Op[createVacancyRequest]{
		Summary:     "Post an OPEN vacancy in one of the caller's projects",
		Description: "Posts an open vacancy in one of the caller's projects, within the plan's open slots; partners and the public pages see it at once.",
		Class:       ratelimit.Write, Handle: h.createVacancy,
		Responses: []server.Response{
			server.Answers(http.StatusCreated, "the OPEN vacancy", schemas.Vacancy{}),
			server.Fails(http.StatusForbidden, "plan_vacancy_limit_reached: every open vacancy slot of the plan is taken (limit names the plan's slots)"),
			server.Fails(http.StatusNotFound, "not_found: no such project of the caller"),
		},
	}, h.require)
	server.Get(g, "/vacancies", server.Op[offsetPaging]{
		Summary:     "The caller's vacancies in every status, newest first",
		Description: "Pages through the caller's vacancies in every status, newest first. Read-only.",
		Handle:      h.listOwnVacancies,
		Responses:   []server.Response{server.Answers(http.StatusOK, "the caller's vacancies", schemas.Vacancies{})},
	}, h.require)
	server.Post(g, "/vacancies/:id/close", server.Op[idPath]{
		Summary:     "Close one of the caller's vacancies",
		Description: "Closes one of the caller's vacancies: it leaves the partner API, feeds and pages and frees a plan slot. Another user's vacancy answers 404.",
		Class:       ratelimit.Write, Handle: h.closeVacancy,
		Responses: []server.Response{
			server.Answers(http.StatusOK, "the closed vacancy", schemas.Vacancy{}),
			server.Fails(http.StatusNotFound, "not_found: no such vacancy of the caller"),
		},
	}, h.require)
	server.Post(g, "/partner-keys", server.Op[server.NoRequest]{
		Summary:     "Mint a partner key; the plaintext is shown only in this answer",
		Description: "Creates a partner key (X-Build-Key) of the caller; the plaintext is in this answer only. A caller holds at most 3 active keys.",
		Class:       ratelimit.Write, Handle: h.createKey,
		Responses: []server.Response{
			server.Answers(http.StatusCreated, "the key; its plaintext is shown only here", schemas.PartnerKey{}),
			server.Fails(http.StatusTooManyRequests, "key_limit_reached: the caller holds 3 active partner keys; revoke one first (rate_limited: the mint budget of the IP or the platform is spent)"),
		},
	}, h.require)
	server.Get(g, "/partner-keys", server.Op[server.NoRequest]{
		Summary:     "The caller's partner keys (never their plaintext)",
		Description: "Lists the caller's partner keys with prefix and status, never their plaintext. Read-only.",
		Handle:      h.listKeys,
		Responses:   []server.Response{server.Answers(http.StatusOK, "the caller's keys", schemas.PartnerKeys{})},
	}, h.require)
	server.Handle(g, http.MethodDelete, "/partner-keys/:id", server.Op[idPath]{
		Summary:     "Revoke one of the caller's partner keys",
		Description: "Revokes one of the caller's partner keys; requests with it answer 401 from then on. Another user's key answers 404.",
		Class:       ratelimit.Write, Handle: h.revokeKey,
		Responses: []server.Response{
			server.Answers(http.StatusOK, "the revoked key", schemas.PartnerKey{}),
			server.Fails(http.StatusNotFound, "not_found: no such key of the caller"),
		},
	}, h.require)

	keyInvalid := server.Fails(http.StatusUnauthorized, "key_invalid: X-Build-Key is missing, malformed, unknown or revoked")
	api := r.Group(APIPrefix, partnerCORS).KeyArea("build")
	server.Get(api, "/vacancies", server.Op[partnerListRequest]{
		Summary:     "Open vacancies, newest first; filters city and skill",
		Description: "Pages through the open vacancies, newest first, optionally of a city or skill. Read-only.",
		Class:       ratelimit.Partner, APIKey: HeaderKey, Handle: h.partnerList,
		Responses: []server.Response{server.Answers(http.StatusOK, "open vacancies, newest first", schemas.PartnerVacancies{}), keyInvalid},
	}, h.requireKey)
	server.Get(api, "/vacancies/:id", server.Op[idPath]{
		Summary:     "One open vacancy",
		Description: "One open vacancy. Read-only.",
		Class:       ratelimit.Partner, APIKey: HeaderKey, Handle: h.partnerGet,
		Responses: []server.Response{
			server.Answers(http.StatusOK, "one open vacancy", schemas.PartnerVacancy{}), keyInvalid,
			server.Fails(http.StatusNotFound, "not_found: no such open vacancy"),
		},
	}, h.requireKey)
	server.Get(api, "/health", server.Op[server.NoRequest]{
		Summary:     "Partner API health and version",
		Description: "Whether the partner API answers, and its version. Read-only.",
		Class:       ratelimit.Partner, APIKey: HeaderKey, Handle: h.partnerHealth,
		Responses: []server.Response{
			server.Answers(http.StatusOK, "partner API health", schemas.PartnerAPIHealth{}), keyInvalid,
			server.Fails(http.StatusServiceUnavailable, "unavailable: a dependency did not answer"),
		},
	}, h.requireKey)

	pub := r.Group(PublicPrefix).KeyArea("build")
	server.Get(pub, "/rss/vacancies.xml", server.Op[vacancyFilter]{
		Summary:     "RSS 2.0 feed of open vacancies; filters city and skill",
		Description: "An RSS 2.0 feed of the newest open vacancies, optionally of a city or skill. Read-only.",
		Public:      true, Handle: h.rss,
		Responses: []server.Response{{Status: http.StatusOK, ContentType: "application/rss+xml", Description: "RSS 2.0 feed of the newest open vacancies"}},
	})
	server.Get(pub, "/widget.js", server.Op[server.NoRequest]{
		Summary:     "The drop-in vacancy widget script",
		Description: "The script partners embed to list open vacancies on their site. Read-only.",
		Public:      true, Handle: h.widget,
		Responses: []server.Response{{Status: http.StatusOK, ContentType: "text/javascript", Description: "the widget script"}},
	})

	server.Get(r, SitemapPath, server.Op[sitemapRequest]{
		Summary:     "XML sitemap (a sitemap index beyond 5000 URLs)",
		Description: "The sitemap of the public vacancy, project and employer pages; beyond 5000 URLs a sitemap index of pages. Read-only.",
		Public:      true, Handle: h.sitemap,
		Responses: []server.Response{
			{Status: http.StatusOK, ContentType: "application/xml", Description: "urlset, or a sitemapindex beyond 5000 URLs"},
			server.Fails(http.StatusNotFound, "not_found: no such sitemap page"),
		},
	})
	pages := r.Group(PagePrefix)
	page := func(desc string) []server.Response {
		return []server.Response{{Status: http.StatusOK, ContentType: "text/html", Description: desc}}
	}
	server.Get(pages, "/vacancies", server.Op[server.NoRequest]{
		Summary:     "HTML index of open vacancies",
		Description: "The public HTML page listing the open vacancies. Read-only.",
		Public:      true, Handle: h.indexPage, Responses: page("HTML page"),
	})
	server.Get(pages, "/vacancies/:id", server.Op[idPath]{
		Summary:     "HTML page of one open vacancy with schema.org JobPosting",
		Description: "The public HTML page of one open vacancy, with schema.org JobPosting data. Read-only.",
		Public:      true, Handle: h.vacancyPage,
		Responses: append(page("HTML page"), server.Fails(http.StatusNotFound, "not_found: no such open vacancy")),
	})
	server.Get(pages, "/projects/:id", server.Op[idPath]{
		Summary:     "HTML page of a project and its open vacancies",
		Description: "The public HTML page of a project and its open vacancies. Read-only.",
		Public:      true, Handle: h.projectPage,
		Responses: append(page("HTML page"), server.Fails(http.StatusNotFound, "not_found: no such project")),
	})
	server.Get(pages, "/employers/:id", server.Op[idPath]{
		Summary:     "HTML page of an employer's open vacancies",
		Description: "The public HTML page of an employer's open vacancies. Read-only.",
		Public:      true, Handle: h.employerPage,
		Responses: append(page("HTML page"), server.Fails(http.StatusNotFound, "not_found: no such employer with open vacancies")),
	})
}

// idPath is the request of an operation on one record.
type idPath struct {
	ID string `path:"id" json:"-" format:"ksuid"`
}

// id returns the id, or "" (which names nothing, so the caller answers
// 404) when it is not a well-formed id: odd bytes never reach the database.
func (p *idPath) id() string {
	if !idFormat.MatchString(p.ID) {
		return ""
	}
	return p.ID
}

// caller returns the authenticated user id (require ran before).
func caller(c *fiber.Ctx) string {
	p, _ := auth.User(c)
	return p.UserID
}

// text checks a string the module accepts: valid UTF-8, no NUL, at most max
// characters; required ones must not be blank.
func text(v *bind.Validator, field, s string, max int, required bool) {
	switch {
	case !utf8.ValidString(s) || strings.ContainsRune(s, 0):
		v.Fail(field, "must be valid UTF-8 text without NUL bytes")
	case required && strings.TrimSpace(s) == "":
		v.Fail(field, "is required")
	default:
		v.MaxLen(field, s, max)
	}
}

// idFormat is what a well-formed id looks like (ksuids and the like).
var idFormat = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// vacancyURL is the public page of a vacancy.
func (h *Handlers) vacancyURL(id string) string {
	return h.cfg.PublicBaseURL + PagePrefix + "/vacancies/" + id
}

// rfc3339 formats t in UTC to the second.
func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// vacancyJSON is the API shape of a vacancy as its reader sees it now.
func (h *Handlers) vacancyJSON(v build.Vacancy) schemas.Vacancy {
	out := schemas.Vacancy{
		ID: v.ID, Title: v.Title, Description: v.Description, Salary: v.Salary, SalaryCurrency: v.SalaryCurrency,
		Skills: v.Skills, City: v.City, Project: schemas.VacancyProject{ID: v.ProjectID, Name: v.ProjectName},
		URL: h.vacancyURL(v.ID), Status: v.Status, CreatedAt: rfc3339(v.CreatedAt), ExpiresAt: rfc3339(v.ExpiresAt),
	}
	if out.Skills == nil {
		out.Skills = []string{}
	}
	if v.Status == schemas.VacancyOpen && !v.ExpiresAt.After(h.now()) {
		out.Status = schemas.VacancyExpired
	}
	if v.ClosedAt != nil {
		s := rfc3339(*v.ClosedAt)
		out.ClosedAt = &s
	}
	return out
}
