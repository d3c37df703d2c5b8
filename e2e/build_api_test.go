package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fintech/platform/e2e/harness"
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/topics"
)

var buildKeyRe = regexp.MustCompile(`^qb_pk_[A-Za-z0-9_-]{22,}$`)

// TestBuildEmployerAndPartnerAPI posts vacancies as two employers and reads
// them through the partner API: key minting and revocation, filters, paging,
// envelope, the single read, close, and the outbox events.
func TestBuildEmployerAndPartnerAPI(t *testing.T) {
	p := shared(t)
	emp := p.Register(t, "build-emp")
	other := p.Register(t, "build-other")
	city := buildCity("Tbilisi")
	proj := buildProject(t, p, emp, "acme")
	otherProj := buildProject(t, p, other, "globex")

	var ids []string
	for i, skills := range [][]string{{"Go", "SQL"}, {"Rust"}, {"go", "Kafka"}} {
		v := buildVacancy(t, p, emp, proj, map[string]any{"title": fmt.Sprintf("Role %d", i), "city": city, "skills": skills})
		if v["status"] != "OPEN" || v["url"] != p.BaseURL+"/build/vacancies/"+v["id"].(string) {
			t.Fatalf("vacancy %v", v)
		}
		if _, err := time.Parse(time.RFC3339, v["createdAt"].(string)); err != nil || !strings.HasSuffix(v["createdAt"].(string), "Z") {
			t.Fatalf("createdAt %v", v["createdAt"])
		}
		ids = append(ids, v["id"].(string))
	}
	ov := buildVacancy(t, p, other, otherProj, map[string]any{"title": "Other", "city": strings.ToUpper(city), "skills": []string{"SQL"}})
	ids = append(ids, ov["id"].(string))
	newestFirst := []string{ids[3], ids[2], ids[1], ids[0]}

	keyID, key := buildKey(t, p, emp)
	if !buildKeyRe.MatchString(key) {
		t.Fatalf("key %q is not qb_pk_ + 22 or more [A-Za-z0-9_-]", key)
	}
	if r := p.Get(t, "/api/build/partner-keys", emp.Token); r.Status != http.StatusOK || strings.Contains(string(r.Body), key) {
		t.Fatalf("key list %d shows the plaintext or fails: %s", r.Status, r.Body)
	}

	list := func(query string) buildList {
		t.Helper()
		r := buildPartner(t, p, "/vacancies?"+query, key)
		if r.Status != http.StatusOK {
			t.Fatalf("list %s: %d %s", query, r.Status, r.Body)
		}
		var l buildList
		r.Decode(t, &l)
		if !l.Success {
			t.Fatalf("success false: %s", r.Body)
		}
		return l
	}
	same := func(got, want []string) bool { return strings.Join(got, ",") == strings.Join(want, ",") }

	cityQ := "city=" + strings.ToLower(city)
	all := list(cityQ)
	if all.Data.Total != 4 || !same(all.ids(), newestFirst) || all.Data.Limit != 50 || all.Data.Offset != 0 {
		t.Fatalf("city list: total %d ids %v (want %v) limit %d offset %d", all.Data.Total, all.ids(), newestFirst, all.Data.Limit, all.Data.Offset)
	}
	it := all.Data.Items[0]
	if it.Title != "Other" || it.Salary != 50_000_000 || it.SalaryCurrency != "KZT" || it.Project.ID != otherProj ||
		it.Project.Name != "globex" || it.URL != p.BaseURL+"/build/vacancies/"+it.ID || !strings.HasSuffix(it.ExpiresAt, "Z") {
		t.Fatalf("item %+v", it)
	}
	p1, p2 := list(cityQ+"&limit=2&offset=0"), list(cityQ+"&limit=2&offset=2")
	if !same(append(p1.ids(), p2.ids()...), newestFirst) || p2.Data.Total != 4 || p2.Data.Offset != 2 || p2.Data.Limit != 2 {
		t.Fatalf("pages %v + %v", p1.ids(), p2.ids())
	}
	if l := list(cityQ + "&limit=100000"); l.Data.Limit != 200 || l.Data.Total != 4 {
		t.Fatalf("limit not clamped: %d", l.Data.Limit)
	}
	if l := list(cityQ + "&offset=10"); len(l.Data.Items) != 0 || l.Data.Total != 4 {
		t.Fatalf("offset past the end: %+v", l.Data)
	}
	if l := list(cityQ + "&skill=GO"); !same(l.ids(), []string{ids[2], ids[0]}) {
		t.Fatalf("skill go: %v", l.ids())
	}
	if l := list(cityQ + "&skill=sql"); !same(l.ids(), []string{ids[3], ids[0]}) {
		t.Fatalf("skill sql: %v", l.ids())
	}
	if l := list("city=" + city[:len(city)-1]); l.Data.Total != 0 {
		t.Fatalf("city must match exactly: %v", l.ids())
	}
	for _, q := range []string{"limit=0", "limit=-1", "limit=abc", "offset=-1", "offset=x", "offset=99999999999", "limit=1.5", "city=%00"} {
		if r := buildPartner(t, p, "/vacancies?"+q, key); r.Status != http.StatusUnprocessableEntity || r.JSON(t)["error"] != "validation_failed" {
			t.Errorf("%s: %d %s", q, r.Status, r.Body)
		}
	}

	one := buildPartner(t, p, "/vacancies/"+ids[1], key)
	var single struct {
		Success bool `json:"success"`
		Data    struct {
			ID, Title string
			Skills    []string
		} `json:"data"`
	}
	one.Decode(t, &single)
	if one.Status != http.StatusOK || !single.Success || single.Data.ID != ids[1] || single.Data.Title != "Role 1" {
		t.Fatalf("single: %d %s", one.Status, one.Body)
	}
	if r := buildPartner(t, p, "/health", key); r.Status != http.StatusOK || string(r.Body) != `{"apiVersion":"v1","status":"ok"}` && string(r.Body) != `{"status":"ok","apiVersion":"v1"}` {
		t.Fatalf("health: %d %s", r.Status, r.Body)
	}
	for _, bad := range []string{"/vacancies/nope", "/vacancies/" + strings.Repeat("x", 300)} {
		if r := buildPartner(t, p, bad, key); r.Status != http.StatusNotFound {
			t.Errorf("%s: %d %s", bad, r.Status, r.Body)
		}
	}
	// NUL bytes are refused at the edge (decisions.md, Security).
	if r := buildPartner(t, p, "/vacancies/%00", key); r.Status != http.StatusUnprocessableEntity {
		t.Errorf("NUL id: %d %s", r.Status, r.Body)
	}

	// Close: only the owner; the vacancy leaves the feed; closing again is a no-op.
	if r := p.Post(t, "/api/build/vacancies/"+ids[0]+"/close", other.Token, nil); r.Status != http.StatusNotFound {
		t.Fatalf("close by another employer: %d %s", r.Status, r.Body)
	}
	for i := 0; i < 2; i++ {
		r := p.Post(t, "/api/build/vacancies/"+ids[0]+"/close", emp.Token, nil)
		if r.Status != http.StatusOK || r.JSON(t)["status"] != "CLOSED" || r.JSON(t)["closedAt"] == nil {
			t.Fatalf("close %d: %d %s", i, r.Status, r.Body)
		}
	}
	if r := buildPartner(t, p, "/vacancies/"+ids[0], key); r.Status != http.StatusNotFound {
		t.Fatalf("closed vacancy still served: %d", r.Status)
	}
	if l := list(cityQ); l.Data.Total != 3 {
		t.Fatalf("after close total %d", l.Data.Total)
	}
	own := p.Get(t, "/api/build/vacancies", emp.Token)
	if own.Status != http.StatusOK || own.JSON(t)["total"].(float64) != 3 {
		t.Fatalf("own list: %d %s", own.Status, own.Body)
	}

	// Events through the outbox.
	for _, want := range []struct{ typ, id string }{{schemas.TypeVacancyOpened, ids[1]}, {schemas.TypeVacancyClosed, ids[0]}} {
		env := findRecord(t, p, topics.EventsBuild, 30*time.Second, func(e schemas.Envelope) bool {
			var d schemas.VacancyEvent
			return e.Type == want.typ && json.Unmarshal(e.Data, &d) == nil && d.VacancyID == want.id
		})
		var d schemas.VacancyEvent
		_ = json.Unmarshal(env.Data, &d)
		if env.Key != want.id || d.EmployerID != emp.ID || d.ProjectID != proj {
			t.Fatalf("%s event %+v %+v", want.typ, env, d)
		}
	}

	// Keys: missing, malformed, unknown, revoked → 401 key_invalid.
	_, unknown := "", "qb_pk_"+strings.Repeat("A", 43)
	for name, k := range map[string]string{"missing": "", "malformed": "nope", "unknown": unknown, "short": "qb_pk_abc"} {
		r := buildPartner(t, p, "/vacancies", k)
		if r.Status != http.StatusUnauthorized || r.JSON(t)["error"] != "key_invalid" {
			t.Errorf("%s key: %d %s", name, r.Status, r.Body)
		}
		// A missing or malformed key's message names the header (issue 25).
		if msg, _ := r.JSON(t)["message"].(string); (name == "missing" || name == "malformed") && !strings.Contains(msg, "X-Build-Key") {
			t.Errorf("%s key: the message %q does not name X-Build-Key", name, msg)
		}
	}
	if r := p.Do(t, harness.Request{Method: http.MethodDelete, Path: "/api/build/partner-keys/" + keyID, Token: other.Token}); r.Status != http.StatusNotFound {
		t.Fatalf("revoke by another employer: %d %s", r.Status, r.Body)
	}
	rv := p.Do(t, harness.Request{Method: http.MethodDelete, Path: "/api/build/partner-keys/" + keyID, Token: emp.Token})
	if rv.Status != http.StatusOK || rv.JSON(t)["revokedAt"] == nil {
		t.Fatalf("revoke: %d %s", rv.Status, rv.Body)
	}
	for _, path := range []string{"/vacancies", "/vacancies/" + ids[1], "/health"} {
		if r := buildPartner(t, p, path, key); r.Status != http.StatusUnauthorized || r.JSON(t)["error"] != "key_invalid" {
			t.Fatalf("revoked key on %s: %d %s", path, r.Status, r.Body)
		}
	}
}

