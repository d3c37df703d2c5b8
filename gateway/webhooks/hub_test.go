package webhooks

import (
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"testing"
	"time"
)

func ids(ms []Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

func TestHubBacklog(t *testing.T) {
	t.Parallel()
	h, err := NewHub(HubConfig{Ring: 3}, nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a1", "a2", "a3", "a5", "a4"} {
		h.Publish(Message{ID: id, Type: "t"})
	}
	tests := []struct {
		name, last string
		recent     int
		want       []string
	}{
		{"no Last-Event-ID: live only", "", 0, nil},
		{"no Last-Event-ID, recent 2", "", 2, []string{"a5", "a4"}},
		{"no Last-Event-ID, more recent than kept", "", 50, []string{"a3", "a5", "a4"}},
		{"found in the ring: what followed it", "a5", 2, []string{"a4"}},
		{"the newest: nothing", "a4", 0, nil},
		{"dropped from the ring: greater ids", "a2", 0, []string{"a3", "a5", "a4"}},
		{"unknown newer id: nothing", "zz", 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			backlog, l := h.Subscribe(tt.last, tt.recent)
			defer l.Close()
			if got := ids(backlog); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("backlog %v, want %v", got, tt.want)
			}
		})
	}
}

func TestHubFanOutAndSlowListener(t *testing.T) {
	t.Parallel()
	h, err := NewHub(HubConfig{Ring: 10, Buffer: 2}, nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	_, fast := h.Subscribe("", 0)
	defer fast.Close()
	_, slow := h.Subscribe("", 0)
	defer slow.Close()
	got := make(chan string, 10)
	go func() {
		for m := range fast.C {
			got <- m.ID
		}
	}()
	for i := range 5 {
		h.Publish(Message{ID: fmt.Sprint(i)})
		if id := <-got; id != fmt.Sprint(i) {
			t.Fatalf("fast listener got %s, want %d", id, i)
		}
	}
	// The slow listener never read: it got its buffer's worth, then was cut off.
	var n int
	for range slow.C {
		n++
	}
	if n != 2 {
		t.Fatalf("slow listener got %d messages before being cut off, want 2", n)
	}
}
