package gov

import (
	"encoding/json"
	"math/big"
	"strings"
	"testing"

	"github.com/fintech/platform/schemas"
)

func rat(s string) *big.Rat {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		panic(s)
	}
	return r
}

func yna(choices string) []Ballot {
	var out []Ballot
	for _, c := range strings.Fields(choices) {
		out = append(out, Ballot{Choice: map[string]string{"y": "yes", "n": "no", "a": "abstain"}[c]})
	}
	return out
}

func TestTallyYesNoAbstain(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name             string
		ballots          string
		quorum           int64
		threshold        string
		yes, no, abstain string
		share            string // "" = undefined
		quorumMet        bool
		passing          bool
	}{
		{"no ballots", "", 1, "0.5", "0", "0", "0", "", false, false},
		{"simple majority", "y y n", 1, "0.5", "2", "1", "0", "0.666667", true, true},
		{"exactly at threshold is not passing", "y n", 1, "0.5", "1", "1", "0", "0.5", true, false},
		{"exactly at a two-thirds threshold is not passing", "y y n", 1, "2/3", "2", "1", "0", "0.666667", true, false},
		{"just above two thirds", "y y y y y y y n n n", 1, "0.66", "7", "3", "0", "0.7", true, true},
		{"abstentions count for quorum only", "y a a a", 4, "0.5", "1", "0", "3", "1", true, true},
		{"abstentions short of quorum", "y a a", 4, "0.5", "1", "0", "2", "1", false, false},
		{"only abstentions: quorum but nothing to pass", "a a a", 2, "0.5", "0", "0", "3", "", true, false},
		{"quorum exactly met", "y y", 2, "0.5", "2", "0", "0", "1", true, true},
		{"majority without quorum", "y y y", 4, "0.5", "3", "0", "0", "1", false, false},
		{"rejected with quorum", "n n y", 3, "0.5", "1", "2", "0", "0.333333", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rules := Rules{Mode: schemas.VoteModeYesNoAbstain, Quorum: tt.quorum, Threshold: rat(tt.threshold)}
			res := Tally(rules, yna(tt.ballots))
			v := res.View(rules)
			got := [3]json.Number{v.TallyNow["yes"].(json.Number), v.TallyNow["no"].(json.Number), v.TallyNow["abstain"].(json.Number)}
			if got != [3]json.Number{json.Number(tt.yes), json.Number(tt.no), json.Number(tt.abstain)} {
				t.Fatalf("counts %v", got)
			}
			share := ""
			if v.Share != nil {
				share = string(*v.Share)
			}
			if share != tt.share || res.QuorumMet != tt.quorumMet || res.Passing != tt.passing {
				t.Fatalf("share %q quorumMet %v passing %v", share, res.QuorumMet, res.Passing)
			}
		})
	}
}

func ranked(rankings ...string) []Ballot {
	var out []Ballot
	for _, r := range rankings {
		out = append(out, Ballot{Ranking: strings.Split(r, "")})
	}
	return out
}

