package schemas

// reputationVersions lists the reputation module's message types and their schema versions.
var reputationVersions = map[string]int{}
