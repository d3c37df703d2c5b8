package schemas

// moduleVersions lists, per module, every message type this build reads with
// the newest schema version it understands. A type missing from all of them
// is parked on the DLQ by consumers. Each module's file owns its own table.
var moduleVersions = []map[string]int{
	replyVersions,
	identityVersions,
	fiatVersions,
	fiatReviewVersions,
	maskVersions,
	ledgerVersions,
	reputationVersions,
	govVersions,
	charityVersions,
	partnerVersions,
	constitutionVersions,
	tradeVersions,
	buildVersions,
	webhookVersions,
	bundleVersions,
	outcomeVersions,
}

func lookupVersion(typ string) (int, bool) {
	for _, m := range moduleVersions {
		if v, ok := m[typ]; ok {
			return v, true
		}
	}
	return 0, false
}

// Version returns the schema version this build writes for a type.
func Version(typ string) int {
	if v, ok := lookupVersion(typ); ok {
		return v
	}
	return 1
}
