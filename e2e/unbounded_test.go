package e2e

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestUnboundedReadsAndWrites: artifact comments come a page at a time
// (social and /comments, { items, nextCursor }); the partner API's offset
// stops at 1000 and nextCursor pages on; the sitemap follows a closed
// vacancy at once; signed payloads are kept within a per-user budget.
func TestUnboundedReadsAndWrites(t *testing.T) {
	p := shared(t)
	u := p.Register(t, "unbounded")

	// Comments, a page at a time.
	art := p.Post(t, "/api/planet/constitution-artifacts", u.Token, map[string]any{"title": "Paged",
		"sliders": sliderBody([8]int{10, 20, 30, 40, 50, 60, 70, 80})})
	if art.Status != http.StatusCreated {
		t.Fatalf("artifact: %d %s", art.Status, art.Body)
	}
	base := "/api/planet/constitution-artifacts/" + art.JSON(t)["id"].(string)
	for _, text := range []string{"one", "two", "three"} {
		if r := p.Post(t, base+"/comment", u.Token, map[string]any{"text": text}); r.Status != http.StatusCreated {
			t.Fatalf("comment: %d %s", r.Status, r.Body)
		}
	}
	var social struct {
		Comments []struct {
			Text string `json:"text"`
		} `json:"comments"`
		NextCursor *string `json:"nextCursor"`
	}
	p.Get(t, base+"/social?limit=2", "").Decode(t, &social)
	if len(social.Comments) != 2 || social.Comments[0].Text != "one" || social.NextCursor == nil {
		t.Fatalf("first page of social: %+v", social)
	}
	var page struct {
		Items []struct {
			Text string `json:"text"`
		} `json:"items"`
		NextCursor *string `json:"nextCursor"`
	}
	p.Get(t, base+"/comments?limit=2&cursor="+url.QueryEscape(*social.NextCursor), "").Decode(t, &page)
	if len(page.Items) != 1 || page.Items[0].Text != "three" || page.NextCursor != nil {
		t.Fatalf("second page of comments: %+v", page)
	}

	// Partner API: offset capped, cursor beyond.
	city := buildCity("unbounded")
	proj := buildProject(t, p, u, "unbounded")
	v1 := buildVacancy(t, p, u, proj, map[string]any{"city": city, "title": "First"})
	buildVacancy(t, p, u, proj, map[string]any{"city": city, "title": "Second"})
	_, key := buildKey(t, p, u)
	if r := buildPartner(t, p, "/vacancies?offset=1001", key); r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("offset past the cap: %d %s", r.Status, r.Body)
	}
	var list struct {
		Data struct {
			Items []struct {
				Title string `json:"title"`
			} `json:"items"`
			Total      int     `json:"total"`
			NextCursor *string `json:"nextCursor"`
		} `json:"data"`
	}
	buildPartner(t, p, "/vacancies?limit=1&city="+url.QueryEscape(city), key).Decode(t, &list)
	if len(list.Data.Items) != 1 || list.Data.Items[0].Title != "Second" || list.Data.Total != 2 || list.Data.NextCursor == nil {
		t.Fatalf("first partner page: %+v", list.Data)
	}
	cursor := *list.Data.NextCursor
	list.Data.NextCursor = nil
	buildPartner(t, p, "/vacancies?limit=1&city="+url.QueryEscape(city)+"&cursor="+url.QueryEscape(cursor), key).Decode(t, &list)
	if len(list.Data.Items) != 1 || list.Data.Items[0].Title != "First" || list.Data.Total != 2 || list.Data.NextCursor != nil {
		t.Fatalf("cursor page: %+v", list.Data)
	}

	// The sitemap follows a change at once (its cache is per change).
	id := v1["id"].(string)
	if r := p.Get(t, "/sitemap.xml", ""); !strings.Contains(string(r.Body), "/build/vacancies/"+id) {
		t.Fatalf("sitemap lacks the open vacancy %s", id)
	}
	if r := p.Post(t, "/api/build/vacancies/"+id+"/close", u.Token, nil); r.Status != http.StatusOK {
		t.Fatalf("close: %d %s", r.Status, r.Body)
	}
	if r := p.Get(t, "/sitemap.xml", ""); strings.Contains(string(r.Body), "/build/vacancies/"+id) {
		t.Fatalf("sitemap still names the closed vacancy %s", id)
	}

	// Signed payloads: 1 MiB per user within the retention.
	big := strings.Repeat("x", 400_000)
	for i := range 3 {
		r := p.Post(t, "/api/sign/sign", u.Token, map[string]any{"payload": map[string]any{"n": i, "blob": big}})
		if i < 2 && r.Status != http.StatusCreated {
			t.Fatalf("sign %d: %d %s", i, r.Status, r.Body)
		}
		if i == 2 && (r.Status != http.StatusTooManyRequests || r.JSON(t)["error"] != "rate_limited" || r.Header.Get("Retry-After") == "") {
			t.Fatalf("sign past the budget: %d %s", r.Status, r.Body)
		}
	}
}
