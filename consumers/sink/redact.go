package sink

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

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
//     safe enough: the most common personal datum is caught by its shape —
//     international ones too (letters of any script, the full-width ＠ and
//     small ﹫, ideographic full stops);
//   - every phone number or national id inside a string: a run of 10 or
//     more digits (separated by at most two spaces, dots, dashes or
//     parentheses, after an optional '+') that is not part of a longer
//     word such as an id; a person's name in free text has no shape and is
//     not caught (a memo is its author's own text);
//   - an e-mail used as the partition key (the partner rails key their
//     events by the address);
//   - the actor of an anonymous donation, and of the goal that a donation
//     reached (the ledger and every public read show "anonymous"), and the
//     campaign in a donor's charity-donor reputation source, which would
//     name the campaign an anonymous donor gave to, and the time of that
//     credit past the hour (donorTime).
//
// Redacted values are removed, not replaced, so a query reads ” or 0 for
// them as for any absent field.
var personalKeys = map[string]bool{
	"email": true, "toemail": true, "fromemail": true, "owner": true,
	"name": true, "displayname": true, "fullname": true, "ownername": true,
	"destination": true, "destinationhint": true, "bankaccount": true, "bankaccounthint": true,
	"documentnumber": true, "clientip": true, "secret": true,
}

// emailShape matches an e-mail address inside a string, in any script, with
// an ASCII, full-width or small commercial at.
var emailShape = regexp.MustCompile(`[\p{L}\p{N}.!#$%&'*+/=?^_{|}~-]+[@＠﹫][\p{L}\p{N}-]+(?:[.。．｡][\p{L}\p{N}-]+)+`)

// redactedEmail replaces an address found inside a longer string.
const redactedEmail = "[email]"

// numberShape matches a phone number or a national id: 10 or more digits.
var numberShape = regexp.MustCompile(`\+?\d(?:[ ().-]{0,2}\d){9,}`)

// redactedNumber replaces a phone number or national id in a string.
const redactedNumber = "[number]"

// minNumberDigits is the run of digits that may be a phone or an id.
const minNumberDigits = 10

