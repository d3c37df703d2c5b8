package main

import (
	"strings"
	"testing"
)

// TestProductionRefusesWeakKeys: each key that fails its format is named on
// one line of its own; the weak values are refused; a well-formed
// key (hex of 32 random bytes, whsec_ with the base64 of 32) starts.
func TestProductionRefusesWeakKeys(t *testing.T) {
	t.Parallel()
	if _, err := LoadConfig(env(withProduction(nil))); err != nil {
		t.Fatalf("well-formed production keys refused: %v", err)
	}
	hex32 := strings.Repeat("0123456789abcdef", 4)
	cases := []struct {
		name, variable, value string
	}{
		{"abc", "DATA_ENCRYPTION_KEY", "abc"},
		{"abc", "SIGNING_MASTER_KEY", "abc"},
		{"x", "LEDGER_SALT", "x"},
		{"whsec_abc", "PROCESSOR_WEBHOOK_SECRET", "whsec_abc"},
		{"31 bytes of hex", "DATA_ENCRYPTION_KEY", hex32[:62]},
		{"64 characters that are not hex", "LEDGER_SALT", strings.Repeat("z", 64)},
		{"64 zeros", "SIGNING_MASTER_KEY", strings.Repeat("0", 64)},
		{"a repeated pattern", "LEDGER_SALT", strings.Repeat("ab", 32)},
		{"weak current key of a rotation", "DATA_ENCRYPTION_KEY", "abc," + productionEnv["DATA_ENCRYPTION_KEY"]},
		{"no whsec_ prefix", "PROCESSOR_WEBHOOK_SECRET", "MfKQ9r8d2ut8sCh2Gn7i1ZbJ5xR3vHwLzA6eTYk0pUc="},
		{"whsec_ of 18 bytes", "PROCESSOR_WEBHOOK_SECRET", "whsec_MfKQ9r8d2ut8sCh2Gn7i1ZbJ"},
		{"whsec_ not base64", "PROCESSOR_WEBHOOK_SECRET", "whsec_" + strings.Repeat("!", 40)},
		{"whsec_ of zeros", "PROCESSOR_WEBHOOK_SECRET", "whsec_" + strings.Repeat("A", 44)},
		{"one character repeated", "JWT_SECRET", strings.Repeat("j", 32)},
		{"a placeholder", "REPUTATION_SERVICE_KEY", strings.Repeat("changeme", 4)},
		{"a short partner secret", "CHESS_WEBHOOK_SECRET", "partner-secret"},
		{"a placeholder partner secret", "RIGHTS_SECRET", strings.Repeat("secret", 6)},
	}
	for _, c := range cases {
		_, err := LoadConfig(env(withProduction(map[string]string{c.variable: c.value})))
		if err == nil {
			t.Errorf("%s %s: started", c.variable, c.name)
			continue
		}
		ls := lines(err)
		if len(ls) != 1 || !strings.HasPrefix(ls[0], c.variable+": ") {
			t.Errorf("%s %s: problems %q, want one line naming %s", c.variable, c.name, ls, c.variable)
		}
		if len(c.value) > 3 && strings.Contains(err.Error(), c.value) {
			t.Errorf("%s %s: the error repeats the key: %v", c.variable, c.name, err)
		}
	}
	// The older keys of a rotation are not checked: they are listed to be
	// rotated away from.
	rot := withProduction(map[string]string{"SIGNING_MASTER_KEY": productionEnv["SIGNING_MASTER_KEY"] + ",abc"})
	if _, err := LoadConfig(env(rot)); err != nil {
		t.Fatalf("a strong key rotating away from a weak one refused: %v", err)
	}
	// Development generates its own and checks nothing.
	dev := withProduction(map[string]string{"PLATFORM_ENV": "development", "LEDGER_SALT": "x"})
	if _, err := LoadConfig(env(dev)); err != nil {
		t.Fatalf("development refused a short salt: %v", err)
	}
}

// env reads a map as the environment.
func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}
