// Package build stores the partner vacancy feed: employers' projects and
// vacancies, and the partner keys (SHA-256 only) that read the feed.
// Writes come straight from the gateway; the events they cause are queued in
// the outbox in the same transaction.
package build

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/storage/postgres"
)

// ErrPlanLimit means the employer already holds as many open vacancies as
// the plan allows.
var ErrPlanLimit = errors.New("plan vacancy limit reached")

// Project is an employer's project.
type Project struct {
	ID          string
	EmployerID  string
	Name        string
	Description string
	City        string
	URL         string
	CreatedAt   time.Time
}

// Vacancy is a vacancy row with its project's name.
type Vacancy struct {
	ID             string
	ProjectID      string
	ProjectName    string
	EmployerID     string
	Title          string
	Description    string
	Salary         int64
	SalaryCurrency string
	Skills         []string
	City           string
	Status         string
	CreatedAt      time.Time
	ExpiresAt      time.Time
	ClosedAt       *time.Time
}

// Key is a partner key record; the plaintext is never stored.
type Key struct {
	ID         string
	EmployerID string
	CreatedAt  time.Time
	RevokedAt  *time.Time
	// Hash is the stored SHA-256 of the key (read by KeyByHash only).
	Hash []byte
}

// Filter narrows the open-vacancy feed; empty fields match everything.
// Both compare case-insensitively: City exactly, Skill as a member of skills.
type Filter struct {
	City  string
	Skill string
}

// Store is the build repository.
type Store struct {
	pool *pgxpool.Pool
}

// NewStore builds the repository.
func NewStore(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

const insertProjectSQL = `
INSERT INTO build_projects (id, employer_id, name, description, city, url, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7)`

// CreateProject inserts a project.
func (s *Store) CreateProject(ctx context.Context, p Project) error {
	if _, err := s.pool.Exec(ctx, insertProjectSQL, p.ID, p.EmployerID, p.Name, p.Description, p.City, p.URL, p.CreatedAt); err != nil {
		return fmt.Errorf("create project %s: %w", p.ID, postgres.Translate(err))
	}
	return nil
}

const selectProjectSQL = `SELECT id, employer_id, name, description, city, url, created_at FROM build_projects WHERE id = $1`

// Project reads one project; an unknown id is postgres.ErrNotFound.
func (s *Store) Project(ctx context.Context, id string) (Project, error) {
	var p Project
	err := s.pool.QueryRow(ctx, selectProjectSQL, id).Scan(&p.ID, &p.EmployerID, &p.Name, &p.Description, &p.City, &p.URL, &p.CreatedAt)
	if err != nil {
		return Project{}, fmt.Errorf("read project %s: %w", id, postgres.Translate(err))
	}
	return p, nil
}

// ListProjects returns a page of an employer's projects, newest first.
func (s *Store) ListProjects(ctx context.Context, employerID string, limit, offset int) ([]Project, error) {
	rows, err := s.pool.Query(ctx, `
SELECT id, employer_id, name, description, city, url, created_at FROM build_projects
WHERE employer_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`, employerID, limit, offset)
	if err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Project, error) {
		var p Project
		err := r.Scan(&p.ID, &p.EmployerID, &p.Name, &p.Description, &p.City, &p.URL, &p.CreatedAt)
		return p, err
	})
}

const (
	// lockEmployerSQL serializes the vacancy writes of one employer for the
	// rest of the transaction, so that the open count and the insert that
	// depends on it cannot interleave with another create.
	lockEmployerSQL  = `SELECT pg_advisory_xact_lock(hashtextextended('build-employer:' || $1, 0))`
	countOpenSQL     = `SELECT count(*) FROM build_vacancies WHERE employer_id = $1 AND status = 'OPEN' AND expires_at > $2`
	insertVacancySQL = `
INSERT INTO build_vacancies (id, project_id, employer_id, title, description, salary, salary_currency,
    skills, city, status, created_at, expires_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'OPEN', $10, $11)`
)

