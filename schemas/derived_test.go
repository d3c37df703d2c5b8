package schemas

import (
	"sort"
	"testing"
	"time"

	"github.com/segmentio/ksuid"
)

func TestDerivedID(t *testing.T) {
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	a := DerivedID("idem-abc", "tx", at)
	if b := DerivedID("idem-abc", "tx", at); a != b {
		t.Fatalf("same command and purpose: %s then %s", a, b)
	}
	seen := map[string]string{a: "idem-abc/tx"}
	for _, c := range []struct{ cmd, purpose string }{
		{"idem-abc", "audit"}, {"idem-abc", "tx.1"}, {"idem-abd", "tx"}, {"idem-ab", "ctx"}, {"idem-abc\x00tx", ""},
	} {
		id := DerivedID(c.cmd, c.purpose, at)
		if prev, dup := seen[id]; dup {
			t.Fatalf("%s/%q and %s mint the same id %s", c.cmd, c.purpose, prev, id)
		}
		seen[id] = c.cmd + "/" + c.purpose
	}
	k, err := ksuid.Parse(a)
	if err != nil {
		t.Fatalf("%s is not a ksuid: %v", a, err)
	}
	if !k.Time().Equal(at) {
		t.Fatalf("ksuid time %s, want the command's %s", k.Time(), at)
	}
	var ids []string
	for i := 0; i < 5; i++ {
		ids = append(ids, DerivedID("c", "tx", at.Add(time.Duration(4-i)*time.Second)))
	}
	if !sort.SliceIsSorted(ids, func(i, j int) bool { return ids[i] > ids[j] }) {
		t.Fatalf("ids of commands 1 s apart do not sort by time: %v", ids)
	}
}

func BenchmarkDerivedID(b *testing.B) {
	at := time.Now()
	for i := 0; i < b.N; i++ {
		_ = DerivedID("idem-0123456789abcdef0123456789abcdef01234567", "ledger.append", at)
	}
}
