// Package history records what a client saw of the platform while a
// nemesis injured it — every request with its start, end, status,
// Idempotency-Key and what its answer acknowledged, and every fault with
// its window — and checks that history against what the platform holds
// after the run. The checks are the money properties a client relies on:
//
//   - no 500 (nor any 5xx but 503), ever;
//   - a 503 (or an answer the proxy cut) only between a fault's start and
//     its end plus the recovery bound declared for its kind — each fault's
//     window on its own, never chained through grace periods;
//   - each acknowledged command applied exactly once (its acknowledged id
//     present once; one key never acknowledged as two ids);
//   - each unacknowledged one at most once, and answered after its
//     same-key retry (no key left on a 503 or a cut answer);
//   - a client retrying a 503 as the guide says sees 503s, then success:
//     never a 429 for the key;
//   - one ledger entry per acknowledged source;
//   - the balances conserve what came in;
//   - every webhook event delivered under one event id, each delivery
//     signed (checked at receipt: the signature's timestamp window is
//     300 s, so a long run cannot verify afterwards).
//
// Check returns every violation found; a fast unit test feeds it doctored
// histories and sees each fail.
package history

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// Op is one request and what came back.
type Op struct {
	Method, Path string
	// Key is the request's Idempotency-Key ("" for none).
	Key        string
	Start, End time.Time
	// Status is the HTTP status; 0 when no answer came (a transport error).
	Status int
	Err    string
	// Ack is the id a 2xx answer acknowledged (AckOf), "" when none.
	Ack string
}

// Write reports whether the op is a write.
func (o Op) Write() bool { return o.Method != http.MethodGet && o.Method != http.MethodHead }

// Fault is one injected fault: its kind (the key of its recovery bound),
// the member, when it began and when the member was back.
type Fault struct {
	Kind, Member string
	Start, End   time.Time
}

// History is what a run recorded.
type History struct {
	Ops    []Op
	Faults []Fault
}

// Recorder is an http.RoundTripper that records every request it sends as
// an Op, and the faults the nemesis reports. It reads a 2xx body whole
// before handing it on: not for streams.
type Recorder struct {
	// Base sends the requests (http.DefaultTransport when nil).
	Base http.RoundTripper
	// AckOf names what a 2xx answer acknowledged (DefaultAckOf when nil).
	AckOf func(method, path string, body []byte) string

	mu     sync.Mutex
	ops    []Op
	faults []Fault
}

// RoundTrip sends req and records it; a 2xx body is read (and handed on)
// to note what it acknowledged.
func (r *Recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	base := r.Base
	if base == nil {
		base = http.DefaultTransport
	}
	op := Op{Method: req.Method, Path: req.URL.Path, Key: req.Header.Get("Idempotency-Key"), Start: time.Now()}
	resp, err := base.RoundTrip(req)
	if err == nil && resp.StatusCode >= 200 && resp.StatusCode < 300 {
		var body []byte
		body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		if err == nil {
			ackOf := r.AckOf
			if ackOf == nil {
				ackOf = DefaultAckOf
			}
			op.Ack = ackOf(req.Method, req.URL.Path, body)
		}
	}
	op.End = time.Now()
	if err != nil {
		op.Err = err.Error()
		resp = nil
	} else {
		op.Status = resp.StatusCode
	}
	r.mu.Lock()
	r.ops = append(r.ops, op)
	r.mu.Unlock()
	return resp, err
}

// Fault records a fault.
func (r *Recorder) Fault(f Fault) {
	r.mu.Lock()
	r.faults = append(r.faults, f)
	r.mu.Unlock()
}

// Count is the number of requests recorded.
func (r *Recorder) Count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.ops)
}

// History is a copy of what was recorded.
func (r *Recorder) History() History {
	r.mu.Lock()
	defer r.mu.Unlock()
	return History{Ops: append([]Op(nil), r.ops...), Faults: append([]Fault(nil), r.faults...)}
}

// ackFields are the answer fields that name what a write created, first
// found wins.
var ackFields = []string{"donationId", "transactionId", "withdrawalId", "depositId", "id"}

// DefaultAckOf reads the id a JSON answer names: the first of donationId,
// transactionId, withdrawalId, depositId, id (the id inside a "charge"
// object first), "" when none.
func DefaultAckOf(_, _ string, body []byte) string {
	var m map[string]any
	if json.Unmarshal(body, &m) != nil {
		return ""
	}
	if c, ok := m["charge"].(map[string]any); ok {
		if id, ok := c["id"].(string); ok && id != "" {
			return id
		}
	}
	for _, f := range ackFields {
		if id, ok := m[f].(string); ok && id != "" {
			return id
		}
	}
	return ""
}

