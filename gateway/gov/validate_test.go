package gov

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/bind"
	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/gov"
)

func TestBallotValidation(t *testing.T) {
	t.Parallel()
	yna := store.Proposal{VoteMode: schemas.VoteModeYesNoAbstain, Options: []string{}}
	rc := store.Proposal{VoteMode: schemas.VoteModeRanked, Options: []string{"A", "B", "C"}}
	wt := store.Proposal{VoteMode: schemas.VoteModeWeighted, Options: []string{"A", "B", "C"}}
	tests := []struct {
		name  string
		p     store.Proposal
		body  string
		field string // "" = valid
	}{
		{"yes", yna, `{"choice":"yes","reason":"because"}`, ""},
		{"abstain", yna, `{"choice":"abstain"}`, ""},
		{"missing choice", yna, `{}`, "choice"},
		{"unknown choice", yna, `{"choice":"maybe"}`, "choice"},
		{"choice of wrong type", yna, `{"choice":1}`, "choice"},
		{"ranking in yes-no mode", yna, `{"choice":"yes","ranking":["A"]}`, "ranking"},
		{"reason too long", yna, `{"choice":"yes","reason":"` + long(501) + `"}`, "reason"},
		{"reason with NUL", yna, `{"choice":"yes","reason":"a\u0000b"}`, "reason"},
		{"complete ranking", rc, `{"ranking":["C","A","B"]}`, ""},
		{"ranking missing an option", rc, `{"ranking":["C","A"]}`, "ranking"},
		{"ranking repeats an option", rc, `{"ranking":["C","A","A"]}`, "ranking"},
		{"ranking names an unknown option", rc, `{"ranking":["C","A","Z"]}`, "ranking"},
		{"ranking with an extra option", rc, `{"ranking":["C","A","B","D"]}`, "ranking"},
		{"no ranking", rc, `{}`, "ranking"},
		{"choice in ranked mode", rc, `{"choice":"yes","ranking":["C","A","B"]}`, "choice"},
		{"ranking of wrong type", rc, `{"ranking":"A,B,C"}`, "ranking"},
		{"weights subset", wt, `{"weights":{"A":2,"C":0.5}}`, ""},
		{"weights exponent", wt, `{"weights":{"A":1e3}}`, ""},
		{"zero weight", wt, `{"weights":{"A":0,"B":1}}`, "weights.A"},
		{"negative weight", wt, `{"weights":{"A":-1}}`, "weights.A"},
		{"string weight", wt, `{"weights":{"A":"1"}}`, "weights.A"},
		{"huge weight", wt, `{"weights":{"A":1e99}}`, "weights.A"},
		{"unbounded literal", wt, `{"weights":{"A":1e999999999}}`, "weights.A"},
		{"unknown option weight", wt, `{"weights":{"Z":1}}`, "weights"},
		{"empty weights", wt, `{"weights":{}}`, "weights"},
		{"no weights", wt, `{}`, "weights"},
		{"ranking in weighted mode", wt, `{"weights":{"A":1},"ranking":["A","B","C"]}`, "ranking"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var req voteRequest
			err := bind.Decode([]byte(tt.body), &req)
			if err == nil {
				_, err = req.validate(tt.p)
			}
			if tt.field == "" {
				if err != nil {
					t.Fatalf("unexpected %v", err)
				}
				return
			}
			var ae *apierr.Error
			if !errors.As(err, &ae) || ae.Status != 422 || ae.Fields[tt.field] == "" {
				t.Fatalf("got %v (fields %v), want 422 on %s", err, fieldsOf(ae), tt.field)
			}
		})
	}
}

func fieldsOf(ae *apierr.Error) map[string]string {
	if ae == nil {
		return nil
	}
	return ae.Fields
}

func long(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'x'
	}
	return string(b)
}

func TestCreateValidation(t *testing.T) {
	t.Parallel()
	ok := map[string]any{"title": "T", "category": "infra", "voteMode": "yes-no-abstain"}
	with := func(kv ...any) map[string]any {
		m := map[string]any{}
		for k, v := range ok {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(m, kv[i].(string))
			} else {
				m[kv[i].(string)] = kv[i+1]
			}
		}
		return m
	}
	tests := []struct {
		name      string
		body      map[string]any
		field     string
		quorum    int64
		threshold string
	}{
		{"defaults", ok, "", 1, "0.5"},
		{"explicit", with("quorum", 3, "threshold", 0.66, "votingDurationSeconds", 60), "", 3, "0.66"},
		{"threshold exponent", with("threshold", json.Number("25e-2")), "", 1, "0.25"},
		{"ranked with options", with("voteMode", "ranked-choice", "options", []string{"A", "B"}), "", 1, "0.5"},
		{"options ignored for yes-no", with("options", []string{"A"}), "", 1, "0.5"},
		{"missing title", with("title", nil), "title", 0, ""},
		{"title too long", with("title", long(201)), "title", 0, ""},
		{"body too long", with("body", long(20_001)), "body", 0, ""},
		{"category too long", with("category", long(65)), "category", 0, ""},
		{"unknown mode", with("voteMode", "plurality"), "voteMode", 0, ""},
		{"quorum zero", with("quorum", 0), "quorum", 0, ""},
		{"quorum fraction", with("quorum", 1.5), "quorum", 0, ""},
		{"quorum string", with("quorum", "2"), "quorum", 0, ""},
		{"threshold one", with("threshold", 1), "threshold", 0, ""},
		{"threshold zero", with("threshold", 0), "threshold", 0, ""},
		{"threshold string", with("threshold", "0.5"), "threshold", 0, ""},
		{"threshold too precise", with("threshold", json.Number("0.12345678901")), "threshold", 0, ""},
		{"duration zero", with("votingDurationSeconds", 0), "votingDurationSeconds", 0, ""},
		{"duration over a year", with("votingDurationSeconds", 31_536_001), "votingDurationSeconds", 0, ""},
		{"ranked without options", with("voteMode", "ranked-choice"), "options", 0, ""},
		{"weighted with one option", with("voteMode", "weighted", "options", []string{"A"}), "options", 0, ""},
		{"repeated options", with("voteMode", "weighted", "options", []string{"A", "A"}), "options[1]", 0, ""},
		{"empty option", with("voteMode", "weighted", "options", []string{"A", " "}), "options[1]", 0, ""},
		{"option named rounds", with("voteMode", "ranked-choice", "options", []string{"A", "rounds"}), "options[1]", 0, ""},
		{"21 options", with("voteMode", "ranked-choice", "options", make21()), "options", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			raw, _ := json.Marshal(tt.body)
			var req createProposalRequest
			err := bind.DecodeChecked(raw, &req) // with the declared tags, as the server checks them
			var p store.Proposal
			if err == nil {
				p, err = req.validate()
			}
			if tt.field == "" {
				if err != nil || p.Quorum != tt.quorum || p.Threshold != tt.threshold {
					t.Fatalf("got %+v %v", p, err)
				}
				return
			}
			var ae *apierr.Error
			if !errors.As(err, &ae) || ae.Status != 422 || ae.Fields[tt.field] == "" {
				t.Fatalf("got %v (fields %v), want 422 on %s", err, fieldsOf(ae), tt.field)
			}
		})
	}
}

func make21() []string {
	out := make([]string, 21)
	for i := range out {
		out[i] = string(rune('A' + i))
	}
	return out
}
