package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fintech/platform/storage/identity"
	"github.com/fintech/platform/storage/postgres"
)

// cmdAdmin runs operator actions on the server, with the same environment
// as `platform run`:
//
//	platform admin verify <email>
//
// marks an existing account's e-mail verified, the bootstrap for the first
// admin (an allow-listed address confers admin rights only once verified).
func cmdAdmin(ctx context.Context, cfg Config, args []string) error {
	if len(args) != 2 || args[0] != "verify" {
		return usageError{"admin: usage: platform admin verify <email>"}
	}
	email := args[1]
	pool, err := postgres.Connect(ctx, cfg.DatabaseURL, 2)
	if err != nil {
		return fmt.Errorf("DATABASE_URL: %w", err)
	}
	defer pool.Close()
	if _, err := postgres.Migrate(ctx, pool); err != nil {
		return fmt.Errorf("DATABASE_URL: %w", err)
	}
	id, err := identity.NewUsers(pool).MarkVerified(ctx, email, time.Now().UTC())
	if errors.Is(err, postgres.ErrNotFound) {
		return fmt.Errorf("admin verify: no account with e-mail %s (register it first)", email)
	}
	if err != nil {
		return err
	}
	role := "user (the address is on no *_ADMIN_EMAILS allowlist)"
	if cfg.Admins.Role(email) == "admin" {
		role = "admin"
	}
	fmt.Printf("verified %s (user %s); role now: %s\n", email, id, role)
	return nil
}
