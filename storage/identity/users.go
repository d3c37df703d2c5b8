// Package identity stores user accounts.
package identity

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fintech/platform/storage/pipeline"
	"github.com/fintech/platform/storage/postgres"
)

// Who created an account (users.registered_by).
const (
	RegisteredBySelf     = "self"     // POST /api/auth/register
	RegisteredByOperator = "operator" // `platform admin create` on the server
)

// User is an account row.
type User struct {
	ID           string
	Email        string
	Name         string
	PasswordHash string
	CreatedAt    time.Time
	// RegisteredBy is RegisteredBySelf (the default) or RegisteredByOperator.
	RegisteredBy string
	// RegistrationIP is the client address of a self-registration ("" when
	// unknown or made by an operator).
	RegistrationIP string
	// VerifiedAt marks the e-mail verified from the start (operator-made
	// accounts); nil leaves it unverified.
	VerifiedAt *time.Time
}

// Users is the account repository.
type Users struct {
	pool *pgxpool.Pool
}

// NewUsers builds the repository.
func NewUsers(pool *pgxpool.Pool) *Users { return &Users{pool: pool} }

const insertUserSQL = `
INSERT INTO users (id, email, name, password_hash, created_at, registered_by, registration_ip, email_verified_at,
    role_confirmed_at)
VALUES ($1, $2, $3, $4, $5, $6, nullif($7, ''), $8, CASE WHEN $6 = 'operator' THEN $8::timestamptz END)`

// Create inserts the user and queues its registration event in the same
// transaction. A taken e-mail (case-insensitively) is postgres.ErrConflict.
func (u *Users) Create(ctx context.Context, user User, event pipeline.OutboxRow) error {
	err := pgx.BeginFunc(ctx, u.pool, func(tx pgx.Tx) error {
		by := user.RegisteredBy
		if by == "" {
			by = RegisteredBySelf
		}
		if _, err := tx.Exec(ctx, insertUserSQL, user.ID, user.Email, user.Name, user.PasswordHash, user.CreatedAt,
			by, user.RegistrationIP, user.VerifiedAt); err != nil {
			return err
		}
		return pipeline.InsertOutbox(ctx, tx, []pipeline.OutboxRow{event})
	})
	if err != nil {
		return fmt.Errorf("create user %s: %w", user.ID, postgres.Translate(err))
	}
	return nil
}

const selectUserSQL = `SELECT id, email, name, password_hash, created_at FROM users `

// ByEmail finds a user by e-mail, case-insensitively.
func (u *Users) ByEmail(ctx context.Context, email string) (User, error) {
	return u.one(ctx, selectUserSQL+`WHERE lower(email) = lower($1)`, email)
}

// ByID finds a user by id.
func (u *Users) ByID(ctx context.Context, id string) (User, error) {
	return u.one(ctx, selectUserSQL+`WHERE id = $1`, id)
}

func (u *Users) one(ctx context.Context, sql string, arg string) (User, error) {
	var r User
	err := u.pool.QueryRow(ctx, sql, arg).Scan(&r.ID, &r.Email, &r.Name, &r.PasswordHash, &r.CreatedAt)
	if err != nil {
		return User{}, fmt.Errorf("find user: %w", postgres.Translate(err))
	}
	return r, nil
}