func TestTallyRankedChoice(t *testing.T) {
	t.Parallel()
	type round struct {
		counts     map[string]int64
		eliminated string
	}
	tests := []struct {
		name      string
		options   string
		ballots   []Ballot
		threshold string
		rounds    []round
		final     map[string]int64
		leader    string
		passing   bool
	}{
		{
			name: "majority in the first round", options: "ABC",
			ballots:   ranked("ABC", "ABC", "BAC"),
			threshold: "0.5",
			rounds:    []round{{map[string]int64{"A": 2, "B": 1, "C": 0}, ""}},
			final:     map[string]int64{"A": 2, "B": 1, "C": 0}, leader: "A", passing: true,
		},
		{
			name: "transfers after elimination", options: "ABC",
			ballots:   ranked("ABC", "ABC", "BCA", "BCA", "CBA"),
			threshold: "0.5",
			rounds: []round{
				{map[string]int64{"A": 2, "B": 2, "C": 1}, "C"},
				{map[string]int64{"A": 2, "B": 3}, ""},
			},
			final: map[string]int64{"A": 2, "B": 3, "C": 0}, leader: "B", passing: true,
		},
		{
			name: "elimination tie eliminates the option listed later", options: "ABCD",
			// B and C tie for last with 1 each: C (listed later) goes; its
			// ballot moves to B, so B now ties A and D is last.
			ballots:   ranked("ABCD", "ABCD", "BACD", "CBAD", "DABC", "DABC"),
			threshold: "0.5",
			rounds: []round{
				{map[string]int64{"A": 2, "B": 1, "C": 1, "D": 2}, "C"},
				{map[string]int64{"A": 2, "B": 2, "D": 2}, "D"},
				{map[string]int64{"A": 4, "B": 2}, ""},
			},
			final: map[string]int64{"A": 4, "B": 2, "C": 0, "D": 0}, leader: "A", passing: true,
		},
		{
			name: "a tie at zero eliminates the later option first", options: "ABC",
			ballots:   ranked("CAB", "BAC"),
			threshold: "0.5",
			rounds: []round{
				{map[string]int64{"A": 0, "B": 1, "C": 1}, "A"},
				{map[string]int64{"B": 1, "C": 1}, "C"},
				{map[string]int64{"B": 2}, ""},
			},
			final: map[string]int64{"A": 0, "B": 2, "C": 0}, leader: "B", passing: true,
		},
		{
			name: "exhausted down to the last option", options: "AB",
			ballots:   ranked("AB", "BA"),
			threshold: "0.5",
			rounds: []round{
				{map[string]int64{"A": 1, "B": 1}, "B"},
				{map[string]int64{"A": 2}, ""},
			},
			final: map[string]int64{"A": 2, "B": 0}, leader: "A", passing: true,
		},
		{
			name: "final leader at exactly the threshold is not passing", options: "ABC",
			ballots:   ranked("ABC", "ABC", "ABC", "BCA", "CBA"),
			threshold: "0.6",
			rounds:    []round{{map[string]int64{"A": 3, "B": 1, "C": 1}, ""}},
			final:     map[string]int64{"A": 3, "B": 1, "C": 1}, leader: "A", passing: false,
		},
		{
			name: "no ballots", options: "AB", ballots: nil, threshold: "0.5",
			rounds: []round{{map[string]int64{"A": 0, "B": 0}, ""}},
			final:  map[string]int64{"A": 0, "B": 0}, leader: "", passing: false,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rules := Rules{Mode: schemas.VoteModeRanked, Options: strings.Split(tt.options, ""), Quorum: 1, Threshold: rat(tt.threshold)}
			res := Tally(rules, tt.ballots)
			if len(res.Rounds) != len(tt.rounds) {
				t.Fatalf("rounds %d, want %d: %+v", len(res.Rounds), len(tt.rounds), res.Rounds)
			}
			for i, want := range tt.rounds {
				got := res.Rounds[i]
				el := ""
				if got.Eliminated != nil {
					el = *got.Eliminated
				}
				if el != want.eliminated || len(got.Counts) != len(want.counts) {
					t.Fatalf("round %d: %+v eliminated %q, want %+v", i+1, got.Counts, el, want)
				}
				for o, n := range want.counts {
					if got.Counts[o] != n {
						t.Fatalf("round %d: %v, want %v", i+1, got.Counts, want.counts)
					}
				}
			}
			for o, n := range tt.final {
				if res.Totals[o].Cmp(big.NewRat(n, 1)) != 0 {
					t.Fatalf("final %s = %v, want %d", o, res.Totals[o], n)
				}
			}
			if res.Leader != tt.leader || res.Passing != tt.passing {
				t.Fatalf("leader %q passing %v", res.Leader, res.Passing)
			}
			v := res.View(rules)
			if _, ok := v.TallyNow["rounds"]; !ok {
				t.Fatal("tallyNow lacks rounds")
			}
		})
	}
}

func weighted(ws ...map[string]string) []Ballot {
	var out []Ballot
	for _, w := range ws {
		b := Ballot{Weights: map[string]*big.Rat{}}
		for o, s := range w {
			b.Weights[o] = rat(s)
		}
		out = append(out, b)
	}
	return out
}

