package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/fintech/platform/gateway/auth"
	"github.com/fintech/platform/gateway/bind"
	gidentity "github.com/fintech/platform/gateway/identity"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/identity"
	"github.com/fintech/platform/storage/postgres"
)

const adminUsage = "admin: usage: platform admin create [--role fiat,gov,charity,reputation] [--name NAME] <email> " +
	"(password from the terminal prompt or one line on stdin) | platform admin verify [--i-know-who-registered] <email>"

// cmdAdmin runs operator actions on the server, with the same environment
// as `platform run`:
//
//	platform admin create [--role fiat,gov,...] [--name NAME] <email>
//	platform admin verify [--i-know-who-registered] <email>
//
// create makes a verified account directly in the database, the bootstrap
// of an admin that nobody can pre-empt by registering the address first;
// verify marks an existing account's address verified, and refuses one that
// registered itself unless the operator says they know who did.
func cmdAdmin(ctx context.Context, cfg Config, args []string) error {
	if len(args) == 0 {
		return usageError{adminUsage}
	}
	switch args[0] {
	case "create":
		return adminCreate(ctx, cfg, args[1:], os.Stdin, os.Stdout)
	case "verify":
		return adminVerify(ctx, cfg, args[1:], os.Stdout)
	default:
		return usageError{adminUsage}
	}
}

// adminArgs parses flags placed before or after the one e-mail argument
// (one FlagSet, parsed again after each positional argument).
func adminArgs(name string, args []string, define func(fs *flag.FlagSet)) (string, error) {
	fs := flag.NewFlagSet("admin "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	define(fs)
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return "", usageError{fmt.Sprintf("admin %s: %v", name, err)}
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(positional) != 1 {
		return "", usageError{adminUsage}
	}
	return strings.TrimSpace(positional[0]), nil
}

// adminRoles are the roles `admin create --role` names, with the allowlist
// that confers each.
func adminRoles(a auth.Admins) []struct {
	name, env string
	list      auth.Allowlist
} {
	return []struct {
		name, env string
		list      auth.Allowlist
	}{
		{"fiat", "FIAT_ADMIN_EMAILS", a.Fiat},
		{"gov", "GOV_ADMIN_EMAILS", a.Gov},
		{"charity", "CHARITY_ADMIN_EMAILS", a.Charity},
		{"reputation", "REPUTATION_ADMIN_EMAILS", a.Reputation},
	}
}

// rolesFor checks the requested roles (all that name email when none is
// requested) against the allowlists, which are what confers them.
func rolesFor(a auth.Admins, email, requested string) ([]string, error) {
	want := map[string]bool{}
	for _, r := range strings.Split(requested, ",") {
		if r = strings.ToLower(strings.TrimSpace(r)); r != "" {
			want[r] = true
		}
	}
	var granted []string
	for _, r := range adminRoles(a) {
		asked := want[r.name]
		delete(want, r.name)
		switch {
		case asked && !r.list.Has(email):
			return nil, fmt.Errorf("admin create: %s is not on %s: add it there (the server's allowlists confer admin roles; this command creates the verified account)", email, r.env)
		case asked || (requested == "" && r.list.Has(email)):
			granted = append(granted, r.name)
		}
	}
	if len(want) > 0 {
		return nil, usageError{fmt.Sprintf("admin create: unknown role(s) %s; roles: fiat, gov, charity, reputation", strings.Join(sortedKeys(want), ", "))}
	}
	if len(granted) == 0 {
		return nil, fmt.Errorf("admin create: %s is on no *_ADMIN_EMAILS allowlist: add it to the one of the role it needs", email)
	}
	return granted, nil
}

func adminCreate(ctx context.Context, cfg Config, args []string, stdin io.Reader, stdout io.Writer) error {
	var roles, name string
	email, err := adminArgs("create", args, func(fs *flag.FlagSet) {
		fs.StringVar(&roles, "role", "", "comma-separated roles: fiat, gov, charity, reputation (default: every allowlist naming the address)")
		fs.StringVar(&name, "name", "", "display name")
	})
	if err != nil {
		return err
	}
	var v bind.Validator
	v.Email("email", email)
	v.MaxLen("name", name, bind.MaxTitle)
	if err := v.Err(); err != nil {
		return usageError{fmt.Sprintf("admin create: %q is not a valid e-mail address or the name is too long", email)}
	}
	if !cfg.AdminListsSet {
		return fmt.Errorf("admin create: no *_ADMIN_EMAILS is set in this environment or its env file, so no role can be granted: " +
			"run it with the server's settings (--env-file DATA_DIR/platform.env) or set the allowlist of the role, as the server has it")
	}
	granted, err := rolesFor(cfg.Admins, email, roles)
	if err != nil {
		return err
	}
	password, err := readPassword(stdin, email)
	if err != nil {
		return err
	}
	if err := gidentity.ValidatePassword(password); err != nil {
		return fmt.Errorf("admin create: %w", err)
	}

	pool, err := postgres.Connect(ctx, cfg.DatabaseURL, 2)
	if err != nil {
		return fmt.Errorf("DATABASE_URL: %w", err)
	}
	defer pool.Close()
	if _, err := postgres.Migrate(ctx, pool); err != nil {
		return fmt.Errorf("DATABASE_URL: %w", err)
	}
	users := identity.NewUsers(pool)
	if reg, err := users.Registration(ctx, email); err == nil {
		return fmt.Errorf("admin create: an account with this e-mail exists: %s; if it is the admin's own, `platform admin verify --i-know-who-registered %s`",
			describeRegistration(reg), email)
	} else if !errors.Is(err, postgres.ErrNotFound) {
		return err
	}
	hash, err := gidentity.NewPasswords(1, time.Minute).Hash(ctx, password)
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	u := identity.User{ID: schemas.NewID(), Email: email, Name: strings.TrimSpace(name), PasswordHash: hash, CreatedAt: now,
		RegisteredBy: identity.RegisteredByOperator, VerifiedAt: &now}
	row, err := gidentity.RegisteredEvent(u)
	if err != nil {
		return err
	}
	if err := users.Create(ctx, u, row); err != nil {
		if errors.Is(err, postgres.ErrConflict) {
			return fmt.Errorf("admin create: %s registered a moment ago; check it with `platform admin verify %s`", email, email)
		}
		return err
	}
	fmt.Fprintf(stdout, "created %s (user %s), e-mail verified; role now: admin (%s)\n", email, u.ID, strings.Join(granted, ", "))
	fmt.Fprint(stdout, adminMFAHowTo(cfg))
	return nil
}

// readPassword prompts twice on a terminal (without echo) or reads one line
// from a pipe: never an argument or the environment, which other users
// and logs can see.
func readPassword(stdin io.Reader, email string) (string, error) {
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprintf(os.Stderr, "Password for %s: ", email)
		first, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(os.Stderr)
		if err != nil {
			return "", fmt.Errorf("admin create: read password: %w", err)
		}
		fmt.Fprint(os.Stderr, "Again: ")
		second, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(os.Stderr)
		if err != nil {
			return "", fmt.Errorf("admin create: read password: %w", err)
		}
		if string(first) != string(second) {
			return "", errors.New("admin create: the passwords differ")
		}
		return string(first), nil
	}
	line, err := bufio.NewReader(io.LimitReader(stdin, 4096)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("admin create: read password from stdin: %w", err)
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("admin create: no password: type it at the prompt or pipe one line on stdin")
	}
	return line, nil
}

