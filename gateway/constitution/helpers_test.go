package constitution

import (
	"encoding/json"
	"errors"

	"github.com/fintech/platform/gateway/apierr"
	"github.com/fintech/platform/gateway/bind"
)

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

// validatorProbe exposes the fields a bind.Validator reported.
type validatorProbe struct{ bind.Validator }

func (p *validatorProbe) fields() map[string]string {
	var ae *apierr.Error
	if errors.As(p.Err(), &ae) {
		return ae.Fields
	}
	return nil
}
