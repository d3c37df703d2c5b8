package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fintech/platform/e2e/harness"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/topics"
)

// TestPartnerRails drives the three partner receivers and the read
// endpoints over HTTP against the real binary.
func TestPartnerRails(t *testing.T) {
	p := startPartnerPlatform(t, nil)

	t.Run("royalty with HMAC, replay and events", func(t *testing.T) {
		u := verifiedUser(t, p, "royalty")
		eventID := uniqueID("roy")
		body := map[string]any{"eventId": eventID, "email": strings.ToUpper(u.Email), "productKey": "book-42", "period": "2030-01", "amount": 1500}
		first := wantStatus(t, "first delivery", signedDelivery(t, p, rightsHook, body), http.StatusCreated)
		if first["replayed"] != false || first["eventId"] != eventID || first["id"] == "" || first["amount"] != 1500.0 {
			t.Fatalf("first = %v", first)
		}
		paidAt, err := time.Parse(time.RFC3339, first["paidAt"].(string))
		if err != nil || paidAt.Location() != time.UTC || len(first["paidAt"].(string)) != len("2006-01-02T15:04:05Z") {
			t.Fatalf("paidAt %v: %v", first["paidAt"], err)
		}
		// A replay (even with another amount) records nothing and answers the first record.
		body["amount"] = 9999
		again := wantStatus(t, "replay", signedDelivery(t, p, rightsHook, body), http.StatusOK)
		if again["replayed"] != true || again["id"] != first["id"] || again["amount"] != 1500.0 || again["paidAt"] != first["paidAt"] {
			t.Fatalf("replay = %v, first = %v", again, first)
		}
		list := wantStatus(t, "royalties", p.Get(t, "/api/rights/royalties", u.Token), http.StatusOK)
		items := list["items"].([]any)
		if list["total"] != 1.0 || len(items) != 1 || list["nextCursor"] != nil {
			t.Fatalf("royalties = %v", list)
		}
		it := items[0].(map[string]any)
		for k, want := range map[string]any{"id": first["id"], "productKey": "book-42", "period": "2030-01", "amount": 1500.0, "paidAt": first["paidAt"], "eventId": eventID} {
			if it[k] != want {
				t.Fatalf("royalty %s = %v, want %v (%v)", k, it[k], want, it)
			}
		}
		env := findRecord(t, p, topics.EventsPartner, 20*time.Second, func(e schemas.Envelope) bool {
			return e.Type == schemas.TypeRoyaltyRecorded && strings.Contains(string(e.Data), eventID)
		})
		var data schemas.RoyaltyRecorded
		if err := json.Unmarshal(env.Data, &data); err != nil || data.UserID != u.ID || data.Email != strings.ToLower(u.Email) || env.Key != data.Email {
			t.Fatalf("event %+v data %+v: %v", env, data, err)
		}
	})

	t.Run("concurrent duplicate deliveries record once", func(t *testing.T) {
		u := verifiedUser(t, p, "dup")
		body := map[string]any{"eventId": uniqueID("dup"), "email": u.Email, "artifactVersionId": "av-1", "amount": 70}
		raw, _ := json.Marshal(body)
		headers := hmacHeaders(raw, time.Now(), "")
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			statuses = map[int]int{}
			ids      = map[string]bool{}
		)
		for i := 0; i < 20; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := deliver(t, p, certHook, raw, headers)
				mu.Lock()
				defer mu.Unlock()
				statuses[r.Status]++
				var out struct{ ID string }
				_ = json.Unmarshal(r.Body, &out)
				ids[out.ID] = true
			}()
		}
		wg.Wait()
		if statuses[http.StatusCreated] != 1 || statuses[http.StatusOK] != 19 || len(ids) != 1 {
			t.Fatalf("statuses %v ids %v", statuses, ids)
		}
		list := wantStatus(t, "payouts", p.Get(t, "/api/cert/payouts", u.Token), http.StatusOK)
		if list["total"] != 1.0 {
			t.Fatalf("payouts = %v", list)
		}
	})

	t.Run("podium partial replay", func(t *testing.T) {
		a, b, c := verifiedUser(t, p, "gold"), verifiedUser(t, p, "silver"), verifiedUser(t, p, "bronze")
		tid := uniqueID("tour")
		first := wantStatus(t, "podium", signedDelivery(t, p, chessHook, map[string]any{"tournamentId": tid, "podium": []any{
			map[string]any{"email": a.Email, "place": 1, "amount": 5000},
			map[string]any{"email": b.Email, "place": 2, "amount": 3000},
		}}), http.StatusCreated)
		if len(first["recorded"].([]any)) != 2 || len(first["replayed"].([]any)) != 0 || first["tournamentId"] != tid {
			t.Fatalf("first = %v", first)
		}
		mixed := wantStatus(t, "podium again with a new place", signedDelivery(t, p, chessHook, map[string]any{"tournamentId": tid, "podium": []any{
			map[string]any{"email": b.Email, "place": 2, "amount": 3000},
			map[string]any{"email": c.Email, "place": 3, "amount": 1000},
		}}), http.StatusCreated)
		rec, rep := mixed["recorded"].([]any), mixed["replayed"].([]any)
		if len(rec) != 1 || rec[0].(map[string]any)["place"] != 3.0 || len(rep) != 1 || rep[0].(map[string]any)["place"] != 2.0 {
			t.Fatalf("mixed = %v", mixed)
		}
		if mixed["finalizedAt"] != first["finalizedAt"] {
			t.Fatalf("finalizedAt %v, first %v", mixed["finalizedAt"], first["finalizedAt"])
		}
		all := wantStatus(t, "podium replay", signedDelivery(t, p, chessHook, map[string]any{"tournamentId": tid, "podium": []any{
			map[string]any{"email": a.Email, "place": 1, "amount": 5000},
			map[string]any{"email": c.Email, "place": 3, "amount": 1000},
		}}), http.StatusOK)
		if len(all["recorded"].([]any)) != 0 || len(all["replayed"].([]any)) != 2 {
			t.Fatalf("all replayed = %v", all)
		}
		res := wantStatus(t, "results", p.Get(t, "/api/chess/results", b.Token), http.StatusOK)
		items := res["items"].([]any)
		if res["total"] != 1.0 || items[0].(map[string]any)["tournamentId"] != tid || items[0].(map[string]any)["place"] != 2.0 ||
			items[0].(map[string]any)["amount"] != 3000.0 || items[0].(map[string]any)["finalizedAt"] != first["finalizedAt"] {
			t.Fatalf("results = %v", res)
		}
	})

	t.Run("legacy headers", func(t *testing.T) {
		u := verifiedUser(t, p, "legacy")
		for _, tc := range []struct {
			path, header, secret string
			body                 map[string]any
		}{
			{rightsHook, "X-Rights-Secret", partnerRights, map[string]any{"eventId": uniqueID("l"), "email": u.Email, "productKey": "p", "period": "q", "amount": 1}},
			{chessHook, "X-Chess-Secret", partnerChess, map[string]any{"tournamentId": uniqueID("l"), "podium": []any{map[string]any{"email": u.Email, "place": 1, "amount": 2}}}},
			{certHook, "X-Cert-Secret", partnerCert, map[string]any{"eventId": uniqueID("l"), "email": u.Email, "artifactVersionId": "a", "amount": 3}},
		} {
			raw, _ := json.Marshal(tc.body)
			wantBody(t, tc.path+" wrong legacy secret", deliver(t, p, tc.path, raw, map[string]string{tc.header: tc.secret + "x"}),
				http.StatusUnauthorized, `{"error":"signature_invalid","message":"bad signature"}`)
			other := map[string]string{"X-Rights-Secret": partnerRights, "X-Chess-Secret": partnerChess, "X-Cert-Secret": partnerCert}
			delete(other, tc.header)
			wantBody(t, tc.path+" another rail's secret", deliver(t, p, tc.path, raw, other),
				http.StatusUnauthorized, `{"error":"signature_invalid","message":"bad signature"}`)
			wantStatus(t, tc.path+" legacy", deliver(t, p, tc.path, raw, map[string]string{tc.header: tc.secret}), http.StatusCreated)
			wantStatus(t, tc.path+" legacy replay", deliver(t, p, tc.path, raw, map[string]string{tc.header: tc.secret}), http.StatusOK)
		}
		e := wantStatus(t, "earnings", p.Get(t, "/api/ecosystem/earnings", u.Token), http.StatusOK)
		if tot := e["totals"].(map[string]any); tot["rights"] != 1.0 || tot["chess"] != 2.0 || tot["planet"] != 3.0 || tot["all"] != 6.0 {
			t.Fatalf("earnings = %v", e)
		}
	})

	t.Run("forged, stale and re-serialised bodies", func(t *testing.T) {
		raw := []byte(`{"eventId":"` + uniqueID("f") + `","email":"forge@example.com","productKey":"p","period":"q","amount":5}`)
		bad := `{"error":"signature_invalid","message":"bad signature"}`
		skew := `{"error":"signature_invalid","message":"timestamp skew"}`
		wantBody(t, "no signature", deliver(t, p, rightsHook, raw, nil), http.StatusUnauthorized, bad)
		h := hmacHeaders(raw, time.Now(), "sha256=")
		h["X-Platform-Signature"] = strings.Replace(h["X-Platform-Signature"], "sha256=", "sha256=00", 1)[:71]
		wantBody(t, "forged", deliver(t, p, rightsHook, raw, h), http.StatusUnauthorized, bad)
		wantBody(t, "stale", deliver(t, p, rightsHook, raw, hmacHeaders(raw, time.Now().Add(-10*time.Minute), "")), http.StatusUnauthorized, skew)
		wantBody(t, "future", deliver(t, p, rightsHook, raw, hmacHeaders(raw, time.Now().Add(10*time.Minute), "")), http.StatusUnauthorized, skew)
		// Signed over the sorted-key serialisation, sent with another key order.
		var v map[string]any
		_ = json.Unmarshal(raw, &v)
		sorted, _ := json.Marshal(v)
		reordered := []byte(`{"amount":5,` + strings.TrimPrefix(string(raw), "{")[:strings.LastIndex(strings.TrimPrefix(string(raw), "{"), `,"amount"`)] + `}`)
		wantBody(t, "re-serialised", deliver(t, p, rightsHook, reordered, hmacHeaders(sorted, time.Now(), "sha256=")), http.StatusUnauthorized, bad)
		// Upper-case hex and prefix are accepted: the bytes as received are what is signed.
		up := hmacHeaders(raw, time.Now(), "")
		up["X-Platform-Signature"] = "SHA256=" + strings.ToUpper(up["X-Platform-Signature"])
		wantStatus(t, "upper-case signature", deliver(t, p, rightsHook, raw, up), http.StatusCreated)
	})

	t.Run("a record for an e-mail that registers afterwards", func(t *testing.T) {
		email := uniqueEmail("late")
		mixed := strings.ToUpper(email[:1]) + email[1:]
		wantStatus(t, "royalty", signedDelivery(t, p, rightsHook, map[string]any{"eventId": uniqueID("late"), "email": mixed, "productKey": "song", "period": "2030-02", "amount": 100}), http.StatusCreated)
		wantStatus(t, "royalty 2", signedDelivery(t, p, rightsHook, map[string]any{"eventId": uniqueID("late"), "email": email, "productKey": "song", "period": "2030-03", "amount": 250}), http.StatusCreated)
		wantStatus(t, "podium", signedDelivery(t, p, chessHook, map[string]any{"tournamentId": uniqueID("late"), "podium": []any{map[string]any{"email": email, "place": 1, "amount": 4000}}}), http.StatusCreated)
		wantStatus(t, "cert", signedDelivery(t, p, certHook, map[string]any{"eventId": uniqueID("late"), "email": email, "artifactVersionId": "av-a", "amount": 30}), http.StatusCreated)
		wantStatus(t, "cert 2", signedDelivery(t, p, certHook, map[string]any{"eventId": uniqueID("late"), "email": email, "artifactVersionId": "av-a", "amount": 20}), http.StatusCreated)
		wantStatus(t, "cert 3", signedDelivery(t, p, certHook, map[string]any{"eventId": uniqueID("late"), "email": email, "artifactVersionId": "av-b", "amount": 10}), http.StatusCreated)

		u := p.RegisterEmail(t, strings.ToUpper(email))
		// Records kept for an address are shown only once its owner verified it:
		// registering someone else's address reveals nothing.
		wantStatus(t, "unverified earnings", p.Get(t, "/api/ecosystem/earnings", u.Token), http.StatusForbidden)
		wantStatus(t, "unverified royalties", p.Get(t, "/api/rights/royalties", u.Token), http.StatusForbidden)
		p.VerifyEmail(t, u)
		roy := wantStatus(t, "royalties", p.Get(t, "/api/rights/royalties?limit=1", u.Token), http.StatusOK)
		cursor, _ := roy["nextCursor"].(string)
		if roy["total"] != 2.0 || len(roy["items"].([]any)) != 1 || cursor == "" {
			t.Fatalf("royalties page 1 = %v", roy)
		}
		roy2 := wantStatus(t, "royalties page 2", p.Get(t, "/api/rights/royalties?limit=1&cursor="+cursor, u.Token), http.StatusOK)
		// Ids are ksuids: newest first to the second, so either order within one second.
		amounts := []any{roy["items"].([]any)[0].(map[string]any)["amount"], nil}
		if items := roy2["items"].([]any); len(items) == 1 {
			amounts[1] = items[0].(map[string]any)["amount"]
		}
		if roy2["nextCursor"] != nil || !(amounts[0] == 250.0 && amounts[1] == 100.0 || amounts[0] == 100.0 && amounts[1] == 250.0) {
			t.Fatalf("royalties page 2 = %v", roy2)
		}
		stats := wantStatus(t, "cert stats", p.Get(t, "/api/cert/stats", u.Token), http.StatusOK)
		if stats["totalArtifacts"] != 2.0 || stats["verifiedCount"] != 3.0 || stats["trustWeight"] != 1.5 {
			t.Fatalf("stats = %v", stats)
		}
		e := wantStatus(t, "earnings", p.Get(t, "/api/ecosystem/earnings", u.Token), http.StatusOK)
		tot := e["totals"].(map[string]any)
		if tot["rights"] != 350.0 || tot["chess"] != 4000.0 || tot["planet"] != 60.0 || tot["all"] != 4410.0 {
			t.Fatalf("totals = %v", tot)
		}
		per := e["perSource"].([]any)
		want := []struct {
			source        string
			amount, count float64
		}{{"qright", 350, 2}, {"cyberchess", 4000, 1}, {"planet", 60, 3}}
		if len(per) != 3 {
			t.Fatalf("perSource = %v", per)
		}
		for i, w := range want {
			s := per[i].(map[string]any)
			last, _ := s["last"].(string)
			if _, err := time.Parse(time.RFC3339, last); s["source"] != w.source || s["amount"] != w.amount || s["count"] != w.count || err != nil || !strings.HasSuffix(last, "Z") {
				t.Fatalf("perSource[%d] = %v, want %+v", i, s, w)
			}
		}
		// Another user sees none of it.
		other := verifiedUser(t, p, "other")
		e = wantStatus(t, "other earnings", p.Get(t, "/api/ecosystem/earnings", other.Token), http.StatusOK)
		if e["totals"].(map[string]any)["all"] != 0.0 || e["perSource"].([]any)[0].(map[string]any)["last"] != nil {
			t.Fatalf("other's earnings = %v", e)
		}
		for _, path := range []string{"/api/rights/royalties", "/api/chess/results", "/api/cert/payouts"} {
			l := wantStatus(t, path, p.Get(t, path, other.Token), http.StatusOK)
			if l["total"] != 0.0 || len(l["items"].([]any)) != 0 || l["nextCursor"] != nil {
				t.Fatalf("%s for another user = %v", path, l)
			}
		}
	})

	t.Run("tournaments and the public schedule", func(t *testing.T) {
		soon, full, past := uniqueID("soon"), uniqueID("full"), uniqueID("past")
		starts := time.Now().Add(time.Hour).UTC().Truncate(time.Second).Format(time.RFC3339)
		pub := func(id, startsAt string, capacity, entries int) harness.Response {
			return signedDelivery(t, p, tournamentHook, map[string]any{"id": id, "startsAt": startsAt, "format": "swiss", "prizePool": 100000, "capacity": capacity, "entries": entries})
		}
		created := wantStatus(t, "publish", pub(soon, starts, 32, 10), http.StatusCreated)
		if created["startsAt"] != starts || created["replayed"] != false {
			t.Fatalf("created = %v", created)
		}
		if r := wantStatus(t, "republish unchanged", pub(soon, starts, 32, 10), http.StatusOK); r["replayed"] != true {
			t.Fatalf("replay = %v", r)
		}
		if r := wantStatus(t, "update entries", pub(soon, starts, 32, 11), http.StatusOK); r["replayed"] != false || r["entries"] != 11.0 {
			t.Fatalf("update = %v", r)
		}
		wantStatus(t, "full", pub(full, starts, 8, 8), http.StatusCreated)
		wantStatus(t, "past", pub(past, time.Now().Add(-time.Hour).UTC().Format(time.RFC3339), 8, 0), http.StatusCreated)
		up := wantStatus(t, "upcoming", p.Get(t, "/api/chess/upcoming?limit=200", ""), http.StatusOK)
		seen := map[string]map[string]any{}
		for _, it := range up["items"].([]any) {
			m := it.(map[string]any)
			seen[m["id"].(string)] = m
		}
		if s := seen[soon]; s == nil || s["entries"] != 11.0 || s["capacity"] != 32.0 || s["prizePool"] != 100000.0 || s["format"] != "swiss" || s["startsAt"] != starts {
			t.Fatalf("upcoming lacks %s: %v", soon, up)
		}
		if seen[full] != nil || seen[past] != nil {
			t.Fatalf("upcoming lists a full or past tournament: %v", up)
		}
		// A startsAt sent with milliseconds comes back with them (issue 25).
		precise := uniqueID("ms")
		msStarts := time.Now().Add(2 * time.Hour).UTC().Truncate(time.Second).Add(123 * time.Millisecond).Format("2006-01-02T15:04:05.000Z")
		if r := wantStatus(t, "publish with milliseconds", pub(precise, msStarts, 16, 0), http.StatusCreated); r["startsAt"] != msStarts {
			t.Fatalf("startsAt %v, sent %s", r["startsAt"], msStarts)
		}
		if r := wantStatus(t, "republish with milliseconds", pub(precise, msStarts, 16, 0), http.StatusOK); r["replayed"] != true {
			t.Fatalf("the same millisecond startsAt is not a replay: %v", r)
		}
		up = wantStatus(t, "upcoming", p.Get(t, "/api/chess/upcoming?limit=200", ""), http.StatusOK)
		found := false
		for _, it := range up["items"].([]any) {
			if m := it.(map[string]any); m["id"] == precise {
				found = m["startsAt"] == msStarts
			}
		}
		if !found {
			t.Fatalf("upcoming does not show %s starting at %s: %v", precise, msStarts, up)
		}
	})

	t.Run("bad input never 500", func(t *testing.T) {
		podium := make([]any, 101)
		for i := range podium {
			podium[i] = map[string]any{"email": fmt.Sprintf("p%d@example.com", i), "place": i + 1, "amount": 1}
		}
		for _, tc := range []struct {
			name, path string
			body       []byte
			status     int
			code       string
		}{
			{"array", rightsHook, []byte(`[1]`), 400, "invalid_json"},
			{"malformed", certHook, []byte(`{"eventId":`), 400, "invalid_json"},
			{"negative", rightsHook, []byte(`{"eventId":"x","email":"a@example.com","productKey":"p","period":"q","amount":-1}`), 422, "validation_failed"},
			{"fraction", certHook, []byte(`{"eventId":"x","email":"a@example.com","artifactVersionId":"a","amount":1.5}`), 422, "validation_failed"},
			{"bad e-mail", certHook, []byte(`{"eventId":"x","email":"nope","artifactVersionId":"a","amount":1}`), 422, "validation_failed"},
			{"missing fields", rightsHook, []byte(`{}`), 422, "validation_failed"},
			{"huge podium", chessHook, func() []byte { b, _ := json.Marshal(map[string]any{"tournamentId": "t", "podium": podium}); return b }(), 422, "validation_failed"},
			{"NUL", chessHook, []byte(`{"tournamentId":"t\u0000","podium":[{"email":"a@example.com","place":1,"amount":1}]}`), 422, "validation_failed"},
		} {
			r := deliver(t, p, tc.path, tc.body, hmacHeaders(tc.body, time.Now(), ""))
			if r.Status != tc.status || r.JSON(t)["error"] != tc.code {
				t.Errorf("%s: %d %s, want %d %s", tc.name, r.Status, r.Body, tc.status, tc.code)
			}
		}
		for _, path := range []string{"/api/rights/royalties", "/api/chess/results", "/api/cert/payouts", "/api/cert/stats", "/api/ecosystem/earnings"} {
			if r := p.Get(t, path, ""); r.Status != http.StatusUnauthorized || r.JSON(t)["error"] != "auth_required" {
				t.Errorf("%s without a token: %d %s", path, r.Status, r.Body)
			}
		}
		u := verifiedUser(t, p, "cursor")
		for _, cur := range []string{"%25%25", "AAAA", "LS0t"} { // not base64; NULs; "---"
			if r := p.Get(t, "/api/rights/royalties?cursor="+cur, u.Token); r.Status != http.StatusBadRequest || r.JSON(t)["error"] != "invalid_cursor" {
				t.Errorf("bad cursor %s: %d %s", cur, r.Status, r.Body)
			}
		}
	})

	t.Run("signed hostile bodies on every route never 500", func(t *testing.T) {
		u := verifiedUser(t, p, "fuzz")
		bodies := [][]byte{
			[]byte(`not json`), []byte(`[]`), []byte(`{}`), []byte(`null`), []byte(`"s"`), []byte(`{"podium":[null]}`),
			[]byte(`{"podium":[1,"x",{}],"tournamentId":{"a":1}}`),
			[]byte(`{"eventId":"` + strings.Repeat("e", 5000) + `","email":"` + strings.Repeat("a", 300) + `@example.com","amount":1e300}`),
			[]byte("{\"eventId\":\"\xff\xfe\",\"email\":\"a@example.com\",\"amount\":1}"),
			[]byte(`{"id":"t","startsAt":"2031-13-45T99:00:00Z","format":5,"prizePool":-1,"capacity":1e3,"entries":-1}`),
			[]byte(`{"id":"t","startsAt":"2031-01-01T00:00:00Z","format":"x","prizePool":1,"capacity":99999999999999999999,"entries":0}`),
			[]byte(`{"eventId":"x","email":"a@example.com","productKey":"p","period":"q","amount":9223372036854775807}`),
			[]byte(strings.Repeat("[", 10000) + strings.Repeat("]", 10000)),
		}
		sent := 0
		for _, prefix := range []string{"/api/rights", "/api/chess", "/api/cert", "/api/ecosystem"} {
			var doc struct {
				Paths map[string]map[string]any `json:"paths"`
			}
			p.Get(t, prefix+"/openapi.json", "").Decode(t, &doc)
			for path, methods := range doc.Paths {
				for method := range methods {
					method = strings.ToUpper(method)
					if method == http.MethodGet {
						for _, q := range []string{"?limit=-1", "?limit=abc&cursor=%25%25", "?cursor=AAAA", "?cursor=" + strings.Repeat("A", 400), "?limit=100000"} {
							for _, tok := range []string{"", u.Token, "garbage"} {
								if r := p.Do(t, harness.Request{Method: method, Path: path + q, Token: tok}); r.Status >= 500 {
									t.Errorf("%s %s%s: %d %s", method, path, q, r.Status, r.Body)
								}
								sent++
							}
						}
						continue
					}
					for _, b := range bodies {
						for _, h := range []map[string]string{hmacHeaders(b, time.Now(), "sha256="), {"X-Platform-Signature": "zz", "X-Platform-Timestamp": "-1"}, nil} {
							if r := deliver(t, p, path, b, h); r.Status >= 500 {
								t.Errorf("%s %s %.80q: %d %s", method, path, b, r.Status, r.Body)
							}
							sent++
						}
					}
				}
			}
		}
		if sent < 150 {
			t.Fatalf("only %d requests sent", sent)
		}
	})

	t.Run("health and OpenAPI slices", func(t *testing.T) {
		for _, prefix := range []string{"/api/rights", "/api/chess", "/api/cert", "/api/ecosystem"} {
			if h := wantStatus(t, prefix+"/health", p.Get(t, prefix+"/health", ""), http.StatusOK); h["status"] != "ok" {
				t.Fatalf("%s/health = %v", prefix, h)
			}
			doc := wantStatus(t, prefix+"/openapi.json", p.Get(t, prefix+"/openapi.json", ""), http.StatusOK)
			if paths, _ := doc["paths"].(map[string]any); len(paths) < 3 {
				t.Fatalf("%s/openapi.json paths = %v", prefix, doc["paths"])
			}
		}
		idx := p.Get(t, "/api/platform/openapi.json", "").JSON(t)
		listed := map[string]bool{}
		for _, m := range idx["modules"].([]any) {
			listed[m.(map[string]any)["name"].(string)] = true
		}
		for _, name := range []string{"rights", "chess", "cert", "ecosystem"} {
			if !listed[name] {
				t.Errorf("platform index lacks %s: %v", name, idx["modules"])
			}
		}
	})
}

// TestPartnerRequireHMAC checks that WEBHOOK_REQUIRE_HMAC=1 turns the legacy
// headers off while signed deliveries still pass.
func TestPartnerRequireHMAC(t *testing.T) {
	p := startPartnerPlatform(t, map[string]string{"WEBHOOK_REQUIRE_HMAC": "1"})
	u := verifiedUser(t, p, "strict")
	raw, _ := json.Marshal(map[string]any{"eventId": uniqueID("s"), "email": u.Email, "productKey": "p", "period": "q", "amount": 9})
	wantBody(t, "legacy header", deliver(t, p, rightsHook, raw, map[string]string{"X-Rights-Secret": partnerRights}),
		http.StatusUnauthorized, `{"error":"signature_invalid","message":"bad signature"}`)
	wantStatus(t, "signed", deliver(t, p, rightsHook, raw, hmacHeaders(raw, time.Now(), "sha256=")), http.StatusCreated)
	l := wantStatus(t, "royalties", p.Get(t, "/api/rights/royalties", u.Token), http.StatusOK)
	if l["total"] != 1.0 {
		t.Fatalf("royalties = %v", l)
	}
}