// Family is one kind of command and what the platform holds of it after
// the run.
type Family struct {
	Name string
	// Match picks the family's ops (writes only are checked).
	Match func(Op) bool
	// Applied counts the effects present after the run by the id an answer
	// acknowledges (a transaction id, a donation id), every effect of the
	// load's own commands: one the history never acknowledged is an
	// unacknowledged command applied. Nil: not checked.
	Applied map[string]int
	// Ledger counts the ledger entries by source id. Nil: not checked.
	Ledger map[string]int
}

// PathIs matches the writes to one path.
func PathIs(path string) func(Op) bool {
	return func(o Op) bool { return o.Write() && o.Path == path }
}

// PathMatches matches the writes whose path starts with prefix and ends with suffix.
func PathMatches(prefix, suffix string) func(Op) bool {
	return func(o Op) bool {
		return o.Write() && strings.HasPrefix(o.Path, prefix) && strings.HasSuffix(o.Path, suffix)
	}
}

// Equation is a conservation law: Left must equal Right.
type Equation struct {
	Name        string
	Left, Right int64
}

// Delivery is one webhook delivery as the receiver saw it.
type Delivery struct {
	// EventID is the delivery's webhook-id; Subject what the event is
	// about (a transaction id).
	EventID, Subject string
	// Signed: the signatures verified at receipt.
	Signed bool
	At     time.Time
}

// Webhooks is what one endpoint received and should have.
type Webhooks struct {
	Deliveries []Delivery
	// Want are the subjects that must arrive (each as one event id);
	// nothing else may.
	Want map[string]bool
}

// State is what the platform holds after the run.
type State struct {
	Families     []Family
	Conservation []Equation
	// Webhooks is nil when no endpoint was subscribed.
	Webhooks *Webhooks
}

// Bounds are the declared recovery bounds: how long after its end a fault
// of each kind may still cause 503s.
type Bounds map[string]time.Duration

// Violation is one broken property.
type Violation struct {
	Property string // "500", "503-window", "lost-ack", "duplicate", ...
	Detail   string
}

func (v Violation) String() string { return v.Property + ": " + v.Detail }

// Verdict is the outcome of Check.
type Verdict struct {
	Violations []Violation
	// Per fault (index in History.Faults): the 503s and cut answers in its window.
	Unavailable []int
}

// Failed reports whether any property broke.
func (v Verdict) Failed() bool { return len(v.Violations) > 0 }

// Has reports whether a violation of property was found.
func (v Verdict) Has(property string) bool {
	for _, x := range v.Violations {
		if x.Property == property {
			return true
		}
	}
	return false
}

// Properties checked (Violation.Property).
const (
	PropStatus500      = "500"
	PropWindow         = "503-window"
	PropNoBound        = "no-bound"
	PropUnresolved     = "unresolved"
	PropRateLimited    = "429-after-503"
	PropDuplicate      = "duplicate"
	PropLostAck        = "lost-ack"
	PropUnacked        = "unacknowledged-applied"
	PropLedger         = "ledger"
	PropConservation   = "conservation"
	PropUnsigned       = "unsigned-delivery"
	PropEventTwice     = "event-ids"
	PropMissingEvent   = "missing-event"
	PropUnexpectedHook = "unexpected-event"
)

