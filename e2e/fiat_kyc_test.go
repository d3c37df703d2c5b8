package e2e

import (
	"testing"

	"github.com/fintech/platform/e2e/harness"
)

// TestFiatCapsAndKYCAutoApprove runs a platform with small caps and
// KYC_AUTO_APPROVE=1: the caps hold before KYC and lift at once after.
func TestFiatCapsAndKYCAutoApprove(t *testing.T) {
	p := harness.Start(t, harness.Options{Env: map[string]string{
		"KYC_AUTO_APPROVE":       "1",
		"FIAT_CAP_PER_TRANSFER":  "100",
		"FIAT_CAP_DAILY_DEPOSIT": "20000",
		"FIAT_CAP_MONTHLY":       "150",
	}})
	secret := fiatSecret(t, p)
	u := p.Register(t, "fiat-kyc")
	v := p.Register(t, "fiat-kyc-to")
	w := fiatCreateWallet(t, p, u, "KZT")
	fiatDeposit(t, p, secret, u, w, 15_000)
	if r := p.Post(t, "/api/fiat/deposit", u.Token, map[string]any{"walletId": w, "amount": 5_001}); r.Status != 403 || r.JSON(t)["error"] != "kyc_required" {
		t.Fatalf("over daily deposit cap: %d %s", r.Status, r.Body)
	}
	transfer := func(amount int64) harness.Response {
		return p.Post(t, "/api/fiat/transfer", u.Token, map[string]any{"fromWalletId": w, "toEmail": v.Email, "amountKzt": amount})
	}
	if r := transfer(101); r.Status != 403 || r.JSON(t)["error"] != "kyc_required" {
		t.Fatalf("over per-transfer cap: %d %s", r.Status, r.Body)
	}
	if r := transfer(100); r.Status != 200 {
		t.Fatalf("at the cap: %d %s", r.Status, r.Body)
	}
	if r := transfer(51); r.Status != 403 || r.JSON(t)["error"] != "kyc_required" {
		t.Fatalf("over monthly cap: %d %s", r.Status, r.Body)
	}
	k := p.Post(t, "/api/fiat/kyc/submit", u.Token, map[string]string{"fullName": "U", "documentType": "passport",
		"documentNumber": "1", "country": "KZ"})
	if k.Status != 201 || k.JSON(t)["status"] != "approved" {
		t.Fatalf("auto-approve: %d %s", k.Status, k.Body)
	}
	if r := transfer(5_000); r.Status != 200 {
		t.Fatalf("after KYC: %d %s", r.Status, r.Body)
	}
	if r := p.Post(t, "/api/fiat/deposit", u.Token, map[string]any{"walletId": w, "amount": 50_000}); r.Status != 201 {
		t.Fatalf("deposit after KYC: %d %s", r.Status, r.Body)
	}
}