// scrubText replaces the addresses, phone numbers and national ids in s.
func scrubText(s string) string {
	s = emailShape.ReplaceAllString(s, redactedEmail)
	locs := numberShape.FindAllStringIndex(s, -1)
	if len(locs) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, l := range locs {
		before, _ := utf8.DecodeLastRuneInString(s[:l[0]])
		after, _ := utf8.DecodeRuneInString(s[l[1]:])
		if l[0] > 0 && wordRune(before) || l[1] < len(s) && wordRune(after) {
			continue // digits inside an id or a word
		}
		b.WriteString(s[last:l[0]])
		b.WriteString(redactedNumber)
		last = l[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// wordRune is a rune next to which digits are part of something else: a
// word or an id, or a time of day (":" after "2026-11-29 07").
func wordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == ':' }

// maxPersonalKey is the length of the longest key on personalKeys.
const maxPersonalKey = len("destinationhint")

// mayHoldPersonal is the cheap test that lets most events through
// untouched: only data with an '@' or a quoted string that is a denied key
// (case-insensitively) is parsed. It runs on every event the sink copies, so
// it allocates nothing (and reads the row's string as it is): each quoted
// string short enough to be a key is lower-cased into a stack buffer and
// looked up. A short string holding an escape (which could decode to a
// denied key, e.g. "\u0065mail") is parsed too.
func mayHoldPersonal[T ~string | ~[]byte](data T) bool {
	var buf [maxPersonalKey]byte
	digits := 0 // the digits of the run that may be a phone or an id
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case c == '@':
			return true
		case c == 0xEF && i+2 < len(data) && (data[i+1] == 0xBC && data[i+2] == 0xA0 || data[i+1] == 0xB9 && data[i+2] == 0xAB):
			return true // ＠ or ﹫
		case '0' <= c && c <= '9':
			if digits++; digits >= minNumberDigits {
				return true
			}
			continue
		case c == ' ' || c == '.' || c == '-' || c == '(' || c == ')' || c == '+':
			continue // a separator keeps the run
		case c == '"':
			digits = 0
		default:
			digits = 0
			continue
		}
		// Every '"' may open a key (as a substring test would), so the
		// scan goes on from i+1 whatever this string holds.
		n := 0
		for j := i + 1; j < len(data); j++ {
			c := data[j]
			if c == '"' {
				if n > 0 && personalKeys[string(buf[:n])] {
					return true
				}
				break
			}
			if c == '\\' {
				return true // an escape may spell a denied key
			}
			if n == maxPersonalKey {
				break // longer than any denied key
			}
			if c >= utf8.RuneSelf {
				// redactValue lower-cases keys with strings.ToLower, which
				// folds a few runes (the Kelvin sign, a dotted capital I)
				// to ASCII letters.
				r, size := utf8.DecodeRuneInString(string(data[j:min(j+utf8.UTFMax, len(data))]))
				if r = unicode.ToLower(r); r >= utf8.RuneSelf {
					break // a rune no denied key holds
				}
				c = byte(r)
				j += size - 1
			} else if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			buf[n] = c
			n++
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
	return redactParsed(data)
}

// redactString is RedactData for a row's string, returned as it is (no
// copy) when it holds nothing to remove.
func redactString(data string) string {
	if !mayHoldPersonal(data) {
		return data
	}
	return redactParsed([]byte(data))
}

// redactParsed is RedactData past the cheap test.
func redactParsed(data []byte) string {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // amounts stay exact integers
	var v any
	if err := dec.Decode(&v); err != nil {
		return scrubText(string(data))
	}
	v, changed := redactValue(v)
	if !changed {
		return string(data)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return scrubText(string(data))
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
		r := scrubText(x)
		return r, r != x
	default:
		return v, false
	}
}

// redactKey drops a partition key that is an e-mail address.
func redactKey(key string) string {
	// An address holds an '@': the regexp runs only on keys that may be one.
	if strings.ContainsAny(key, "@＠﹫") && emailShape.MatchString(key) {
		return ""
	}
	return key
}

// anonymousActor reports whether the actor of an event (its type and data)
// must not be stored:
// the donor of an anonymous donation, and the donor whose donation reached
// a campaign's goal (that event does not say whether the donation was
// anonymous, and analytics do not need who it was).
func anonymousActor(typ, data string) bool {
	switch typ {
	case schemas.TypeDonationReceived:
		d, err := schemas.DataAs[schemas.DonationReceived](schemas.Envelope{Type: typ, Data: json.RawMessage(data)})
		return err != nil || d.Anonymous
	case schemas.TypeCampaignGoalReached:
		return true
	}
	return false
}

// redactScoreSource drops the source of a charity-donor reputation event:
// it names the campaign (and day) a donor gave to, anonymous or not.
// donorTime is when a charity donor's reputation credit happened, to the
// hour: the second would pair it with its donation (an anonymous one shows
// no actor, but a credit of its weight at the same second names the donor).
func donorTime(kind string, t time.Time) time.Time {
	if kind == schemas.RepKindCharityDonor {
		return t.Truncate(time.Hour)
	}
	return t
}

func redactScoreSource(kind, source string) string {
	if kind == schemas.RepKindCharityDonor {
		return ""
	}
	return source
}

// redactRow is an events row without personal data.
func redactRow(r clickhouse.EventRow) clickhouse.EventRow {
	orig := r
	if anonymousActor(orig.Type, orig.Data) {
		r.ActorUserID = ""
	}
	r.Key = redactKey(r.Key)
	r.Data = redactString(r.Data)
	if r.Type == schemas.TypeScoreUpdated {
		if u, err := schemas.DataAs[schemas.ScoreUpdated](envelopeOf(orig)); err == nil {
			r.OccurredAt = donorTime(u.Kind, r.OccurredAt)
			if redactScoreSource(u.Kind, u.SourceID) != u.SourceID {
				u.SourceID = ""
				if raw, err := json.Marshal(u); err == nil {
					r.Data = string(raw)
				}
			}
		}
	}
	return r
}

// envelopeOf is the envelope a row was made from, for decoding its data:
// built only for the types whose data redactRow reads, as it copies the
// data.
func envelopeOf(r clickhouse.EventRow) schemas.Envelope {
	return schemas.Envelope{ID: r.ID, Type: r.Type, Key: r.Key, ActorUserID: r.ActorUserID, Data: json.RawMessage(r.Data)}
}

// ScrubRow is redactRow for a row already in ClickHouse; it reports whether
// the row changed (clickhouse.ScrubEvents rewrites only those).
func ScrubRow(r clickhouse.EventRow) (clickhouse.EventRow, bool) {
	out := redactRow(r)
	return out, out != r
}