// describeRegistration says who created an account, when and from where.
func describeRegistration(r identity.Registration) string {
	who := "registered itself through POST /api/auth/register"
	if r.RegisteredBy == identity.RegisteredByOperator {
		who = "created by an operator (platform admin create)"
	}
	ip := r.IP
	if ip == "" {
		ip = "not stored"
	}
	verified := "no"
	if r.VerifiedAt != nil {
		verified = r.VerifiedAt.UTC().Format(time.RFC3339)
	}
	return fmt.Sprintf("e-mail %s, user %s, %s at %s from IP %s, e-mail verified: %s",
		r.Email, r.UserID, who, r.CreatedAt.UTC().Format(time.RFC3339), ip, verified)
}

func adminVerify(ctx context.Context, cfg Config, args []string, stdout io.Writer) error {
	var known bool
	email, err := adminArgs("verify", args, func(fs *flag.FlagSet) {
		fs.BoolVar(&known, "i-know-who-registered", false, "verify an account that registered itself")
	})
	if err != nil {
		return err
	}
	pool, err := postgres.Connect(ctx, cfg.DatabaseURL, 2)
	if err != nil {
		return fmt.Errorf("DATABASE_URL: %w", err)
	}
	defer pool.Close()
	if _, err := postgres.Migrate(ctx, pool); err != nil {
		return fmt.Errorf("DATABASE_URL: %w", err)
	}
	users := identity.NewUsers(pool)
	reg, err := users.Registration(ctx, email)
	if errors.Is(err, postgres.ErrNotFound) {
		return fmt.Errorf("admin verify: no account with e-mail %s (make the admin with `platform admin create %s`)", email, email)
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, "account: "+describeRegistration(reg))
	if reg.RegisteredBy == identity.RegisteredBySelf && !known {
		return fmt.Errorf("admin verify: refused: %s registered itself, and anyone can register an address before its owner does; "+
			"if you know who registered it (above), re-run with --i-know-who-registered; otherwise do not make it an admin (`platform admin create` makes admins on a fresh address)", email)
	}
	id, err := users.MarkVerified(ctx, email, time.Now().UTC())
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "verified %s (user %s); %s\n", email, id, roleReport(cfg, email))
	return nil
}

// adminMFAHowTo tells the operator how the new admin turns on two-factor,
// which production requires before any admin route answers them.
func adminMFAHowTo(cfg Config) string {
	need := "in production, admin routes answer 403 mfa_required until the admin turns on two-factor"
	if cfg.development() {
		need = "development does not require it; production answers admin routes 403 mfa_required until it is on"
	}
	return "two-factor (" + need + "):\n" +
		"  1. log in: POST " + cfg.PublicBaseURL + "/api/auth/login {email, password} -> token\n" +
		"  2. POST /api/auth/mfa/totp {password} (Authorization: Bearer <token>) -> secret and otpauthUrl: add it to an authenticator app\n" +
		"  3. POST /api/auth/mfa/totp/confirm {code} -> ten recovery codes: keep them offline\n" +
		"  then log in with {email, password, code}.\n"
}

// roleReport says what role the server confers on email, from the
// allowlists this command read; the server's own environment decides, so
// without any *_ADMIN_EMAILS here the command says it cannot know rather
// than guess "user".
func roleReport(cfg Config, email string) string {
	if !cfg.AdminListsSet {
		return "role: cannot tell here: no *_ADMIN_EMAILS is set in this environment or its env file; " +
			"the running server confers admin if its allowlists name the address (use --env-file DATA_DIR/platform.env to read them)"
	}
	var on []string
	for _, r := range adminRoles(cfg.Admins) {
		if r.list.Has(email) {
			on = append(on, r.env)
		}
	}
	if len(on) == 0 {
		return "role now: user (the address is on none of the *_ADMIN_EMAILS allowlists read here)"
	}
	return "role now: admin (on " + strings.Join(on, ", ") + ")"
}
