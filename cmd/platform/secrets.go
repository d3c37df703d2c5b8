package main

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// secretFormat is the one format a secret is accepted in (keyrules.go).
type secretFormat int

const (
	// formatHex: the hex of 32 or more random bytes (`openssl rand -hex 32`).
	formatHex secretFormat = iota
	// formatWhsec: whsec_ then the base64 of 24 or more random bytes, as
	// Standard Webhooks secrets and the processor's dashboard give it.
	formatWhsec
	// formatText: any text of 32 or more characters, 8 or more distinct.
	formatText
	// formatIssued: whatever its issuer gives (an API key, a password):
	// not checked.
	formatIssued
)

func (f secretFormat) String() string {
	switch f {
	case formatHex:
		return "hex of 32+ random bytes"
	case formatWhsec:
		return "whsec_ + base64 of 24+ random bytes"
	case formatText:
		return "32+ random characters"
	default:
		return "as issued"
	}
}

// secretSpec is one secret the binary reads: its variable, its format and
// why it exists, and what the code does with it.
type secretSpec struct {
	name   string
	format secretFormat
	why    string
	// required: production's serving commands refuse to start without it.
	required bool
	// generated: development generates it into DATA_DIR/secrets when
	// unset, and `platform envfile secrets` prints a fresh one.
	generated bool
	// fingerprinted: production refuses a value other than the one the
	// database was first started with (storage/keys).
	fingerprinted bool
	// list: "new,old" rotates; the first one seals, and only it is checked.
	list bool
	// raw: read untrimmed (a password is what it is).
	raw bool
	// field is where Config keeps it; nil for a secret read elsewhere
	// (a client's flag default).
	field func(*Config) *string
}

// secretTable is every secret the binary reads (TestSecretTableCoversCode
// greps the code for the others). It drives their loading (loadConfig),
// the development generation (loadSecrets, `envfile secrets`), the
// production requirements (requireForProduction), the format rules
// (checkKeyFormats) and the fingerprint check (openKeys).
var secretTable = []secretSpec{
	{name: "JWT_SECRET", format: formatText, why: "signs login tokens; generated secrets are a development convenience",
		required: true, generated: true, field: func(c *Config) *string { return &c.JWTSecret }},
	{name: "LEDGER_SALT", format: formatHex, why: "the ledger's hash salt; losing it breaks chain verification",
		required: true, generated: true, fingerprinted: true, field: func(c *Config) *string { return &c.LedgerSalt }},
	{name: "PROCESSOR_WEBHOOK_SECRET", format: formatWhsec, why: "the processor's whsec_… signing secret",
		required: true, generated: true, field: func(c *Config) *string { return &c.ProcessorHook }},
	{name: "SIGNING_MASTER_KEY", format: formatHex, why: "seals users' signing keys; losing it loses them",
		required: true, generated: true, fingerprinted: true, list: true, field: func(c *Config) *string { return &c.SigningKey }},
	{name: "DATA_ENCRYPTION_KEY", format: formatHex, why: "seals personal data and secrets at rest; losing it loses them",
		required: true, generated: true, fingerprinted: true, list: true, field: func(c *Config) *string { return &c.DataKey }},
	{name: "PROCESSOR_API_KEY", format: formatIssued, why: "the real processor's key: the embedded test processor signs deposits itself and runs only in development",
		required: true, field: func(c *Config) *string { return &c.ProcessorKey }},
	{name: "REPUTATION_SERVICE_KEY", format: formatText, why: "authenticates the reputation service's calls",
		field: func(c *Config) *string { return &c.ReputationKey }},
	{name: "PARTNER_WEBHOOK_SECRET", format: formatText, why: "HMAC key of the partner webhooks (a rail without its own)",
		field: func(c *Config) *string { return &c.Partner.HMAC }},
	{name: "RIGHTS_WEBHOOK_SECRET", format: formatText, why: "HMAC key of the rights partner's webhooks",
		field: func(c *Config) *string { return &c.Partner.RightsHMAC }},
	{name: "CHESS_WEBHOOK_SECRET", format: formatText, why: "HMAC key of the chess partner's webhooks",
		field: func(c *Config) *string { return &c.Partner.ChessHMAC }},
	{name: "CERT_WEBHOOK_SECRET", format: formatText, why: "HMAC key of the cert partner's webhooks",
		field: func(c *Config) *string { return &c.Partner.CertHMAC }},
	{name: "RIGHTS_SECRET", format: formatText, why: "the rights partner's legacy header secret",
		field: func(c *Config) *string { return &c.Partner.Rights }},
	{name: "CHESS_SECRET", format: formatText, why: "the chess partner's legacy header secret",
		field: func(c *Config) *string { return &c.Partner.Chess }},
	{name: "CERT_SECRET", format: formatText, why: "the cert partner's legacy header secret",
		field: func(c *Config) *string { return &c.Partner.Cert }},
	{name: "RECONCILE_ALERT_SECRET", format: formatIssued, why: "signs the reconciliation drift alerts (16+ characters when RECONCILE_ALERT_URL is set)",
		field: func(c *Config) *string { return &c.ReconcileKey }},
	{name: "AI_API_KEY", format: formatIssued, why: "the AI endpoint's key (AI_API_URL)",
		field: func(c *Config) *string { return &c.AIKey }},
	{name: "CLICKHOUSE_PASSWORD", format: formatIssued, why: "the ClickHouse user's password (CLICKHOUSE_USER)", raw: true,
		field: func(c *Config) *string { return &c.ClickHousePassword }},
	{name: "PLATFORM_TOKEN", format: formatIssued, why: "`platform webhooks listen`: the caller's API token (its --token default)"},
}

