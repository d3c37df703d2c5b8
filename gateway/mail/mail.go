// Package mail sends the platform's transactional e-mail (address
// verification links) through go-mail: over SMTP when SMTP_URL is set, and in
// development to the log and to files under DATA_DIR/mail, so a developer can
// click the link without a mail server.
package mail

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// Message is one plain-text e-mail.
type Message struct {
	To      string
	Subject string
	Body    string
}

// Sender delivers messages.
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// New returns the SMTP sender for smtpURL (smtp://user:pass@host:587 with
// STARTTLS, or smtps://…:465 with implicit TLS; `?from=` sets the sender),
// or, with an empty smtpURL, the development sender writing to dir and log.
func New(smtpURL, defaultFrom, dir string, log *slog.Logger) (Sender, error) {
	if smtpURL == "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("create mail directory %s: %w", dir, err)
		}
		return &devSender{dir: dir, from: defaultFrom, log: log}, nil
	}
	return newSMTP(smtpURL, defaultFrom)
}

type smtpSender struct {
	from string
	opts []gomail.Option
	host string
}

func newSMTP(raw, defaultFrom string) (*smtpSender, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return nil, errors.New("SMTP_URL: not a URL such as smtp://user:pass@mail.example.com:587")
	}
	s := &smtpSender{from: defaultFrom, host: u.Hostname()}
	if f := u.Query().Get("from"); f != "" {
		s.from = f
	}
	port := 587
	switch u.Scheme {
	case "smtp":
		s.opts = append(s.opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	case "smtps":
		port = 465
		s.opts = append(s.opts, gomail.WithSSL())
	default:
		return nil, fmt.Errorf("SMTP_URL: scheme %q must be smtp or smtps", u.Scheme)
	}
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil {
			return nil, fmt.Errorf("SMTP_URL: bad port %q", p)
		}
	}
	s.opts = append(s.opts, gomail.WithPort(port), gomail.WithTimeout(15*time.Second))
	if u.User != nil {
		pw, _ := u.User.Password()
		s.opts = append(s.opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover),
			gomail.WithUsername(u.User.Username()), gomail.WithPassword(pw))
	}
	return s, nil
}

func build(from string, m Message) (*gomail.Msg, error) {
	msg := gomail.NewMsg()
	if err := msg.From(from); err != nil {
		return nil, fmt.Errorf("mail sender %q: %w", from, err)
	}
	if err := msg.To(m.To); err != nil {
		return nil, fmt.Errorf("mail recipient: %w", err)
	}
	msg.Subject(m.Subject)
	msg.SetDate()
	msg.SetMessageID()
	msg.SetBodyString(gomail.TypeTextPlain, m.Body)
	return msg, nil
}

func (s *smtpSender) Send(ctx context.Context, m Message) error {
	msg, err := build(s.from, m)
	if err != nil {
		return err
	}
	c, err := gomail.NewClient(s.host, s.opts...)
	if err != nil {
		return fmt.Errorf("smtp client: %w", err)
	}
	if err := c.DialAndSendWithContext(ctx, msg); err != nil {
		return fmt.Errorf("send mail via %s: %w", s.host, err)
	}
	return nil
}

// devSender writes each message as an .eml file and logs where it is.
type devSender struct {
	dir  string
	from string
	log  *slog.Logger
}

func (d *devSender) Send(_ context.Context, m Message) error {
	msg, err := build(d.from, m)
	if err != nil {
		return err
	}
	name := filepath.Join(d.dir, fmt.Sprintf("%d.eml", time.Now().UnixNano()))
	f, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("write mail: %w", err)
	}
	if _, err := msg.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("write mail %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write mail %s: %w", name, err)
	}
	d.log.Info("development mail (SMTP_URL unset)", "to", m.To, "subject", m.Subject, "file", name, "body", m.Body)
	return nil
}
