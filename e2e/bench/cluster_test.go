package main

import (
	"slices"
	"testing"
)

func TestClusterShapes(t *testing.T) {
	got, err := clusterShapes("on,off", "2,1,3")
	if err != nil {
		t.Fatal(err)
	}
	want := []clusterShape{{sync: true, fiat: 2}, {sync: false, fiat: 2}, {sync: true, fiat: 1}, {sync: true, fiat: 3}}
	if !slices.Equal(got, want) {
		t.Fatalf("shapes %v, want %v", got, want)
	}
	// a count given twice, or the first again, is measured once
	got, err = clusterShapes("on", "2,2,3")
	if err != nil {
		t.Fatal(err)
	}
	if want := []clusterShape{{sync: true, fiat: 2}, {sync: true, fiat: 3}}; !slices.Equal(got, want) {
		t.Fatalf("shapes %v, want %v", got, want)
	}
	for _, bad := range [][2]string{{"on", "0"}, {"on", "13"}, {"maybe", "2"}, {"on", "x"}} {
		if _, err := clusterShapes(bad[0], bad[1]); err == nil {
			t.Errorf("clusterShapes(%q, %q): no error", bad[0], bad[1])
		}
	}
}

func TestFiatCountersSub(t *testing.T) {
	before := fiatByProcess{"fiat-applier-1": {batches: 10, commands: 100, roundTrips: 20}}
	after := fiatByProcess{"fiat-applier-1": {batches: 15, commands: 160, roundTrips: 30},
		// started in between: counts from 0
		"fiat-applier-3": {batches: 5, commands: 40, roundTrips: 10}}
	if got, want := after.sub(before), (fiatCounters{batches: 10, commands: 100, roundTrips: 20}); got != want {
		t.Fatalf("sub %+v, want %+v", got, want)
	}
}