// Check checks h against s with the recovery bounds b.
func Check(h History, s State, b Bounds) Verdict {
	var v Verdict
	add := func(prop, format string, args ...any) {
		v.Violations = append(v.Violations, Violation{Property: prop, Detail: fmt.Sprintf(format, args...)})
	}
	v.Unavailable = make([]int, len(h.Faults))
	for _, f := range h.Faults {
		if _, ok := b[f.Kind]; !ok {
			add(PropNoBound, "fault %s (%s) has no declared recovery bound", f.Kind, f.Member)
		}
	}

	// Statuses: no 5xx but 503; a 503 or a cut answer inside one fault's
	// own window.
	for _, o := range h.Ops {
		switch {
		case o.Status >= 500 && o.Status != http.StatusServiceUnavailable:
			add(PropStatus500, "%s %s at %s: %d", o.Method, o.Path, stamp(o.End), o.Status)
		case o.Status == http.StatusServiceUnavailable || o.Status == 0:
			in := -1
			for i, f := range h.Faults {
				bound, ok := b[f.Kind]
				if ok && !o.End.Before(f.Start) && !o.End.After(f.End.Add(bound)) {
					in = i
					break
				}
			}
			if in < 0 {
				what := "503"
				if o.Status == 0 {
					what = "no answer (" + o.Err + ")"
				}
				add(PropWindow, "%s %s sent %s: %s at %s, outside every fault's window", o.Method, o.Path, stamp(o.Start), what, stamp(o.End))
			} else {
				v.Unavailable[in]++
			}
		}
	}

	// Keys: the attempts of one command, in order. A key is scoped to its
	// endpoint (decisions.md: per user and endpoint): the same key on two
	// paths is two commands.
	byKey := map[string][]Op{}
	for _, o := range h.Ops {
		if o.Key != "" && o.Write() {
			k := o.Method + " " + o.Path + " " + o.Key
			byKey[k] = append(byKey[k], o)
		}
	}
	unresolved := map[string]bool{}
	for key, ops := range byKey {
		sort.Slice(ops, func(i, j int) bool { return ops[i].Start.Before(ops[j].Start) })
		acks := map[string]bool{}
		unavailable := false
		for _, o := range ops {
			switch {
			case o.Status == http.StatusServiceUnavailable || o.Status == 0:
				unavailable = true
			case o.Status == http.StatusTooManyRequests && unavailable:
				add(PropRateLimited, "key %s: 429 at %s on a retry after a 503", key, stamp(o.End))
			case o.Status >= 200 && o.Status < 300 && o.Ack != "":
				acks[o.Ack] = true
			}
		}
		if len(acks) > 1 {
			add(PropDuplicate, "key %s acknowledged as %d different ids %v: applied more than once", key, len(acks), sortedKeys(acks))
		}
		if last := ops[len(ops)-1]; last.Status == http.StatusServiceUnavailable || last.Status == 0 {
			unresolved[key] = true
			add(PropUnresolved, "%s %s key %s: its last attempt (%s) was a 503 or no answer, never answered after a retry", last.Method, last.Path, key, stamp(last.End))
		}
	}

	// Families: each acknowledged id applied exactly once; nothing applied
	// that no answer acknowledged (beyond one per unresolved key); one
	// ledger entry per source.
	for _, fam := range s.Families {
		acked := map[string]bool{}
		unresolvedHere := 0
		for _, o := range h.Ops {
			if !fam.Match(o) {
				continue
			}
			if o.Ack != "" && o.Status >= 200 && o.Status < 300 {
				acked[o.Ack] = true
			}
		}
		for key := range unresolved {
			if ops := byKey[key]; fam.Match(ops[0]) {
				unresolvedHere++
			}
		}
		if fam.Applied != nil {
			for _, id := range sortedKeys(acked) {
				switch n := fam.Applied[id]; {
				case n == 0:
					add(PropLostAck, "%s %s was acknowledged but is not there after the run", fam.Name, id)
				case n > 1:
					add(PropDuplicate, "%s %s applied %d times", fam.Name, id, n)
				}
			}
			var extra []string
			for id, n := range fam.Applied {
				if n > 0 && !acked[id] {
					extra = append(extra, id)
				}
			}
			sort.Strings(extra)
			if len(extra) > unresolvedHere {
				add(PropUnacked, "%s: %d applied that no answer acknowledged (%d keys unresolved), e.g. %v", fam.Name, len(extra),
					unresolvedHere, extra[:min(3, len(extra))])
			}
		}
		if fam.Ledger != nil {
			for _, id := range sortedKeys(acked) {
				if n := fam.Ledger[id]; n != 1 {
					add(PropLedger, "%s %s has %d ledger entries, want 1", fam.Name, id, n)
				}
			}
			for id, n := range fam.Ledger {
				if n > 1 && !acked[id] {
					add(PropLedger, "%s source %s has %d ledger entries, want 1", fam.Name, id, n)
				}
			}
		}
	}

	for _, e := range s.Conservation {
		if e.Left != e.Right {
			add(PropConservation, "%s: %d != %d", e.Name, e.Left, e.Right)
		}
	}

	if w := s.Webhooks; w != nil {
		ids := map[string]map[string]bool{}
		for _, d := range w.Deliveries {
			if !d.Signed {
				add(PropUnsigned, "delivery of event %s (%s) at %s did not verify at receipt", d.EventID, d.Subject, stamp(d.At))
			}
			if ids[d.Subject] == nil {
				ids[d.Subject] = map[string]bool{}
			}
			ids[d.Subject][d.EventID] = true
		}
		for _, sub := range sortedKeys(w.Want) {
			if len(ids[sub]) == 0 {
				add(PropMissingEvent, "%s never reached the endpoint", sub)
			}
		}
		for _, sub := range sortedKeys(ids) {
			if !w.Want[sub] {
				add(PropUnexpectedHook, "the endpoint got %s, not one of its acknowledged subjects", sub)
			}
			if n := len(ids[sub]); n > 1 {
				add(PropEventTwice, "%s reached the endpoint as %d event ids %v", sub, n, sortedKeys(ids[sub]))
			}
		}
	}
	return v
}

// FirstWriteOK is when the first write sent at or after since was answered
// 2xx (zero when none was): the end of a fault's unavailability.
func (h History) FirstWriteOK(since time.Time) time.Time {
	var first time.Time
	for _, o := range h.Ops {
		if o.Write() && !o.Start.Before(since) && o.Status >= 200 && o.Status < 300 && (first.IsZero() || o.End.Before(first)) {
			first = o.End
		}
	}
	return first
}

func stamp(t time.Time) string { return t.Format(time.StampMilli) }

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
