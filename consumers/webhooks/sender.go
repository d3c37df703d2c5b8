package webhooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"

	"github.com/fintech/platform/schemas"
	store "github.com/fintech/platform/storage/webhooks"
)

// errBlocked is a connection refused by the address policy.
var errBlocked = errors.New(schemas.WebhookErrBlocked)

// Attempt is the outcome of one delivery attempt.
type Attempt struct {
	OK         bool
	StatusCode int    // 0 when no HTTP answer came
	Error      string // empty on success
	Duration   time.Duration
}

// Sender POSTs signed deliveries.
type Sender struct {
	client  *http.Client
	timeout time.Duration
	vault   Opener
	now     func() time.Time
}

// NewSender builds a sender whose attempts give up after timeout. Unless
// allowPrivate is set, it refuses to connect to blocked addresses, checked
// on the resolved address of every connection (so a name that resolves
// differently later, DNS rebinding, is caught too). Redirects are not
// followed: a 3xx is a failed attempt.
func NewSender(timeout time.Duration, allowPrivate bool, vault Opener, now func() time.Time) *Sender {
	dialer := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		dialer.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil || schemas.BlockedAddr(ap.Addr()) {
				return errBlocked
			}
			return nil
		}
	}
	transport := &http.Transport{
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
	}
	return &Sender{
		client: &http.Client{Transport: transport, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}},
		timeout: timeout,
		vault:   vault,
		now:     now,
	}
}

// Opener opens the sealed signing secrets of subscriptions.
type Opener interface {
	OpenText(stored, aad string) (string, error)
}

// Deliver makes one attempt: it builds the payload with sentAt = now, signs
// it with the job's current secret and POSTs it. Any 2xx within the timeout
// is a success.
func (s *Sender) Deliver(ctx context.Context, job store.Job) Attempt {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	now := s.now()
	body := Payload(job.Event, now)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, job.URL, bytes.NewReader(body))
	if err != nil {
		return Attempt{Error: "bad endpoint url: " + err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "platform-webhooks/1")
	if job.Event.TraceParent != "" {
		req.Header.Set("traceparent", job.Event.TraceParent)
	}
	secret, err := s.vault.OpenText(job.Secret, store.SecretAAD(job.UserID))
	if err != nil {
		return Attempt{Error: schemas.WebhookErrSecretPrefix + " (DATA_ENCRYPTION_KEY rotated without the old key?)"}
	}
	var previous []string
	if job.PreviousSecret != "" {
		// A previous secret that cannot be opened only loses its overlap
		// signature; the new secret still signs.
		if p, err := s.vault.OpenText(job.PreviousSecret, store.SecretAAD(job.UserID)); err == nil {
			previous = append(previous, p)
		}
	}
	Sign(req.Header, secret, job.Event.ID, now.Unix(), body, previous...)
	a := s.post(req)
	a.Duration = s.now().Sub(now)
	return a
}

// post sends a signed delivery and reads the outcome.
func (s *Sender) post(req *http.Request) Attempt {
	resp, err := s.client.Do(req)
	if err != nil {
		switch {
		case errors.Is(err, errBlocked):
			return Attempt{Error: errBlocked.Error()}
		case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
			return Attempt{Error: fmt.Sprintf(schemas.WebhookErrTimeoutPrefix+"%s", s.timeout)}
		}
		return Attempt{Error: truncate(err.Error(), 500)}
	}
	// Drain a little so the connection can be reused; receivers should
	// answer quickly and briefly.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return Attempt{OK: true, StatusCode: resp.StatusCode}
	}
	return Attempt{StatusCode: resp.StatusCode, Error: fmt.Sprintf(schemas.WebhookErrStatusPrefix+"%d", resp.StatusCode)}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
