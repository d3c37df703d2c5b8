package gov

import (
	"encoding/json"
	"math/big"
	"strings"

	"github.com/fintech/platform/schemas"
)

// sharePrecision is how many decimals a non-integral number of a tally is
// rendered with (rounded to nearest, halves away from zero). Decisions
// (quorumMet, passing, eliminations) are taken on the exact rationals, never
// on the rendered values.
const sharePrecision = 6

// Rules are the frozen parameters a proposal is tallied with.
type Rules struct {
	Mode      string
	Options   []string // ranked-choice and weighted, in the proposal's order
	Quorum    int64
	Threshold *big.Rat // 0 < t < 1
}

// Ballot is one voter's ballot as the tally reads it; exactly one of the
// fields is set, matching the mode.
type Ballot struct {
	Choice  string              // yes-no-abstain
	Ranking []string            // ranked-choice: every option once
	Weights map[string]*big.Rat // weighted: a non-empty subset of the options, each > 0
}

// Round is one instant-runoff round: the first-preference count of every
// option still running, and the option eliminated after it (nil in the
// final round).
type Round struct {
	Counts     map[string]int64
	Eliminated *string
}

// Result is an exact tally.
type Result struct {
	Ballots int64
	// Totals is the value of every choice (yes-no-abstain: yes, no,
	// abstain; otherwise every option, ranked-choice as of the final round).
	Totals map[string]*big.Rat
	// Rounds are the instant-runoff rounds, first first (ranked-choice only).
	Rounds []Round
	// Leader is the option with the largest total (ties: the one listed
	// first); empty for yes-no-abstain or without ballots.
	Leader string
	// Share is what passing compares with the threshold: yes / (yes + no),
	// or the leader's total / ballots. Nil when undefined (nothing counted).
	Share     *big.Rat
	QuorumMet bool
	Passing   bool
}

// Tally counts ballots under rules. Ballots must already match the mode
// (the vote handler validates them before they are stored).
func Tally(r Rules, ballots []Ballot) Result {
	res := Result{Ballots: int64(len(ballots)), Totals: map[string]*big.Rat{}}
	res.QuorumMet = res.Ballots >= r.Quorum
	switch r.Mode {
	case schemas.VoteModeYesNoAbstain:
		var yes, no, abstain int64
		for _, b := range ballots {
			switch b.Choice {
			case schemas.ChoiceYes:
				yes++
			case schemas.ChoiceNo:
				no++
			case schemas.ChoiceAbstain:
				abstain++
			}
		}
		res.Totals[schemas.ChoiceYes] = big.NewRat(yes, 1)
		res.Totals[schemas.ChoiceNo] = big.NewRat(no, 1)
		res.Totals[schemas.ChoiceAbstain] = big.NewRat(abstain, 1)
		if yes+no > 0 {
			res.Share = big.NewRat(yes, yes+no)
		}
	case schemas.VoteModeRanked:
		final := instantRunoff(r.Options, ballots, &res)
		for _, o := range r.Options {
			res.Totals[o] = big.NewRat(final[o], 1)
		}
		res.Leader, res.Share = leader(r.Options, res.Totals, res.Ballots)
	case schemas.VoteModeWeighted:
		for _, o := range r.Options {
			res.Totals[o] = new(big.Rat)
		}
		for _, b := range ballots {
			sum := new(big.Rat)
			for _, w := range b.Weights {
				sum.Add(sum, w)
			}
			if sum.Sign() <= 0 {
				continue
			}
			for o, w := range b.Weights {
				if t, ok := res.Totals[o]; ok {
					t.Add(t, new(big.Rat).Quo(w, sum))
				}
			}
		}
		res.Leader, res.Share = leader(r.Options, res.Totals, res.Ballots)
	}
	res.Passing = res.QuorumMet && res.Share != nil && r.Threshold != nil && res.Share.Cmp(r.Threshold) > 0
	return res
}

// leader returns the option with the largest total (ties: listed first) and
// its share of the ballots; nothing without ballots.
func leader(options []string, totals map[string]*big.Rat, ballots int64) (string, *big.Rat) {
	if ballots == 0 || len(options) == 0 {
		return "", nil
	}
	best := options[0]
	for _, o := range options[1:] {
		if totals[o].Cmp(totals[best]) > 0 {
			best = o
		}
	}
	return best, new(big.Rat).Quo(totals[best], big.NewRat(ballots, 1))
}

// instantRunoff counts complete rankings round by round. Counting stops at
// the first round in which one option holds more than half of the ballots;
// otherwise the option with the fewest first preferences is eliminated, a
// tie eliminating the option listed later. It records every round in res
// and returns the final round's counts.
func instantRunoff(options []string, ballots []Ballot, res *Result) map[string]int64 {
	running := make(map[string]bool, len(options))
	for _, o := range options {
		running[o] = true
	}
	total := int64(len(ballots))
	for {
		counts := make(map[string]int64, len(running))
		for o := range running {
			counts[o] = 0
		}
		for _, b := range ballots {
			for _, o := range b.Ranking {
				if running[o] {
					counts[o]++
					break
				}
			}
		}
		round := Round{Counts: counts}
		var top int64
		for _, n := range counts {
			top = max(top, n)
		}
		if total == 0 || 2*top > total || len(running) <= 1 {
			res.Rounds = append(res.Rounds, round)
			return counts
		}
		var out string
		lowest := int64(-1)
		for _, o := range options { // later options win ties for elimination
			if running[o] && (lowest < 0 || counts[o] <= lowest) {
				out, lowest = o, counts[o]
			}
		}
		round.Eliminated = &out
		res.Rounds = append(res.Rounds, round)
		delete(running, out)
	}
}

// View is the JSON shape of a tally: tallyNow as decisions.md defines it
// (a value per choice; ranked-choice adds rounds), with the ballot count,
// the share passing compares, and the two verdicts.
type View = schemas.GovTally

type roundView struct {
	Counts     map[string]int64 `json:"counts"`
	Eliminated *string          `json:"eliminated"`
}

// View renders the result deterministically (map keys sorted by
// encoding/json, numbers by RatNumber).
func (res Result) View(r Rules) View {
	v := View{Ballots: res.Ballots, TallyNow: make(map[string]any, len(res.Totals)+1),
		Quorum: r.Quorum, QuorumMet: res.QuorumMet, Passing: res.Passing}
	if r.Threshold != nil {
		v.Threshold = RatNumber(r.Threshold)
	}
	for k, t := range res.Totals {
		v.TallyNow[k] = RatNumber(t)
	}
	if r.Mode == schemas.VoteModeRanked {
		rounds := make([]roundView, len(res.Rounds))
		for i, rd := range res.Rounds {
			rounds[i] = roundView{Counts: rd.Counts, Eliminated: rd.Eliminated}
		}
		v.TallyNow["rounds"] = rounds
	}
	if res.Leader != "" {
		l := res.Leader
		v.Leader = &l
	}
	if res.Share != nil {
		s := RatNumber(res.Share)
		v.Share = &s
	}
	return v
}

// RatNumber renders r as a JSON number: an integer exactly, any other value
// with at most sharePrecision decimals and no trailing zeros.
func RatNumber(r *big.Rat) json.Number {
	if r.IsInt() {
		return json.Number(r.Num().String())
	}
	s := r.FloatString(sharePrecision)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return json.Number(s)
}
