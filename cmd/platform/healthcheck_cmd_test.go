package main

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestHealthcheck: 0 on a 200, 1 on another status or no answer, 2 for a
// URL off this host (the command is no general HTTP client).
func TestHealthcheck(t *testing.T) {
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer ok.Close()
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) }))
	defer bad.Close()
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()
	for _, c := range []struct {
		args []string
		want int
	}{
		{[]string{ok.URL + "/metrics"}, 0},
		{[]string{bad.URL}, 1},
		{[]string{downURL}, 1},
		{[]string{"http://example.com/"}, 2},
		{[]string{"https://127.0.0.1/"}, 2},
		{nil, 2},
	} {
		if got := runHealthcheck(c.args); got != c.want {
			t.Errorf("healthcheck %v = %d, want %d", c.args, got, c.want)
		}
	}
}
