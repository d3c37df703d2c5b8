package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fintech/platform/schemas"
)

// TestListenForwardsSignedOnlyToItsURL: the forwarder reads the caller's
// stream with the bearer header, posts each event (filtered by --events)
// to the forward URL signed with its secret, and never follows a redirect
// elsewhere.
func TestListenForwardsSignedOnlyToItsURL(t *testing.T) {
	var mu sync.Mutex
	var got []*http.Request
	var bodies []string
	elsewhere := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		t.Error("the forwarder followed a redirect")
	}))
	defer elsewhere.Close()
	local := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got, bodies = append(got, r), append(bodies, string(b))
		mu.Unlock()
		http.Redirect(w, r, elsewhere.URL, http.StatusTemporaryRedirect)
	}))
	defer local.Close()
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/fiat/me/events/stream" || r.Header.Get("Authorization") != "Bearer tok" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "retry: 3000\n: connected\n\n")
		fmt.Fprint(w, "id: e1\nevent: transfer.completed\ndata: {\"id\":\"e1\",\"type\":\"transfer.completed\"}\n\n")
		fmt.Fprint(w, ": heartbeat\n\n")
		fmt.Fprint(w, "id: e2\nevent: score.updated\ndata: {\"id\":\"e2\",\"type\":\"score.updated\"}\n\n")
		fmt.Fprint(w, "id: e3\nevent: transfer.completed\ndata: {\"id\":\"e3\",\n")
		fmt.Fprint(w, "data: \"type\":\"transfer.completed\"}\n\n")
	}))
	defer server.Close()
	opts, err := parseListen([]string{"--forward-to", local.URL + "/hook", "--server", server.URL, "--events", "transfer.completed"},
		func(k string) string { return map[string]string{"PLATFORM_TOKEN": "tok"}[k] })
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	f := newForwarder(opts, &out)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := f.follow(ctx); err == nil {
		t.Fatal("the stream's end is not reported")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[0].Header.Get("webhook-id") != "e1" || got[1].Header.Get("webhook-id") != "e3" ||
		bodies[1] != "{\"id\":\"e3\",\n\"type\":\"transfer.completed\"}" {
		t.Fatalf("forwarded %d: %v", len(got), bodies)
	}
	key := schemas.WebhookKey(opts.secret)
	for i, r := range got {
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(r.Header.Get("webhook-id") + "." + r.Header.Get("webhook-timestamp") + "." + bodies[i]))
		if r.Header.Get("webhook-signature") != "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)) {
			t.Errorf("delivery %d is not signed with the printed secret", i)
		}
	}
	if f.lastID != "e3" {
		t.Errorf("resumes after %q", f.lastID)
	}
	// A refused token ends the forwarder.
	opts.token = "wrong"
	if err := newForwarder(opts, io.Discard).run(ctx); err != errTokenRefused {
		t.Fatalf("a refused token: %v", err)
	}
}

func TestListenFlags(t *testing.T) {
	env := func(string) string { return "" }
	for _, args := range [][]string{
		{}, {"--forward-to", "ftp://x/hook", "--token", "t"}, {"--forward-to", "http://127.0.0.1:3000/hook"},
		{"--forward-to", "http://127.0.0.1:3000/hook", "--token", "t", "extra"},
	} {
		if _, err := parseListen(args, env); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
	o, err := parseListen([]string{"--forward-to", "http://127.0.0.1:3000/hook", "--token", "t"},
		func(k string) string { return map[string]string{"PLATFORM_ADDR": "127.0.0.1:9000"}[k] })
	if err != nil || o.server != "http://127.0.0.1:9000" || !strings.HasPrefix(o.secret, "whsec_") {
		t.Fatalf("%+v %v", o, err)
	}
}

// TestListenResumesFromItsFirstConnection: a forwarder that has forwarded
// nothing still reconnects with a Last-Event-ID, one that sorts before any
// event created after it first connected, so the server replays what was
// sent while it backed off.
func TestListenResumesFromItsFirstConnection(t *testing.T) {
	start := time.Now()
	var mu sync.Mutex
	var resumes []string
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		resumes = append(resumes, r.Header.Get("Last-Event-ID"))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, ": connected\n\n") // then the connection drops
	}))
	defer server.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f := newForwarder(listenOptions{forwardTo: "http://127.0.0.1:1/never", token: "t", server: server.URL}, io.Discard)
	done := make(chan struct{})
	go func() { _ = f.run(ctx); close(done) }()
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(resumes)
		mu.Unlock()
		if n >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	if len(resumes) < 2 || resumes[0] != "" {
		t.Fatalf("Last-Event-ID of each connection: %q, want none first, then a resume mark", resumes)
	}
	later := schemas.NewID() // an event created after the first connection
	if resumes[1] == "" || resumes[1] >= later {
		t.Fatalf("resume mark %q does not sort before an event id made after %s (%s)", resumes[1], start, later)
	}
}
