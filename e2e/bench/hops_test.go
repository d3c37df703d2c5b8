package main

import (
	"testing"
	"time"
)

func TestParseHops(t *testing.T) {
	s, ok := parseHops(100, 1000, []byte("110,120,130,150,200,300,700,800,900"))
	if !ok {
		t.Fatal("a full header was refused")
	}
	want := hopSample{10, 10, 10, 20, 50, 100, 400, 100, 100, 100}
	if s != want {
		t.Fatalf("hops %v, want %v", s, want)
	}
	// An acknowledgement after the reply (0) is a nil hop: the fetch hop
	// runs from the produce.
	s, ok = parseHops(100, 1000, []byte("110,120,0,150,200,300,700,800,900"))
	if want := (hopSample{10, 10, 0, 30, 50, 100, 400, 100, 100, 100}); !ok || s != want {
		t.Fatalf("ack 0: hops %v (%v), want %v", s, ok, want)
	}
	for _, bad := range []string{"", "110,120", "0,120,130,150,200,300,700,800,900", "110,120,130,0,200,300,700,800,900", "110,120,130,150,200,300,700,800,900,950", "a,120,130,150,200,300,700,800,900"} {
		if _, ok := parseHops(100, 1000, []byte(bad)); ok {
			t.Errorf("header %q accepted", bad)
		}
	}
}

func TestBudgetAddsUp(t *testing.T) {
	// 1,000 transfers whose hops differ in skew: the columns of the median
	// and p99 transfer add up to those percentiles of end to end, and the
	// means to the mean.
	var samples []hopSample
	for i := range 1000 {
		var s hopSample
		for k := range s {
			s[k] = int32(1000 * (1 + (i*(k+3))%97))
		}
		s[5] += int32(i * 100) // one hop carries the tail
		samples = append(samples, s)
	}
	b := budgetOf(samples, 0)
	if b.n != 1000 {
		t.Fatalf("n %d", b.n)
	}
	if b.sumMean != b.e2eMean {
		t.Errorf("sum of means %v != mean end to end %v", b.sumMean, b.e2eMean)
	}
	for _, c := range []struct {
		name     string
		sum, e2e time.Duration
	}{{"p50", b.sumAt50, b.e2eP50}, {"p99", b.sumAt99, b.e2eP99}} {
		if r := ratio(c.sum, c.e2e); r < 0.97 || r > 1.03 {
			t.Errorf("%s transfer: hops sum to %v, end to end %v (ratio %.3f)", c.name, c.sum, c.e2e, r)
		}
	}
	if b.at99[5] <= b.at50[5] {
		t.Errorf("the tail hop is not larger at p99 (%v) than at p50 (%v)", b.at99[5], b.at50[5])
	}
}
