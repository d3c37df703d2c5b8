package identity

import (
	_ "embed"
	"errors"
	"strings"
	"sync"
)

// commonPasswords is the 10,000 most common passwords, one a line
// (common-passwords.LICENSE says where they come from), shipped in the
// binary.
//
//go:embed common-passwords.txt
var commonPasswordsText string

// PasswordRules is the rule text of the OpenAPI document and decisions.md.
const PasswordRules = "8 to 128 characters (Unicode code points, spaces count), and not one of the 10,000 most common passwords " +
	"(compared case-insensitively; the list ships in the binary)"

// commonPasswords is the list as a set, built once per process.
type commonPasswords map[string]struct{}

func loadCommonPasswords() commonPasswords {
	set := make(commonPasswords, 10_000)
	for _, line := range strings.Split(commonPasswordsText, "\n") {
		if line != "" {
			set[line] = struct{}{}
		}
	}
	return set
}

// common is built from the embedded text on first use: an immutable table,
// like a compiled regexp, not state.
var common = sync.OnceValue(loadCommonPasswords)

// Password-rule failures, each a sentence for the field error.
var (
	errPasswordLength = errors.New("the password must be 8 to 128 characters")
	errPasswordCommon = errors.New("the password is one of the 10,000 most common passwords: choose another")
)

// ValidatePassword applies the password rules (PasswordRules): 8 to 128
// characters and not among the 10,000 most common passwords.
func ValidatePassword(password string) error {
	if n := len([]rune(password)); n < minPassword || n > maxPassword {
		return errPasswordLength
	}
	if _, bad := common()[strings.ToLower(password)]; bad {
		return errPasswordCommon
	}
	return nil
}