func TestTallyWeighted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		ballots   []Ballot
		quorum    int64
		threshold string
		totals    map[string]string // exact rationals
		rendered  map[string]string
		leader    string
		quorumMet bool
		passing   bool
	}{
		{
			name:    "each ballot is normalised to sum 1",
			ballots: weighted(map[string]string{"A": "3", "B": "1"}, map[string]string{"A": "0.5", "B": "0.5"}),
			quorum:  1, threshold: "0.5",
			totals:   map[string]string{"A": "5/4", "B": "3/4", "C": "0"},
			rendered: map[string]string{"A": "1.25", "B": "0.75", "C": "0"},
			leader:   "A", quorumMet: true, passing: true,
		},
		{
			name:    "thirds stay exact",
			ballots: weighted(map[string]string{"A": "1", "B": "1", "C": "1"}, map[string]string{"A": "1", "B": "1", "C": "1"}, map[string]string{"A": "7"}),
			quorum:  1, threshold: "0.5",
			totals:   map[string]string{"A": "5/3", "B": "2/3", "C": "2/3"},
			rendered: map[string]string{"A": "1.666667", "B": "0.666667", "C": "0.666667"},
			leader:   "A", quorumMet: true, passing: true, // 5/9 > 1/2
		},
		{
			name:    "leader exactly at the threshold is not passing",
			ballots: weighted(map[string]string{"A": "1"}, map[string]string{"B": "2"}),
			quorum:  1, threshold: "0.5",
			totals:   map[string]string{"A": "1", "B": "1", "C": "0"},
			rendered: map[string]string{"A": "1", "B": "1", "C": "0"},
			leader:   "A", quorumMet: true, passing: false, // tie: the option listed first leads
		},
		{
			name:    "scale does not matter",
			ballots: weighted(map[string]string{"A": "1000000", "C": "3000000"}, map[string]string{"A": "0.000001", "C": "0.000003"}),
			quorum:  2, threshold: "0.7",
			totals:   map[string]string{"A": "1/2", "B": "0", "C": "3/2"},
			rendered: map[string]string{"A": "0.5", "B": "0", "C": "1.5"},
			leader:   "C", quorumMet: true, passing: true, // 3/4 > 0.7
		},
		{
			name:    "without quorum",
			ballots: weighted(map[string]string{"A": "1"}),
			quorum:  2, threshold: "0.5",
			totals:   map[string]string{"A": "1", "B": "0", "C": "0"},
			rendered: map[string]string{"A": "1", "B": "0", "C": "0"},
			leader:   "A", quorumMet: false, passing: false,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rules := Rules{Mode: schemas.VoteModeWeighted, Options: []string{"A", "B", "C"}, Quorum: tt.quorum, Threshold: rat(tt.threshold)}
			res := Tally(rules, tt.ballots)
			v := res.View(rules)
			sum := new(big.Rat)
			for o, want := range tt.totals {
				if res.Totals[o].Cmp(rat(want)) != 0 {
					t.Fatalf("%s = %v, want %s", o, res.Totals[o], want)
				}
				if got := v.TallyNow[o].(json.Number); string(got) != tt.rendered[o] {
					t.Fatalf("%s rendered %s, want %s", o, got, tt.rendered[o])
				}
				sum.Add(sum, res.Totals[o])
			}
			if sum.Cmp(big.NewRat(int64(len(tt.ballots)), 1)) != 0 {
				t.Fatalf("totals add up to %v, not the ballot count %d", sum, len(tt.ballots))
			}
			if res.Leader != tt.leader || res.QuorumMet != tt.quorumMet || res.Passing != tt.passing {
				t.Fatalf("leader %q quorumMet %v passing %v", res.Leader, res.QuorumMet, res.Passing)
			}
		})
	}
}

func TestRatNumber(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"0": "0", "5": "5", "1/2": "0.5", "2/3": "0.666667", "1/3": "0.333333",
		"9999999/10000000": "1", "1/8": "0.125", "-1/2": "-0.5"} {
		if got := RatNumber(rat(in)); string(got) != want {
			t.Errorf("RatNumber(%s) = %s, want %s", in, got, want)
		}
	}
}