// CreateVacancy inserts an OPEN vacancy of one of the employer's projects and
// queues event, in one transaction. A project that does not exist or is
// another employer's is postgres.ErrNotFound; an employer that already holds
// limit open, unexpired vacancies gets ErrPlanLimit. Concurrent creates of
// one employer are serialized, so the limit is exact. v.ProjectName is
// filled in.
func (s *Store) CreateVacancy(ctx context.Context, v *Vacancy, limit int, event pipeline.OutboxRow) error {
	if v.Skills == nil {
		v.Skills = []string{}
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, lockEmployerSQL, v.EmployerID); err != nil {
			return err
		}
		var owner string
		if err := tx.QueryRow(ctx, `SELECT employer_id, name FROM build_projects WHERE id = $1`, v.ProjectID).
			Scan(&owner, &v.ProjectName); err != nil {
			return err
		}
		if owner != v.EmployerID {
			return pgx.ErrNoRows
		}
		var open int
		if err := tx.QueryRow(ctx, countOpenSQL, v.EmployerID, v.CreatedAt).Scan(&open); err != nil {
			return err
		}
		if open >= limit {
			return ErrPlanLimit
		}
		if _, err := tx.Exec(ctx, insertVacancySQL, v.ID, v.ProjectID, v.EmployerID, v.Title, v.Description,
			v.Salary, v.SalaryCurrency, v.Skills, v.City, v.CreatedAt, v.ExpiresAt); err != nil {
			return err
		}
		v.Status = schemas.VacancyOpen
		return pipeline.InsertOutbox(ctx, tx, []pipeline.OutboxRow{event})
	})
	if err != nil {
		return fmt.Errorf("create vacancy %s: %w", v.ID, postgres.Translate(err))
	}
	return nil
}

const vacancyColumns = `v.id, v.project_id, p.name, v.employer_id, v.title, v.description, v.salary,
    v.salary_currency, v.skills, v.city, v.status, v.created_at, v.expires_at, v.closed_at`

func scanVacancy(r pgx.Row) (Vacancy, error) {
	var v Vacancy
	err := r.Scan(&v.ID, &v.ProjectID, &v.ProjectName, &v.EmployerID, &v.Title, &v.Description, &v.Salary,
		&v.SalaryCurrency, &v.Skills, &v.City, &v.Status, &v.CreatedAt, &v.ExpiresAt, &v.ClosedAt)
	if v.Skills == nil {
		v.Skills = []string{}
	}
	return v, err
}

// CloseVacancy closes one of the employer's vacancies and queues the row
// event builds from the closed vacancy when it was OPEN. Closing a closed vacancy changes nothing and queues nothing
// (closed reports whether this call closed it). Another employer's or an
// unknown vacancy is postgres.ErrNotFound.
func (s *Store) CloseVacancy(ctx context.Context, id, employerID string, now time.Time,
	event func(Vacancy) (pipeline.OutboxRow, error)) (v Vacancy, closed bool, err error) {
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, lockEmployerSQL, employerID); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `UPDATE build_vacancies SET status = 'CLOSED', closed_at = $3
WHERE id = $1 AND employer_id = $2 AND status = 'OPEN'`, id, employerID, now)
		if err != nil {
			return err
		}
		closed = tag.RowsAffected() == 1
		v, err = scanVacancy(tx.QueryRow(ctx, `SELECT `+vacancyColumns+`
FROM build_vacancies v JOIN build_projects p ON p.id = v.project_id WHERE v.id = $1 AND v.employer_id = $2`, id, employerID))
		if err != nil {
			return err
		}
		if !closed {
			return nil
		}
		row, err := event(v)
		if err != nil {
			return err
		}
		return pipeline.InsertOutbox(ctx, tx, []pipeline.OutboxRow{row})
	})
	if err != nil {
		return Vacancy{}, false, fmt.Errorf("close vacancy %s: %w", id, postgres.Translate(err))
	}
	return v, closed, nil
}

// OwnedVacancy reads one of the employer's vacancies in any status.
func (s *Store) OwnedVacancy(ctx context.Context, id, employerID string) (Vacancy, error) {
	v, err := scanVacancy(s.pool.QueryRow(ctx, `SELECT `+vacancyColumns+`
FROM build_vacancies v JOIN build_projects p ON p.id = v.project_id WHERE v.id = $1 AND v.employer_id = $2`, id, employerID))
	if err != nil {
		return Vacancy{}, fmt.Errorf("read vacancy %s: %w", id, postgres.Translate(err))
	}
	return v, nil
}

// ListOwned returns the employer's vacancies in every status, newest first.
func (s *Store) ListOwned(ctx context.Context, employerID string, limit, offset int) ([]Vacancy, int, error) {
	return s.list(ctx, `v.employer_id = $1`, []any{employerID}, limit, offset)
}

// openWhere selects the OPEN, unexpired vacancies matching a filter; $1 is
// now, $2 the city, $3 the skill.
const openWhere = `v.status = 'OPEN' AND v.expires_at > $1
  AND ($2 = '' OR lower(v.city) = lower($2))
  AND ($3 = '' OR EXISTS (SELECT 1 FROM unnest(v.skills) s WHERE lower(s) = lower($3)))`

