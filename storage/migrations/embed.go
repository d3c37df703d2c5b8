// Package migrations embeds the Postgres schema migrations, applied in version
// order by storage/postgres.Migrate. File numbers are reserved per module:
// 0001-0009 foundation, 0010-0019 fiat, 0020-0029 ledger and reputation,
// 0030-0039 mask, 0040-0049 webhooks and commerce.
package migrations

import "embed"

// FS holds every *.sql migration.
//
//go:embed *.sql
var FS embed.FS
