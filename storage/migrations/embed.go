// Package migrations embeds the Postgres schema migrations, applied in version
// order by storage/postgres.Migrate. A new migration takes the next free
// number after the highest file here and one line in index.md saying what it
// is for (TestIndexNamesEveryMigration fails on a file the index lacks).
package migrations

import "embed"

// FS holds every *.sql migration.
//
//go:embed *.sql
var FS embed.FS