// ListOpen returns the open, unexpired vacancies matching f, newest first
// (createdAt desc, then id desc, so offset pages never overlap), and how many
// match in all.
func (s *Store) ListOpen(ctx context.Context, f Filter, now time.Time, limit, offset int) ([]Vacancy, int, error) {
	return s.list(ctx, openWhere, []any{now, f.City, f.Skill}, limit, offset)
}

// ListOpenAfter is ListOpen by keyset: the open vacancies after position
// (newest first), with the total of the filter and how many follow the
// position (so the caller knows whether more remain).
func (s *Store) ListOpenAfter(ctx context.Context, f Filter, now time.Time, after schemas.Position, limit int) ([]Vacancy, int, int, error) {
	args := []any{now, f.City, f.Skill}
	_, total, err := s.list(ctx, openWhere, args, 0, 0)
	if err != nil {
		return nil, 0, 0, err
	}
	items, left, err := s.list(ctx, openWhere+` AND (v.created_at, v.id) < ($4, $5)`,
		append(args, after.At, after.ID), limit, 0)
	if err != nil {
		return nil, 0, 0, err
	}
	return items, total, left, nil
}

func (s *Store) list(ctx context.Context, where string, args []any, limit, offset int) ([]Vacancy, int, error) {
	var total int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM build_vacancies v WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count vacancies: %w", err)
	}
	n := len(args)
	rows, err := s.pool.Query(ctx, fmt.Sprintf(`SELECT %s FROM build_vacancies v JOIN build_projects p ON p.id = v.project_id
WHERE %s ORDER BY v.created_at DESC, v.id DESC LIMIT $%d OFFSET $%d`, vacancyColumns, where, n+1, n+2),
		append(args, limit, offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list vacancies: %w", err)
	}
	items, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Vacancy, error) { return scanVacancy(r) })
	if err != nil {
		return nil, 0, fmt.Errorf("list vacancies: %w", err)
	}
	return items, total, nil
}

// OpenVacancy reads one OPEN, unexpired vacancy; anything else is
// postgres.ErrNotFound.
func (s *Store) OpenVacancy(ctx context.Context, id string, now time.Time) (Vacancy, error) {
	v, err := scanVacancy(s.pool.QueryRow(ctx, `SELECT `+vacancyColumns+`
FROM build_vacancies v JOIN build_projects p ON p.id = v.project_id
WHERE v.id = $1 AND v.status = 'OPEN' AND v.expires_at > $2`, id, now))
	if err != nil {
		return Vacancy{}, fmt.Errorf("read vacancy %s: %w", id, postgres.Translate(err))
	}
	return v, nil
}

// OpenOfProject returns a project's open, unexpired vacancies, newest first.
func (s *Store) OpenOfProject(ctx context.Context, projectID string, now time.Time, limit int) ([]Vacancy, error) {
	items, _, err := s.list(ctx, `v.project_id = $4 AND `+openWhere, []any{now, "", "", projectID}, limit, 0)
	return items, err
}

// OpenOfEmployer returns an employer's open, unexpired vacancies, newest first.
func (s *Store) OpenOfEmployer(ctx context.Context, employerID string, now time.Time, limit int) ([]Vacancy, error) {
	items, _, err := s.list(ctx, `v.employer_id = $4 AND `+openWhere, []any{now, "", "", employerID}, limit, 0)
	return items, err
}

// ErrKeyLimit means the employer already holds the most active keys.
var ErrKeyLimit = errors.New("active partner key limit reached")

// CreateKey stores a partner key by the SHA-256 of its plaintext, unless
// the employer already holds max active keys (ErrKeyLimit). A per-employer
// advisory lock serialises concurrent mints so the limit holds under races.
func (s *Store) CreateKey(ctx context.Context, k Key, hash []byte, max int) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('build_partner_keys:' || $1))`, k.EmployerID); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM build_partner_keys WHERE employer_id = $1 AND revoked_at IS NULL`,
			k.EmployerID).Scan(&n); err != nil {
			return err
		}
		if n >= max {
			return ErrKeyLimit
		}
		_, err := tx.Exec(ctx, `INSERT INTO build_partner_keys (id, employer_id, key_hash, created_at) VALUES ($1, $2, $3, $4)`,
			k.ID, k.EmployerID, hash, k.CreatedAt)
		return err
	})
	if errors.Is(err, ErrKeyLimit) {
		return err
	}
	if err != nil {
		return fmt.Errorf("create partner key %s: %w", k.ID, postgres.Translate(err))
	}
	return nil
}

