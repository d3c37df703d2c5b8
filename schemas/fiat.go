package schemas

// fiatVersions lists the fiat module's message types and their schema versions.
var fiatVersions = map[string]int{}
