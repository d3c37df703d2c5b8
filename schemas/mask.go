package schemas

// maskVersions lists the mask module's message types and their schema versions.
var maskVersions = map[string]int{}
