package identity

import (
	"html/template"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/htmlpage"
	"github.com/fintech/platform/gateway/server"
)

// ResetPagePath is the page a password-reset mail links to, with ?token=.
const ResetPagePath = "/reset-password"

// resetPage asks for the new password and posts it with the link's token
// to POST /api/auth/password/reset. The token never leaves the page's own
// origin, and the page sends no Referer (htmlpage's no-referrer).
var resetPage = template.Must(template.New("reset").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Choose a new password</title>
<style nonce="{{.Nonce}}">
body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#111}
label{display:block;margin:1rem 0 .25rem}input{width:100%;padding:.5rem;font-size:1rem;box-sizing:border-box}
button{margin-top:1rem;padding:.5rem 1rem;font-size:1rem}#status{margin-top:1rem}
</style></head><body>
<h1>Choose a new password</h1>
<form id="reset">
<label for="password">New password</label>
<input id="password" name="password" type="password" autocomplete="new-password" minlength="8" maxlength="128" required>
<label for="again">Again</label>
<input id="again" name="again" type="password" autocomplete="new-password" minlength="8" maxlength="128" required>
<p>{{.Rules}}.</p>
<button type="submit">Set the password</button>
</form>
<p id="status" role="status"></p>
<script nonce="{{.Nonce}}">
(function () {
  var token = new URLSearchParams(location.search).get("token") || "";
  var form = document.getElementById("reset"), status = document.getElementById("status");
  if (!token) { status.textContent = "This link has no token: ask for a new one."; form.hidden = true; }
  form.addEventListener("submit", function (ev) {
    ev.preventDefault();
    var pw = document.getElementById("password").value;
    if (pw !== document.getElementById("again").value) { status.textContent = "The two passwords differ."; return; }
    status.textContent = "Saving…";
    fetch("/api/auth/password/reset", {method: "POST", headers: {"Content-Type": "application/json"},
      body: JSON.stringify({token: token, newPassword: pw})}).then(function (r) {
      if (r.status === 204) { form.hidden = true; status.textContent = "Your password is set. Every session was signed out: sign in with the new password."; return; }
      return r.json().then(function (e) {
        var msg = (e && e.message) || ("Error " + r.status);
        if (e && e.fields) { msg += ": " + Object.values(e.fields).join("; "); }
        status.textContent = msg;
      });
    }).catch(function () { status.textContent = "The server did not answer: try again."; });
  });
})();
</script>
</body></html>
`))

// resetPolicy lets the page post to this origin with fetch; the form itself
// submits nowhere.
var resetPolicy = htmlpage.Policy{Connect: true}

// resetPageRequest is the link's query; the page's script reads the token,
// the server does not.
type resetPageRequest struct {
	Token string `query:"token" json:"-" maxLength:"200" description:"the one-time token of the reset mail"`
}

func registerResetPage(r server.Router) {
	server.Get(r, ResetPagePath, server.Op[resetPageRequest]{
		Summary:     "The password-reset page a reset mail links to",
		Description: "An HTML page under a strict CSP with a form for the new password; it posts the link's `token` (from the URL) and the password to POST /api/auth/password/reset. Read-only.",
		Public:      true,
		Handle: func(c *fiber.Ctx, _ *resetPageRequest) error {
			c.Set(fiber.HeaderCacheControl, "no-store")
			return htmlpage.Render(c, http.StatusOK, resetPage, resetPolicy, func(nonce string) any {
				return struct{ Nonce, Rules string }{nonce, "Rules: " + PasswordRules}
			})
		},
		Responses: []server.Response{{Status: http.StatusOK, Description: "the HTML page", ContentType: "text/html"}},
	})
}
