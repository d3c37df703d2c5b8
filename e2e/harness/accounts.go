package harness

import (
	"bytes"
	"fmt"
	"io"
	"mime/quotedprintable"
	"net/http"
	"net/mail"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/segmentio/ksuid"
)

// User is a registered account.
type User struct {
	ID, Email, Password, Token string
}

// RegisterEmail creates a user with the given e-mail, or logs in when it
// exists already (admin addresses are shared by the tests of a platform).
func (p *Platform) RegisterEmail(t testing.TB, email string) User {
	t.Helper()
	u := User{Email: email, Password: "correct-horse-1"}
	resp := p.Post(t, "/api/auth/register", "", map[string]string{"email": u.Email, "password": u.Password})
	if resp.Status == http.StatusConflict {
		resp = p.Post(t, "/api/auth/login", "", map[string]string{"email": u.Email, "password": u.Password})
	}
	if resp.Status != http.StatusCreated && resp.Status != http.StatusOK {
		t.Fatalf("register %s: %d %s", u.Email, resp.Status, resp.Body)
	}
	u.ID, u.Token = loggedIn(t, resp)
	if IsAdminEmail(email) {
		p.ConfirmAdmin(t, email)
	}
	return u
}

// ConfirmAdmin makes the (self-registered) account of an allow-listed
// address an admin the way an operator does, on the server: `platform admin
// verify --i-know-who-registered`, once per platform and address. The web
// verification link never confers the role.
func (p *Platform) ConfirmAdmin(t testing.TB, email string) {
	t.Helper()
	p.confirmedMu.Lock()
	defer p.confirmedMu.Unlock()
	if p.confirmed[strings.ToLower(email)] {
		return
	}
	bin := p.bin
	if bin == "" {
		bin = Binary(t)
	}
	cmd := exec.Command(bin, "admin", "verify", "--i-know-who-registered", email)
	// The allowlists the harness's servers read, so that the command can
	// report the role they confer (a cluster's members keep theirs in their
	// own environment).
	cmd.Env = append(append([]string(nil), p.Env...), "DATABASE_URL="+p.DatabaseURL)
	for _, l := range []string{"FIAT_ADMIN_EMAILS=" + FiatAdminEmail, "GOV_ADMIN_EMAILS=" + GovAdminEmail,
		"CHARITY_ADMIN_EMAILS=" + CharityAdminEmail, "REPUTATION_ADMIN_EMAILS=" + ReputationAdminEmail} {
		name, _, _ := strings.Cut(l, "=")
		if !slices.ContainsFunc(p.Env, func(kv string) bool { return strings.HasPrefix(kv, name+"=") }) {
			cmd.Env = append(cmd.Env, l)
		}
	}
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "role now: admin") {
		t.Fatalf("platform admin verify %s: %v\n%s", email, err, out)
	}
	if p.confirmed == nil {
		p.confirmed = map[string]bool{}
	}
	p.confirmed[strings.ToLower(email)] = true
}

// IsAdminEmail reports whether email is one of the harness's admin
// addresses.
func IsAdminEmail(email string) bool {
	switch strings.ToLower(email) {
	case FiatAdminEmail, GovAdminEmail, CharityAdminEmail, ReputationAdminEmail:
		return true
	}
	return false
}

// VerifyEmail proves u owns its address the way a person does: it asks for
// the one-time link, reads the message the platform wrote to
// DATA_DIR/mail (no SMTP_URL in tests) and opens the link.
func (p *Platform) VerifyEmail(t testing.TB, u User) {
	t.Helper()
	if resp := p.Post(t, "/api/auth/verify-email", u.Token, map[string]any{}); resp.Status != http.StatusOK {
		t.Fatalf("ask verification of %s: %d %s", u.Email, resp.Status, resp.Body)
	}
	link := p.MailedLink(t, u.Email, "/api/auth/verify-email?token=")
	// The link opens a page (a GET confirms nothing); its button posts the
	// token.
	if resp := p.Get(t, strings.TrimPrefix(link, p.BaseURL), ""); resp.Status != http.StatusOK {
		t.Fatalf("open the verification link of %s: %d %s", u.Email, resp.Status, resp.Body)
	}
	if resp := p.Post(t, "/api/auth/verify-email/confirm", "", map[string]string{"token": LinkToken(t, link)}); resp.Status != http.StatusOK {
		t.Fatalf("verify %s: %d %s", u.Email, resp.Status, resp.Body)
	}
}

// LinkToken is the token query parameter of a mailed verification link.
func LinkToken(t testing.TB, link string) string {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil || u.Query().Get("token") == "" {
		t.Fatalf("no token in the link %q (%v)", link, err)
	}
	return u.Query().Get("token")
}

// MailedLink returns the newest link containing marker in a message the
// platform wrote to DATA_DIR/mail for the address to.
func (p *Platform) MailedLink(t testing.TB, to, marker string) string {
	t.Helper()
	if link := p.LinkInMail(to, marker); link != "" {
		return link
	}
	t.Fatalf("no mail to %s with a link containing %q in %s", to, marker, filepath.Join(p.DataDir, "mail"))
	return ""
}

// LinkInMail is MailedLink without failing: "" when no such mail was
// written yet (for mail sent after the answer, polled with Eventually).
func (p *Platform) LinkInMail(to, marker string) string {
	files, _ := filepath.Glob(filepath.Join(p.DataDir, "mail", "*.eml"))
	sort.Sort(sort.Reverse(sort.StringSlice(files)))
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		msg, err := mail.ReadMessage(bytes.NewReader(raw))
		if err != nil || !strings.Contains(strings.ToLower(msg.Header.Get("To")), strings.ToLower(to)) {
			continue
		}
		var body io.Reader = msg.Body
		if strings.EqualFold(msg.Header.Get("Content-Transfer-Encoding"), "quoted-printable") {
			body = quotedprintable.NewReader(msg.Body)
		}
		text, _ := io.ReadAll(body)
		for _, field := range strings.Fields(string(text)) {
			if strings.Contains(field, marker) {
				return field
			}
		}
	}
	return ""
}

// Register creates a user with a unique e-mail (prefix@…) and returns it.
func (p *Platform) Register(t testing.TB, prefix string) User {
	t.Helper()
	u := User{Email: fmt.Sprintf("%s-%s@example.com", prefix, strings.ToLower(ksuid.New().String()[:10])), Password: "correct-horse-1"}
	resp := p.Post(t, "/api/auth/register", "", map[string]string{"email": u.Email, "password": u.Password, "name": prefix})
	if resp.Status != http.StatusCreated {
		t.Fatalf("register %s: %d %s", u.Email, resp.Status, resp.Body)
	}
	u.ID, u.Token = loggedIn(t, resp)
	return u
}

// loggedIn reads the user id and token of a register or login answer.
func loggedIn(t testing.TB, resp Response) (id, token string) {
	t.Helper()
	var out struct {
		Token string `json:"token"`
		User  struct {
			ID string `json:"id"`
		} `json:"user"`
	}
	resp.Decode(t, &out)
	return out.User.ID, out.Token
}

func NewID() string { return ksuid.New().String() }
