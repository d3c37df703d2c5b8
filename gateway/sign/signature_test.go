package sign

import (
	"bytes"
	"crypto/ed25519"
	"strings"
	"testing"
)

func TestParseSignature(t *testing.T) {
	t.Parallel()
	_, priv, _ := ed25519.GenerateKey(nil)
	sig := ed25519.Sign(priv, []byte("m"))
	s := FormatSignature("2abcKEY", sig)
	if len(s) != len("2abcKEY.")+86 {
		t.Fatalf("signature %q", s)
	}
	id, got, ok := ParseSignature(s)
	if !ok || id != "2abcKEY" || !bytes.Equal(got, sig) {
		t.Fatalf("parse %q: %s %x %v", s, id, got, ok)
	}
	for _, bad := range []string{"", "nodot", ".abc", "key.", "key." + strings.Repeat("A", 85), "key." + strings.Repeat("A", 86) + "=",
		"ke/y." + s[strings.IndexByte(s, '.')+1:], s + "A", strings.Replace(s, ".", ".=", 1), "key." + strings.Repeat("*", 86)} {
		if _, _, ok := ParseSignature(bad); ok {
			t.Fatalf("accepted %q", bad)
		}
	}
}
