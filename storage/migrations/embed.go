// Package migrations embeds the Postgres schema migrations, applied in version
// order by storage/postgres.Migrate. File numbers are reserved per module:
// 0001-0009 foundation, 0010-0019 fiat, 0020-0029 ledger and reputation,
// 0030-0039 mask, 0040-0049 webhooks and commerce, 0050-0059 security,
// 0060-0069 governance, 0070-0079 charity, 0080-0089 trade and signing,
// 0090-0099 partner rails (rights, chess, cert), 0100-0109 constitution and
// planet, 0110-0119 build (vacancies), 0120-0129 refunds, 0130-0139 event log
// and row budget (0135-0136: the constitution and partner lists' order), 0140-0144 account
// registration and admin bootstrap, 0145-0149 abuse budgets, partner rails,
// chain checkpoints, withdrawal destinations and retention, 0155-0159
// webhook endpoints and list order, 0160-0164 operations (dead-letter
// decisions), 0170-0179 the fiat applier (paid deposits).
package migrations

import "embed"

// FS holds every *.sql migration.
//
//go:embed *.sql
var FS embed.FS
