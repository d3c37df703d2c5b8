package main

import (
	"encoding/base64"
	"encoding/hex"
	"strings"
)

// The key formats production accepts (README, Configuration), one per
// secret in secretTable, so a key cannot be read two ways and an operator
// knows what to generate:
//
//   - formatHex: hex of 32 or more random bytes (64+ hex characters,
//     `openssl rand -hex 32`). Of a "new,old" list only the first is
//     checked: it seals, and the older ones are listed precisely to be
//     rotated away from.
//   - formatWhsec: `whsec_` then the base64 (standard alphabet, padding
//     optional) of 24 or more random bytes, as Standard Webhooks secrets
//     and the processor's dashboard give it.
//   - formatText: any text of 32 or more characters with at least 8
//     distinct ones — a placeholder such as "changeme…" or one character
//     repeated is refused, as any 32 random characters of even the hex
//     alphabet pass (fewer than 8 distinct of 32 random hex characters:
//     below 1e-7).
//
// Length alone lets "0000…" through: a key must also use at least half as
// many distinct byte values as 32 random bytes nearly always do (16 of 32,
// 12 of 24; 32 random bytes show fewer than 16 with a probability below
// 1e-20).
const (
	minKeyBytes      = 32
	minKeyDistinct   = 16
	minWhsecBytes    = 24
	minWhsecDistinct = 12
	minTextSecret    = 32
	minTextDistinct  = 8
)

// textSecretProblem says what is wrong with a shared text secret ("" when
// nothing).
func textSecretProblem(v string) string {
	if len(v) < minTextSecret {
		return "must be at least 32 random characters (e.g. `openssl rand -hex 32`)"
	}
	if distinctBytes([]byte(v)) < minTextDistinct {
		return "is not random: too few distinct characters (e.g. `openssl rand -hex 32`)"
	}
	return ""
}

// hexKeyProblem says what is wrong with a hex key ("" when nothing).
func hexKeyProblem(v string) string {
	raw, err := hex.DecodeString(v)
	if err != nil || len(raw) < minKeyBytes {
		return "must be the hex of 32+ random bytes (64+ hex characters, e.g. `openssl rand -hex 32`)"
	}
	if distinctBytes(raw) < minKeyDistinct {
		return "is not random: too few distinct bytes for 32+ random bytes (generate it with `openssl rand -hex 32`)"
	}
	return ""
}

// whsecProblem says what is wrong with a whsec_ secret ("" when nothing).
func whsecProblem(v string) string {
	const want = "must be whsec_ then the base64 of 24+ random bytes (e.g. whsec_$(openssl rand -base64 32))"
	body, ok := strings.CutPrefix(v, "whsec_")
	if !ok {
		return want
	}
	raw, err := base64.StdEncoding.DecodeString(body)
	if err != nil {
		raw, err = base64.RawStdEncoding.DecodeString(body)
	}
	if err != nil || len(raw) < minWhsecBytes {
		return want
	}
	if distinctBytes(raw) < minWhsecDistinct {
		return "is not random: too few distinct bytes for 24+ random bytes (e.g. whsec_$(openssl rand -base64 32))"
	}
	return ""
}

func distinctBytes(b []byte) int {
	var seen [256]bool
	n := 0
	for _, c := range b {
		if !seen[c] {
			seen[c] = true
			n++
		}
	}
	return n
}

// firstKey is the key that seals of a "new,old" list.
func firstKey(list string) string {
	first, _, _ := strings.Cut(list, ",")
	return strings.TrimSpace(first)
}

// checkKeyFormats reports, one line per variable, a production secret
// that does not follow its format (secretTable); an unset one is named as
// missing or turns its feature off.
func (c Config) checkKeyFormats(r *envReader) {
	for _, s := range secretTable {
		if s.field == nil {
			continue
		}
		v := *s.field(&c)
		if s.list {
			v = firstKey(v)
		}
		if v == "" {
			continue
		}
		if p := formatProblem(s.format, v); p != "" {
			r.fail(s.name, "%s", p)
		}
	}
}

// formatProblem says what is wrong with v in format f ("" when nothing).
func formatProblem(f secretFormat, v string) string {
	switch f {
	case formatHex:
		return hexKeyProblem(v)
	case formatWhsec:
		return whsecProblem(v)
	case formatText:
		return textSecretProblem(v)
	}
	return ""
}