// TestBuildPartnerCORS checks the preflight answer and the CORS headers of
// real answers (including errors) on the partner API.
func TestBuildPartnerCORS(t *testing.T) {
	p := shared(t)
	emp := p.Register(t, "build-cors")
	_, key := buildKey(t, p, emp)
	pre := p.Do(t, harness.Request{Method: http.MethodOptions, Path: "/api/build/public/v1/vacancies", Headers: map[string]string{
		"Origin": "https://partner.example", "Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "x-build-key",
	}})
	if pre.Status != http.StatusNoContent && pre.Status != http.StatusOK {
		t.Fatalf("preflight status %d %s", pre.Status, pre.Body)
	}
	if got := pre.Header.Get("Access-Control-Allow-Origin"); got != "*" {
		t.Fatalf("preflight Allow-Origin %q", got)
	}
	if m := pre.Header.Get("Access-Control-Allow-Methods"); !strings.Contains(m, "GET") {
		t.Fatalf("preflight Allow-Methods %q", m)
	}
	if h := strings.ToLower(pre.Header.Get("Access-Control-Allow-Headers")); !strings.Contains(h, "x-build-key") {
		t.Fatalf("preflight Allow-Headers %q", h)
	}
	for _, k := range []string{key, ""} {
		r := p.Do(t, harness.Request{Method: http.MethodGet, Path: "/api/build/public/v1/health",
			Headers: map[string]string{"Origin": "https://partner.example", "X-Build-Key": k}})
		if r.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Fatalf("GET with key %q: status %d, Allow-Origin %q", k, r.Status, r.Header.Get("Access-Control-Allow-Origin"))
		}
	}
}