// ListKeys returns the employer's keys (never their plaintext), newest first.
func (s *Store) ListKeys(ctx context.Context, employerID string) ([]Key, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, employer_id, created_at, revoked_at FROM build_partner_keys
WHERE employer_id = $1 ORDER BY created_at DESC, id DESC LIMIT 200`, employerID)
	if err != nil {
		return nil, fmt.Errorf("list partner keys: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Key, error) {
		var k Key
		err := r.Scan(&k.ID, &k.EmployerID, &k.CreatedAt, &k.RevokedAt)
		return k, err
	})
}

// RevokeKey revokes one of the employer's keys (again: no change) and returns
// it; another employer's or an unknown key is postgres.ErrNotFound.
func (s *Store) RevokeKey(ctx context.Context, id, employerID string, now time.Time) (Key, error) {
	var k Key
	err := s.pool.QueryRow(ctx, `UPDATE build_partner_keys SET revoked_at = COALESCE(revoked_at, $3)
WHERE id = $1 AND employer_id = $2 RETURNING id, employer_id, created_at, revoked_at`, id, employerID, now).
		Scan(&k.ID, &k.EmployerID, &k.CreatedAt, &k.RevokedAt)
	if err != nil {
		return Key{}, fmt.Errorf("revoke partner key %s: %w", id, postgres.Translate(err))
	}
	return k, nil
}

// KeyByHash finds the active key whose plaintext hashes to hash, with its
// stored digest (which auth.KeyLookup compares again in constant time); an
// unknown or revoked key is postgres.ErrNotFound.
func (s *Store) KeyByHash(ctx context.Context, hash []byte) (Key, error) {
	var k Key
	err := s.pool.QueryRow(ctx, `SELECT id, employer_id, created_at, key_hash FROM build_partner_keys
WHERE key_hash = $1 AND revoked_at IS NULL`, hash).Scan(&k.ID, &k.EmployerID, &k.CreatedAt, &k.Hash)
	if err != nil {
		return Key{}, fmt.Errorf("find partner key: %w", postgres.Translate(err))
	}
	return k, nil
}

// SitemapEntry is one page of the sitemap with its last modification.
type SitemapEntry struct {
	Kind    string // "vacancy", "project" or "employer"
	ID      string
	LastMod time.Time
}

// SitemapStamp says whether a sitemap built before is still current: the
// vacancies' change version (moved by a trigger on every write) and the
// next time an open vacancy expires (zero when none will).
func (s *Store) SitemapStamp(ctx context.Context, now time.Time) (int64, time.Time, error) {
	var version int64
	var next *time.Time
	err := s.pool.QueryRow(ctx, `SELECT (SELECT version FROM build_changes),
       (SELECT min(expires_at) FROM build_vacancies WHERE status = 'OPEN' AND expires_at > $1)`, now).Scan(&version, &next)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("read sitemap stamp: %w", err)
	}
	if next == nil {
		return version, time.Time{}, nil
	}
	return version, *next, nil
}

// SitemapEntries lists the pages the sitemap names: every open, unexpired
// vacancy (newest first), every project with an open vacancy, and the
// topEmployers employers with the most open vacancies.
func (s *Store) SitemapEntries(ctx context.Context, now time.Time, topEmployers int) ([]SitemapEntry, error) {
	rows, err := s.pool.Query(ctx, `
SELECT 'vacancy', v.id, v.created_at, 0 FROM build_vacancies v WHERE v.status = 'OPEN' AND v.expires_at > $1
UNION ALL
SELECT 'project', p.id, max(v.created_at), 1 FROM build_projects p JOIN build_vacancies v ON v.project_id = p.id
WHERE v.status = 'OPEN' AND v.expires_at > $1 GROUP BY p.id
UNION ALL
SELECT 'employer', e.employer_id, e.last, 2 FROM (
    SELECT employer_id, count(*) AS n, max(created_at) AS last FROM build_vacancies
    WHERE status = 'OPEN' AND expires_at > $1 GROUP BY employer_id ORDER BY n DESC, employer_id LIMIT $2) e
ORDER BY 4, 3 DESC, 2 DESC`, now, topEmployers)
	if err != nil {
		return nil, fmt.Errorf("list sitemap entries: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (SitemapEntry, error) {
		var e SitemapEntry
		var order int
		err := r.Scan(&e.Kind, &e.ID, &e.LastMod, &order)
		return e, err
	})
}
