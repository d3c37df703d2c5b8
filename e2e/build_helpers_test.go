package e2e

import (
	"net/http"
	"testing"
	"time"

	"github.com/fintech/platform/e2e/harness"
)

// buildFuture is an expiry comfortably in the future.
func buildFuture() string { return time.Now().UTC().Add(72 * time.Hour).Format(time.RFC3339) }

// buildProject creates a project of u and returns its id.
func buildProject(t testing.TB, p *harness.Platform, u harness.User, name string) string {
	t.Helper()
	r := p.Post(t, "/api/build/projects", u.Token, map[string]any{"name": name, "description": "About " + name, "city": "Almaty",
		"url": "https://example.com/" + name})
	if r.Status != http.StatusCreated {
		t.Fatalf("create project: %d %s", r.Status, r.Body)
	}
	return r.JSON(t)["id"].(string)
}

// buildVacancyBody is a valid vacancy body for project; over overrides fields.
func buildVacancyBody(project string, over map[string]any) map[string]any {
	b := map[string]any{
		"projectId": project, "title": "Go engineer", "description": "Build the platform.",
		"salary": 50_000_000, "salaryCurrency": "KZT", "skills": []string{"Go", "SQL"}, "city": "Almaty",
		"expiresAt": buildFuture(),
	}
	for k, v := range over {
		if v == nil {
			delete(b, k)
		} else {
			b[k] = v
		}
	}
	return b
}

// buildVacancy posts a vacancy and returns the answer's JSON.
func buildVacancy(t testing.TB, p *harness.Platform, u harness.User, project string, over map[string]any) map[string]any {
	t.Helper()
	r := p.Post(t, "/api/build/vacancies", u.Token, buildVacancyBody(project, over))
	if r.Status != http.StatusCreated {
		t.Fatalf("create vacancy: %d %s", r.Status, r.Body)
	}
	return r.JSON(t)
}

// buildKey mints a partner key of u and returns (id, plaintext).
func buildKey(t testing.TB, p *harness.Platform, u harness.User) (string, string) {
	t.Helper()
	r := p.Post(t, "/api/build/partner-keys", u.Token, map[string]any{})
	if r.Status != http.StatusCreated {
		t.Fatalf("mint key: %d %s", r.Status, r.Body)
	}
	m := r.JSON(t)
	return m["id"].(string), m["key"].(string)
}

// buildPartner is a GET on the partner API with a key.
func buildPartner(t testing.TB, p *harness.Platform, path, key string) harness.Response {
	t.Helper()
	h := map[string]string{}
	if key != "" {
		h["X-Build-Key"] = key
	}
	return p.Do(t, harness.Request{Method: http.MethodGet, Path: "/api/build/public/v1" + path, Headers: h})
}

// buildCity is a city name unique to one test, so that filtered feeds on the
// shared platform hold only that test's vacancies.
func buildCity(prefix string) string {
	return prefix + "-" + time.Now().Format("150405.000000000")
}

type buildList struct {
	Success bool `json:"success"`
	Data    struct {
		Items []struct {
			ID             string   `json:"id"`
			Title          string   `json:"title"`
			Description    string   `json:"description"`
			Salary         int64    `json:"salary"`
			SalaryCurrency string   `json:"salaryCurrency"`
			Skills         []string `json:"skills"`
			City           string   `json:"city"`
			URL            string   `json:"url"`
			CreatedAt      string   `json:"createdAt"`
			ExpiresAt      string   `json:"expiresAt"`
			Project        struct {
				ID   string `json:"id"`
				Name string `json:"name"`
			} `json:"project"`
		} `json:"items"`
		Total  int `json:"total"`
		Limit  int `json:"limit"`
		Offset int `json:"offset"`
	} `json:"data"`
}

func (l buildList) ids() []string {
	out := make([]string, len(l.Data.Items))
	for i, it := range l.Data.Items {
		out[i] = it.ID
	}
	return out
}