// TestBuildEmployerBadInput sends malformed and hostile vacancy and project
// bodies: each is refused with the documented status, never a 5xx.
func TestBuildEmployerBadInput(t *testing.T) {
	p := shared(t)
	emp := p.Register(t, "build-bad")
	other := p.Register(t, "build-bad-other")
	proj := buildProject(t, p, emp, "bad")
	otherProj := buildProject(t, p, other, "theirs")
	past := time.Now().UTC().Add(-time.Minute).Format(time.RFC3339)
	tests := []struct {
		name   string
		body   any
		status int
		field  string
	}{
		{"ok hostile text is accepted as text", buildVacancyBody(proj, map[string]any{"title": `<script>alert(1)</script>"><img src=x onerror=alert(2)>`,
			"description": `javascript:alert(3) <a href="javascript:alert(4)">x</a>`}), 201, ""},
		{"salary string", buildVacancyBody(proj, map[string]any{"salary": "1000"}), 422, "salary"},
		{"salary fraction", buildVacancyBody(proj, map[string]any{"salary": 10.5}), 422, "salary"},
		{"salary zero", buildVacancyBody(proj, map[string]any{"salary": 0}), 422, "salary"},
		{"salary negative", buildVacancyBody(proj, map[string]any{"salary": -5}), 422, "salary"},
		{"salary huge", buildVacancyBody(proj, map[string]any{"salary": 1e20}), 422, "salary"},
		{"salary missing", buildVacancyBody(proj, map[string]any{"salary": nil}), 422, "salary"},
		{"past expiry", buildVacancyBody(proj, map[string]any{"expiresAt": past}), 422, "expiresAt"},
		{"bad expiry", buildVacancyBody(proj, map[string]any{"expiresAt": "tomorrow"}), 422, "expiresAt"},
		{"expiry number", buildVacancyBody(proj, map[string]any{"expiresAt": 12}), 422, "expiresAt"},
		{"title too long", buildVacancyBody(proj, map[string]any{"title": strings.Repeat("a", 201)}), 422, "title"},
		{"title blank", buildVacancyBody(proj, map[string]any{"title": "  "}), 422, "title"},
		{"title NUL", buildVacancyBody(proj, map[string]any{"title": "a\x00b"}), 422, "title"},
		{"description too long", buildVacancyBody(proj, map[string]any{"description": strings.Repeat("d", 20_001)}), 422, "description"},
		{"currency", buildVacancyBody(proj, map[string]any{"salaryCurrency": "tenge"}), 422, "salaryCurrency"},
		{"skills not array", buildVacancyBody(proj, map[string]any{"skills": "go"}), 422, "skills"},
		{"skills numbers", buildVacancyBody(proj, map[string]any{"skills": []int{1}}), 422, "skills"},
		{"too many skills", buildVacancyBody(proj, map[string]any{"skills": make([]string, 31)}), 422, "skills"},
		{"city missing", buildVacancyBody(proj, map[string]any{"city": nil}), 422, "city"},
		{"unknown project", buildVacancyBody("nope", nil), 404, ""},
		{"malformed project id", buildVacancyBody("../../x", nil), 404, ""},
		{"other employer's project", buildVacancyBody(otherProj, nil), 404, ""},
		{"project id number", buildVacancyBody(proj, map[string]any{"projectId": 5}), 422, "projectId"},
		{"not an object", `[1]`, 400, ""},
		{"malformed json", `{"title":`, 400, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := p.Post(t, "/api/build/vacancies", emp.Token, tt.body)
			if r.Status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tt.status, r.Body)
			}
			if tt.field != "" {
				if f, _ := r.JSON(t)["fields"].(map[string]any); f[tt.field] == nil {
					t.Fatalf("fields lack %s: %s", tt.field, r.Body)
				}
			}
		})
	}
	for name, body := range map[string]any{
		"javascript url": map[string]any{"name": "x", "url": "javascript:alert(1)"},
		"data url":       map[string]any{"name": "x", "url": "data:text/html,<script>alert(1)</script>"},
		"relative url":   map[string]any{"name": "x", "url": "/x"},
		"name missing":   map[string]any{"description": "x"},
		"name too long":  map[string]any{"name": strings.Repeat("n", 201)},
	} {
		if r := p.Post(t, "/api/build/projects", emp.Token, body); r.Status != http.StatusUnprocessableEntity {
			t.Errorf("project %s: %d %s", name, r.Status, r.Body)
		}
	}
	if r := p.Post(t, "/api/build/vacancies", "", buildVacancyBody(proj, nil)); r.Status != http.StatusUnauthorized {
		t.Fatalf("no token: %d", r.Status)
	}
	if r := p.Post(t, "/api/build/vacancies/nope/close", emp.Token, nil); r.Status != http.StatusNotFound {
		t.Errorf("close unknown: %d %s", r.Status, r.Body)
	}
	if r := p.Post(t, "/api/build/vacancies/%ff%00/close", emp.Token, nil); r.Status != http.StatusUnprocessableEntity {
		t.Errorf("close with invalid UTF-8 and NUL: %d %s", r.Status, r.Body)
	}
	if r := p.Do(t, harness.Request{Method: http.MethodDelete, Path: "/api/build/partner-keys/nope", Token: emp.Token}); r.Status != http.StatusNotFound {
		t.Fatalf("revoke unknown key: %d", r.Status)
	}
}

