package fiat

import (
	"html/template"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/fintech/platform/gateway/htmlpage"
	store "github.com/fintech/platform/storage/fiat"
)

// payPage is the public pay page of a payment request (payUrl with
// Accept: text/html). html/template escapes every user-supplied text; the
// token reaches the script as a JS string literal. The page logs the payer
// in with fetch (POST /api/auth/login), lists their wallets of the request's
// currency (GET /api/fiat/wallets) and pays (POST …/pay). It never re-reads
// the request, so showing the page counts exactly one view.
var payPage = template.Must(template.New("pay").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>{{if .Found}}Payment request: {{.Amount}} {{.Currency}}{{else}}Payment request not found{{end}}</title>
<style nonce="{{.Nonce}}">
 body { font-family: system-ui, sans-serif; background: #f4f5f7; margin: 0; padding: 2rem; color: #1d2330; }
 main { max-width: 28rem; margin: 0 auto; background: #fff; border-radius: 12px; padding: 1.5rem 2rem; box-shadow: 0 2px 12px rgba(0,0,0,.08); }
 h1 { font-size: 1.2rem; margin: 0 0 .5rem; }
 .amount { font-size: 2rem; font-weight: 700; margin: .5rem 0; }
 .desc { color: #4a5365; white-space: pre-wrap; word-break: break-word; }
 .status { display: inline-block; padding: .2rem .6rem; border-radius: 999px; background: #e7ecf5; font-weight: 600; }
 .status.paid { background: #d6f5df; color: #11632c; }
 .status.expired { background: #fbe0e0; color: #8a1c1c; }
 label { display: block; margin: .8rem 0 .2rem; font-size: .9rem; }
 input, select { width: 100%; padding: .5rem; box-sizing: border-box; border: 1px solid #c7ccd6; border-radius: 6px; font-size: 1rem; }
 button { margin-top: 1rem; width: 100%; padding: .7rem; border: 0; border-radius: 6px; background: #2454d6; color: #fff; font-size: 1rem; cursor: pointer; }
 button:disabled { background: #9aa9d6; }
 .error { color: #a01c1c; min-height: 1.2rem; margin-top: .6rem; }
 .meta { color: #6b7385; font-size: .85rem; margin-top: 1rem; }
 [hidden] { display: none !important; }
</style>
</head>
<body>
<main>
{{if .Found}}
 <h1>Payment request</h1>
 <div class="amount" id="amount">{{.Amount}} {{.Currency}}</div>
 <p class="desc" id="description">{{.Description}}</p>
 <p>Status: <span id="status" class="status {{.Status}}">{{.Status}}</span></p>
 <div class="meta" id="meta">Expires {{.ExpiresAt}}{{if .Open}} · {{.RemainingViews}} views left{{end}}</div>
 {{if .Open}}
 <form id="login">
  <label for="email">E-mail</label>
  <input id="email" name="email" type="email" autocomplete="username" required>
  <label for="password">Password</label>
  <input id="password" name="password" type="password" autocomplete="current-password" required>
  <button id="login-btn" type="submit">Log in to pay</button>
 </form>
 <form id="pay" hidden>
  <label for="wallet">Pay from</label>
  <select id="wallet" name="wallet"></select>
  <button id="pay-btn" type="submit">Pay {{.Amount}} {{.Currency}}</button>
 </form>
 <p id="result" hidden></p>
 <p class="error" id="error" role="alert"></p>
 {{end}}
{{else}}
 <h1>Payment request not found</h1>
 <p>Check the link you were given.</p>
{{end}}
</main>
{{if .Open}}
<script nonce="{{.Nonce}}">
(function () {
  "use strict";
  var token = {{.Token}};
  var currency = {{.Currency}};
  var base = {{.Prefix}};
  var jwt = "";
  var $ = function (id) { return document.getElementById(id); };
  function fail(msg) { $("error").textContent = msg; }
  function api(method, path, body) {
    var headers = { "Accept": "application/json" };
    if (body !== undefined) { headers["Content-Type"] = "application/json"; }
    if (jwt) { headers["Authorization"] = "Bearer " + jwt; }
    return fetch(path, { method: method, headers: headers, body: body === undefined ? undefined : JSON.stringify(body) })
      .then(function (r) { return r.json().catch(function () { return {}; }).then(function (j) { return { status: r.status, body: j }; }); });
  }
  function money(minor) { return (minor / 100).toFixed(2) + " " + currency; }
  $("login").addEventListener("submit", function (e) {
    e.preventDefault(); fail(""); $("login-btn").disabled = true;
    api("POST", "/api/auth/login", { email: $("email").value, password: $("password").value }).then(function (r) {
      if (r.status !== 200) { throw new Error(r.body.message || "login failed"); }
      jwt = r.body.token;
      return api("GET", base + "/wallets");
    }).then(function (r) {
      if (r.status !== 200) { throw new Error(r.body.message || "could not list your wallets"); }
      var sel = $("wallet"); sel.textContent = "";
      (r.body.items || []).forEach(function (w) {
        if (w.currency !== currency || w.status !== "active") { return; }
        var o = document.createElement("option");
        o.value = w.id; o.textContent = w.currency + " wallet · balance " + money(w.balance);
        sel.appendChild(o);
      });
      if (!sel.options.length) { throw new Error("you have no active " + currency + " wallet"); }
      $("login").hidden = true; $("pay").hidden = false;
    }).catch(function (err) { fail(err.message); $("login-btn").disabled = false; });
  });
  $("pay").addEventListener("submit", function (e) {
    e.preventDefault(); fail(""); $("pay-btn").disabled = true;
    api("POST", base + "/requests/" + encodeURIComponent(token) + "/pay", { walletId: $("wallet").value }).then(function (r) {
      if (r.status !== 200) { throw new Error(r.body.message || "payment failed"); }
      $("pay").hidden = true; $("meta").hidden = true;
      var s = $("status"); s.textContent = "paid"; s.className = "status paid";
      var res = $("result"); res.hidden = false;
      res.textContent = "Paid " + money(r.body.amount) + " (fee " + money(r.body.feeKzt) + "). Transaction " + r.body.transactionId + ".";
    }).catch(function (err) { fail(err.message); $("pay-btn").disabled = false; });
  });
})();
</script>
{{end}}
</body>
</html>
`))

type payPageData struct {
	Found          bool
	Open           bool
	Token          string
	Amount         string
	Currency       string
	Description    string
	Status         string
	ExpiresAt      string
	RemainingViews int
	Prefix         string
	Nonce          string
}

// FormatMinor renders minor units as a decimal with two places (both KZT
// and USD have 100 minor units), without floats.
func FormatMinor(v int64) string {
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	frac := strconv.FormatInt(v%100, 10)
	if len(frac) == 1 {
		frac = "0" + frac
	}
	return sign + strconv.FormatInt(v/100, 10) + "." + frac
}

func (h *Handlers) renderPayPage(c *fiber.Ctx, status int, r store.PaymentRequest) error {
	d := payPageData{Found: r.ID != "", Prefix: Prefix}
	if d.Found {
		d.Open = r.Status == "open"
		d.Token, d.Amount, d.Currency, d.Description, d.Status = r.Token, FormatMinor(r.Amount), r.Currency, r.Description, r.Status
		d.ExpiresAt = r.ExpiresAt.UTC().Format("2006-01-02 15:04 UTC")
		d.RemainingViews = max(r.MaxViews-r.Views, 0)
	}
	// Only the page's own inline script and style run; fetches stay on
	// this origin; no framing.
	return htmlpage.Render(c, status, payPage, htmlpage.Policy{Connect: true}, func(nonce string) any {
		d.Nonce = nonce
		return d
	})
}