// readSecrets loads every secret of the table kept in Config.
func (c *Config) readSecrets(r *envReader) {
	for _, s := range secretTable {
		if s.field == nil {
			continue
		}
		if s.raw {
			*s.field(c) = r.get(s.name)
		} else {
			*s.field(c) = r.str(s.name, "")
		}
	}
}

// generateSecret is a fresh value in format f (32 random bytes).
func generateSecret(f secretFormat) (string, error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("generate secret: %w", err)
	}
	if f == formatWhsec {
		// Standard Webhooks secrets are base64 after the prefix.
		return "whsec_" + base64.StdEncoding.EncodeToString(raw), nil
	}
	return hex.EncodeToString(raw), nil
}

// readOrCreateSecret returns the secret stored at path, creating it in
// format f when the file does not exist yet.
func readOrCreateSecret(path string, f secretFormat) (string, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		if s := strings.TrimSpace(string(b)); s != "" {
			return s, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	s, err := generateSecret(f)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(path, []byte(s+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return s, nil
}

// loadSecrets fills every generated secret left unset from DATA_DIR/secrets,
// creating each file with a fresh random value the first time, so a
// restart keeps tokens, hashes and signatures valid.
//
// Only in development: production requires every secret set (LoadConfig),
// since a key generated into a volume is lost, or silently replaced, with it.
func (c *Config) loadSecrets() error {
	if !c.development() {
		return nil
	}
	dir := filepath.Join(c.DataDir, "secrets")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("DATA_DIR: create %s: %w", dir, err)
	}
	for _, s := range secretTable {
		if !s.generated || *s.field(c) != "" {
			continue
		}
		v, err := readOrCreateSecret(filepath.Join(dir, strings.ToLower(s.name)), s.format)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		*s.field(c) = v
	}
	return nil
}

// secretLines is `platform envfile secrets`: NAME=VALUE for every
// generated secret, each fresh in its format, for a deployment script to
// keep (deploy/local/cluster.sh) instead of generating them itself.
func secretLines() (string, error) {
	var b strings.Builder
	for _, s := range secretTable {
		if !s.generated {
			continue
		}
		v, err := generateSecret(s.format)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%s=%s\n", s.name, v)
	}
	return b.String(), nil
}
