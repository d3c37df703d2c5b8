package schemas

// ledgerVersions lists the ledger module's message types and their schema versions.
var ledgerVersions = map[string]int{}
