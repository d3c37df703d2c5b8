package server

import (
	"sync"
	"time"
)

// SlowRequest is one answer that took at least the slow-request threshold:
// what an operator needs to find its trace (TraceID) and its log lines
// (RequestID, TraceID).
type SlowRequest struct {
	At        time.Time
	Method    string
	Route     string
	Status    int
	Took      time.Duration
	TraceID   string
	RequestID string
}

// slowLog keeps the latest slow requests of this process, newest last.
type slowLog struct {
	threshold time.Duration
	mu        sync.Mutex
	ring      []SlowRequest
	next      int
}

// slowKept is how many slow requests a process keeps.
const slowKept = 50

// note keeps r when it was slow. Requests under the threshold cost a
// comparison.
func (l *slowLog) note(r SlowRequest) {
	if l == nil || r.Took < l.threshold {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.ring) < slowKept {
		l.ring = append(l.ring, r)
		return
	}
	l.ring[l.next] = r
	l.next = (l.next + 1) % slowKept
}

// list returns the kept slow requests, newest first.
func (l *slowLog) list() []SlowRequest {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]SlowRequest, 0, len(l.ring))
	for i := range l.ring {
		// the newest is just before next (or last, while the ring fills)
		j := (l.next - 1 - i + 2*len(l.ring)) % len(l.ring)
		out = append(out, l.ring[j])
	}
	return out
}

// WithSlowRequests keeps the latest requests answered in threshold or more
// (SlowRequests); 0 keeps none.
func WithSlowRequests(threshold time.Duration) Option {
	return func(s *Server) {
		if threshold > 0 {
			s.slow = &slowLog{threshold: threshold}
		}
	}
}

// SlowRequests returns the latest slow requests this process answered,
// newest first: at most 50, each with its trace id.
func (s *Server) SlowRequests() []SlowRequest { return s.slow.list() }
