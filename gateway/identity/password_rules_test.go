package identity

import (
	"strings"
	"testing"
)

// TestValidatePassword: the length bounds count characters, and the 10,000
// shipped common passwords are refused whatever their case.
func TestValidatePassword(t *testing.T) {
	t.Parallel()
	if n := len(common()); n != 10_000 {
		t.Fatalf("the shipped list has %d passwords, want 10,000", n)
	}
	tests := []struct {
		name, password string
		want           error
	}{
		{"7 characters", "abcdefg", errPasswordLength},
		{"8 characters", "kx7-Qm2p", nil},
		{"8 multi-byte characters", "ключпароль"[:16], nil},
		{"128 characters", strings.Repeat("z", 127) + "1", nil},
		{"129 characters", strings.Repeat("z", 128) + "1", errPasswordLength},
		{"common", "password1", errPasswordCommon},
		{"common, other case", "PassWord1", errPasswordCommon},
		{"common and long", "1qaz2wsx3edc", errPasswordCommon},
		{"not common", "correct-horse-1", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := ValidatePassword(tt.password); got != tt.want {
				t.Fatalf("ValidatePassword(%q) = %v, want %v", tt.password, got, tt.want)
			}
		})
	}
}
