package schemas

import (
	"strings"
	"testing"
)

// notEvents are the registry's message types that travel on command,
// append, reply and analytics topics: never delivered to webhooks or event
// streams.
var notEvents = map[string]bool{
	TypeReply: true, TypeFiatTransfer: true, TypeFiatDepositCreate: true, TypeFiatDepositCredit: true,
	TypeFiatWithdraw: true, TypeFiatPayoutRequest: true, TypeFiatPayoutDecide: true, TypeFiatMerchantCharge: true,
	TypeFiatRequestPay: true, TypeFiatRefund: true, TypeFiatDepositReview: true, TypeMaskIssue: true,
	TypeMaskCharge: true, TypeMaskRevoke: true, TypeLedgerAppend: true, TypeReputationEvent: true,
	TypeCharityDonate: true, TypeTradeTopUp: true, TypeTradeTransfer: true,
	// Analytics change records (topics.Analytics*), never delivered.
	TypeWebhookDeliveryUpdated: true,
	// The carrier of bundled events, expanded before delivery.
	TypeEventBundle: true,
}

// TestEventCatalogIsComplete fails when the registry knows a message type
// that is neither in the event catalog (GET /api/platform/events) nor a
// command: a new event type must be described before it is delivered.
func TestEventCatalogIsComplete(t *testing.T) {
	listed := map[string]bool{}
	for _, e := range EventCatalog() {
		if listed[e.Type] {
			t.Errorf("%s is listed twice", e.Type)
		}
		listed[e.Type] = true
		if e.Module == "" || e.Meaning == "" || e.Data == nil {
			t.Errorf("%s lacks a module, meaning or data type", e.Type)
		}
	}
	for _, m := range moduleVersions {
		for typ := range m {
			if !listed[typ] && !notEvents[typ] {
				t.Errorf("message type %s is neither in EventCatalog nor a command (notEvents)", typ)
			}
			if listed[typ] && notEvents[typ] {
				t.Errorf("%s is both an event and a command", typ)
			}
		}
	}
	// The spec's Events table, every type of it.
	for _, typ := range strings.Fields(`transfer.completed transfer.failed request.paid request.expired
		deposit.completed merchant.charge.success donation.received campaign.goal_reached mask.created
		charge.authorized charge.declined score.updated rank.promoted proposal.passed proposal.rejected
		ledger.entry_added ledger.chain_verified`) {
		if !listed[typ] {
			t.Errorf("the spec's %s is not listed", typ)
		}
	}
}
