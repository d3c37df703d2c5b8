package sink

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"

	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/clickhouse"
)

// Personal data never reaches ClickHouse. The analytics copy is read by
// analysts and exported to tools that the state of record's access rules do
// not cover, so the sink removes, before the insert:
//
//   - every field whose key is on personalKeys, at any depth of events.data
//     (a denylist applied recursively rather than an allowlist per event
//     type: analysts query any field of some fifty event types, and a list
//     per type would have to follow every schema change by hand);
//   - every e-mail address inside any other string (a memo, a description, a
//     field added later that nobody listed), which is what makes a denylist
//     safe enough: the most common personal datum is caught by its shape;
//   - an e-mail used as the partition key (the partner rails key their
//     events by the address);
//   - the actor of an anonymous donation, and of the goal that a donation
//     reached (the ledger and every public read show "anonymous"), and the
//     campaign in a donor's charity-donor reputation source, which would
//     name the campaign an anonymous donor gave to.
//
// Redacted values are removed, not replaced, so a query reads ” or 0 for
// them as for any absent field.
var personalKeys = map[string]bool{
	"email": true, "toemail": true, "fromemail": true, "owner": true,
	"name": true, "displayname": true, "fullname": true, "ownername": true,
	"destination": true, "destinationhint": true, "bankaccount": true, "bankaccounthint": true,
	"documentnumber": true, "clientip": true, "secret": true,
}

// emailShape matches an e-mail address inside a string.
var emailShape = regexp.MustCompile(`[A-Za-z0-9.!#$%&'*+/=?^_{|}~-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+`)

// redactedEmail replaces an address found inside a longer string.
const redactedEmail = "[email]"

// mayHoldPersonal is the cheap test that lets most events through
// untouched: only data with an '@' or a denied key (case-insensitively) is
// parsed.
func mayHoldPersonal(data []byte) bool {
	if bytes.IndexByte(data, '@') >= 0 {
		return true
	}
	lower := bytes.ToLower(data)
	for k := range personalKeys {
		if bytes.Contains(lower, []byte(`"`+k+`"`)) {
			return true
		}
	}
	return false
}

// RedactData returns data without personal fields (see personalKeys) and
// with every e-mail address inside a string replaced; data with nothing to
// remove is returned as it is. Data that is not JSON is returned with its
// addresses replaced.
func RedactData(data []byte) string {
	if !mayHoldPersonal(data) {
		return string(data)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // amounts stay exact integers
	var v any
	if err := dec.Decode(&v); err != nil {
		return emailShape.ReplaceAllString(string(data), redactedEmail)
	}
	v, changed := redactValue(v)
	if !changed {
		return string(data)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return emailShape.ReplaceAllString(string(data), redactedEmail)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

func redactValue(v any) (any, bool) {
	changed := false
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if personalKeys[strings.ToLower(k)] {
				delete(x, k)
				changed = true
				continue
			}
			var c bool
			x[k], c = redactValue(e)
			changed = changed || c
		}
		return x, changed
	case []any:
		for i, e := range x {
			var c bool
			x[i], c = redactValue(e)
			changed = changed || c
		}
		return x, changed
	case string:
		r := emailShape.ReplaceAllString(x, redactedEmail)
		return r, r != x
	default:
		return v, false
	}
}

// redactKey drops a partition key that is an e-mail address.
func redactKey(key string) string {
	if emailShape.MatchString(key) {
		return ""
	}
	return key
}

// anonymousActor reports whether the envelope's actor must not be stored:
// the donor of an anonymous donation, and the donor whose donation reached
// a campaign's goal (that event does not say whether the donation was
// anonymous, and analytics do not need who it was).
func anonymousActor(env schemas.Envelope) bool {
	switch env.Type {
	case schemas.TypeDonationReceived:
		d, err := schemas.DataAs[schemas.DonationReceived](env)
		return err != nil || d.Anonymous
	case schemas.TypeCampaignGoalReached:
		return true
	}
	return false
}

// redactScoreSource drops the source of a charity-donor reputation event:
// it names the campaign (and day) a donor gave to, anonymous or not.
func redactScoreSource(kind, source string) string {
	if kind == schemas.RepKindCharityDonor {
		return ""
	}
	return source
}

// redactRow is an events row without personal data.
func redactRow(r clickhouse.EventRow) clickhouse.EventRow {
	env := schemas.Envelope{ID: r.ID, Type: r.Type, Key: r.Key, ActorUserID: r.ActorUserID, Data: json.RawMessage(r.Data)}
	if anonymousActor(env) {
		r.ActorUserID = ""
	}
	r.Key = redactKey(r.Key)
	r.Data = RedactData([]byte(r.Data))
	if r.Type == schemas.TypeScoreUpdated {
		if u, err := schemas.DataAs[schemas.ScoreUpdated](env); err == nil && redactScoreSource(u.Kind, u.SourceID) != u.SourceID {
			u.SourceID = ""
			if raw, err := json.Marshal(u); err == nil {
				r.Data = string(raw)
			}
		}
	}
	return r
}

// ScrubRow is redactRow for a row already in ClickHouse; it reports whether
// the row changed (clickhouse.ScrubEvents rewrites only those).
func ScrubRow(r clickhouse.EventRow) (clickhouse.EventRow, bool) {
	out := redactRow(r)
	return out, out != r
}
