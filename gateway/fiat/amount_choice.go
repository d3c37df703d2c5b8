package fiat

import (
	"github.com/swaggest/jsonschema-go"

	"github.com/fintech/platform/gateway/bind"
)

// The money requests take their amount as amount or amountKzt: the
// document says exactly one is required (bind.AmountChoice).

func (transferRequest) PrepareJSONSchema(s *jsonschema.Schema) error {
	return bind.AmountChoice(s, "amountKzt", "amount")
}

func (withdrawRequest) PrepareJSONSchema(s *jsonschema.Schema) error {
	return bind.AmountChoice(s, "amount", "amountKzt")
}

func (payoutRequest) PrepareJSONSchema(s *jsonschema.Schema) error {
	return bind.AmountChoice(s, "amount", "amountKzt")
}

func (depositRequest) PrepareJSONSchema(s *jsonschema.Schema) error {
	return bind.AmountChoice(s, "amount", "amountKzt")
}

func (createRequestRequest) PrepareJSONSchema(s *jsonschema.Schema) error {
	return bind.AmountChoice(s, "amount", "amountKzt")
}

func (chargeRequest) PrepareJSONSchema(s *jsonschema.Schema) error {
	return bind.AmountChoice(s, "amount", "amountKzt")
}