// TestBuildExpiry posts a vacancy that expires in two seconds: it leaves the
// partner feed, its page and the RSS feed once the time passes, shows as
// EXPIRED to its employer, and no longer takes a plan slot.
func TestBuildExpiry(t *testing.T) {
	p := shared(t)
	emp := p.Register(t, "build-expiry")
	_, key := buildKey(t, p, emp)
	proj := buildProject(t, p, emp, "soon")
	city := buildCity("Shortville")
	v := buildVacancy(t, p, emp, proj, map[string]any{"city": city,
		"expiresAt": time.Now().UTC().Add(2 * time.Second).Format(time.RFC3339Nano)})
	id := v["id"].(string)
	if r := buildPartner(t, p, "/vacancies/"+id, key); r.Status != http.StatusOK {
		t.Fatalf("fresh vacancy: %d", r.Status)
	}
	harness.Eventually(t, 15*time.Second, "the vacancy to expire", func() bool {
		return buildPartner(t, p, "/vacancies/"+id, key).Status == http.StatusNotFound
	})
	var l buildList
	buildPartner(t, p, "/vacancies?city="+city, key).Decode(t, &l)
	if l.Data.Total != 0 {
		t.Fatalf("expired vacancy listed: %v", l.ids())
	}
	if r := p.Get(t, "/build/vacancies/"+id, ""); r.Status != http.StatusNotFound {
		t.Fatalf("expired page: %d", r.Status)
	}
	if r := p.Get(t, "/api/build/public/rss/vacancies.xml?city="+city, ""); strings.Contains(string(r.Body), id) {
		t.Fatalf("expired vacancy in RSS")
	}
	own := p.Get(t, "/api/build/vacancies", emp.Token)
	items, _ := own.JSON(t)["items"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["status"] != "EXPIRED" {
		t.Fatalf("employer view: %s", own.Body)
	}
	for i := 0; i < 5; i++ { // the expired one holds no slot of the plan of 5
		buildVacancy(t, p, emp, proj, nil)
	}
}
