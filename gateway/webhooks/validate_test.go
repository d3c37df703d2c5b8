package webhooks

import (
	"context"
	"errors"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/bind"
)

type fakeResolver map[string][]string

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	addrs, ok := f[host]
	if !ok {
		return nil, errors.New("no such host")
	}
	var out []netip.Addr
	for _, a := range addrs {
		out = append(out, netip.MustParseAddr(a))
	}
	return out, nil
}

func fieldProblem(v *bind.Validator, field string) string {
	err := v.Err()
	if err == nil {
		return ""
	}
	var ae *apierr.Error
	if !errors.As(err, &ae) {
		return "not an API error"
	}
	return ae.Fields[field]
}

func TestCheckURL(t *testing.T) {
	t.Parallel()
	res := fakeResolver{
		"hooks.example.com": {"93.184.216.34"},
		"internal.example":  {"10.0.0.7"},
		"mixed.example":     {"93.184.216.34", "127.0.0.1"},
		"metadata.example":  {"169.254.169.254"},
		"v6.example":        {"2606:4700:4700::1111"},
	}
	tests := []struct {
		name         string
		url          string
		allowPrivate bool
		problem      string
	}{
		{"public https", "https://hooks.example.com/in?x=1", false, ""},
		{"public v6", "https://v6.example:8443/in", false, ""},
		{"public ip literal", "https://93.184.216.34/in", false, ""},
		{"missing", "  ", false, "is required"},
		{"http", "http://hooks.example.com/in", false, "must use https"},
		{"ftp", "ftp://hooks.example.com/in", false, "must use https"},
		{"relative", "/in", false, "must be an absolute https URL"},
		{"garbage", "https://%zz", false, "must be an absolute https URL"},
		{"credentials", "https://u:p@hooks.example.com/", false, "must not carry credentials"},
		{"unresolvable", "https://nowhere.example/", false, "host does not resolve"},
		{"private", "https://internal.example/", false, "must not resolve to a private, loopback or link-local address"},
		{"any private answer", "https://mixed.example/", false, "must not resolve to a private, loopback or link-local address"},
		{"link-local", "https://metadata.example/", false, "must not resolve to a private, loopback or link-local address"},
		{"loopback literal", "https://127.0.0.1:8443/", false, "must not resolve to a private, loopback or link-local address"},
		{"v6 loopback literal", "https://[::1]/", false, "must not resolve to a private, loopback or link-local address"},
		{"IPv4-compatible loopback", "https://[::127.0.0.1]/", false, "must not resolve to a private, loopback or link-local address"},
		{"IPv4-translated loopback", "https://[::ffff:0:7f00:1]/", false, "must not resolve to a private, loopback or link-local address"},
		{"allow private: http loopback", "http://127.0.0.1:9000/hook", true, ""},
		{"allow private: still no ftp", "ftp://127.0.0.1/", true, "must use https"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var v bind.Validator
			checkURL(context.Background(), &v, res, tt.url, tt.allowPrivate)
			got := fieldProblem(&v, "url")
			if !strings.HasPrefix(got, tt.problem) || (tt.problem == "") != (got == "") {
				t.Fatalf("problem %q, want %q", got, tt.problem)
			}
			// A refused local URL says how to test locally (issue 25).
			if strings.Contains(tt.url, "127.0.0.1:8443") || tt.name == "http" {
				for _, want := range []string{"platform webhooks listen", "WEBHOOK_ALLOW_PRIVATE=1"} {
					if !strings.Contains(got, want) {
						t.Errorf("%q does not name %s", got, want)
					}
				}
			}
		})
	}
}

func TestCheckSecretAndEvents(t *testing.T) {
	t.Parallel()
	secrets := []struct {
		secret, problem string
	}{
		{"0123456789abcdef", ""},
		{"0123456789abcde", "must be 16 to 256 characters (a random 32-byte hex value is suggested)"},
		{"", "is required"},
	}
	for _, tt := range secrets {
		var v bind.Validator
		checkSecret(&v, tt.secret)
		if got := fieldProblem(&v, "secret"); got != tt.problem {
			t.Errorf("secret %q: problem %q, want %q", tt.secret, got, tt.problem)
		}
	}
	events := []struct {
		name    string
		in      []string
		want    []string
		problem bool
	}{
		{"omitted: all", nil, nil, false},
		{"empty list", []string{}, nil, true},
		{"known, deduplicated", []string{"transfer.completed", "score.updated", "transfer.completed"},
			[]string{"transfer.completed", "score.updated"}, false},
		{"unknown", []string{"transfer.completed", "transfer.done"}, nil, true},
		// Every delivered type can be named (issue 25), commands cannot.
		{"platform event listable", []string{"user.registered", "vacancy.opened"},
			[]string{"user.registered", "vacancy.opened"}, false},
		{"a command is not an event", []string{"fiat.transfer"}, nil, true},
	}
	for _, tt := range events {
		var v bind.Validator
		got := checkEvents(&v, tt.in)
		if (fieldProblem(&v, "events") != "") != tt.problem || (!tt.problem && !reflect.DeepEqual(got, tt.want)) {
			t.Errorf("%s: got %v problem %q", tt.name, got, fieldProblem(&v, "events"))
		}
	}
}
