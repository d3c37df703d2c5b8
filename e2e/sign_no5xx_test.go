package e2e

import "testing"

func TestSignNoServerErrors(t *testing.T) { fuzzModule(t, "sign") }
