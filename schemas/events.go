package schemas

// EventInfo describes one event type the platform delivers to webhooks and
// event streams: its module (the events.<module> topic it travels on), what
// it means, and a value of the Go type its data is built from, from which
// GET /api/platform/events reflects the JSON Schema of `data`.
type EventInfo struct {
	Type    string
	Module  string
	Meaning string
	Data    any
}

// EventCatalog lists every event type the platform delivers. A subscription
// may name any of them in its events list. A message type of the registry
// that is neither listed here nor a command or reply fails
// TestEventCatalogIsComplete.
func EventCatalog() []EventInfo {
	return []EventInfo{
		{TypeUserRegistered, "identity", "an account was registered", UserRegistered{}},

		{TypeWalletCreated, "fiat", "a wallet was opened", WalletCreated{}},
		{TypeTransferCompleted, "fiat", "transfer settled", TransferCompleted{}},
		{TypeTransferFailed, "fiat", "transfer failed, for example insufficient balance", TransferFailed{}},
		{TypeRequestPaid, "fiat", "payment request fulfilled", RequestPaid{}},
		{TypeRequestExpired, "fiat", "request expired by time or max views", RequestExpired{}},
		{TypeDepositCompleted, "fiat", "top-up credited", DepositCompleted{}},
		{TypeDepositNeedsReview, "fiat", "a paid deposit could not be credited and waits for a fiat admin", DepositReviewEvent{}},
		{TypeDepositRefunded, "fiat", "a deposit kept for review was refunded to the payer", DepositReviewEvent{}},
		{TypeWithdrawalCompleted, "fiat", "a withdrawal left the wallet", WithdrawalCompleted{}},
		{TypeMerchantCharged, "fiat", "merchant charge by API key succeeded", MerchantCharged{}},
		{TypeRefundCreated, "fiat", "a merchant refunded (part of) a charge or payment", RefundCreated{}},

		{TypeCampaignCreated, "charity", "a campaign was proposed and waits for approval", CampaignEvent{}},
		{TypeCampaignApproved, "charity", "a campaign was approved and takes donations", CampaignEvent{}},
		{TypeDonationReceived, "charity", "donation credited to campaign", DonationReceived{}},
		{TypeCampaignGoalReached, "charity", "campaign hit its target", CampaignGoalReached{}},

		{TypeMaskCreated, "mask", "new virtual mask issued", Mask{}},
		{TypeChargeAuthorized, "mask", "charge authorized; replay is idempotent on (maskId, paymentRef)", MaskChargeResult{}},
		{TypeChargeDeclined, "mask", "declined for limit, lock or fraud", MaskChargeResult{}},

		{TypeScoreUpdated, "reputation", "user score changed", ScoreUpdated{}},
		{TypeRankPromoted, "reputation", "user moved to a higher rank", RankPromoted{}},

		{TypeProposalCreated, "gov", "a proposal was drafted", ProposalEvent{}},
		{TypeProposalOpened, "gov", "a proposal opened for votes", ProposalEvent{}},
		{TypeProposalPassed, "gov", "reached quorum and passed", ProposalEvent{}},
		{TypeProposalRejected, "gov", "failed quorum or majority", ProposalEvent{}},

		{TypeLedgerEntryAdded, "ledger", "new entry appended", LedgerEntry{}},
		{TypeLedgerChainVerified, "ledger", "periodic integrity audit completed", LedgerChainVerified{}},

		{TypeTradeTopUpCompleted, "trade", "a test-net account was topped up", TradeEvent{}},
		{TypeTradeTransferCompleted, "trade", "a test-net transfer settled", TradeEvent{}},

		{TypeRoyaltyRecorded, "partner", "a partner reported a royalty for an e-mail address", RoyaltyRecorded{}},
		{TypePrizeRecorded, "partner", "a tournament prize was recorded for an e-mail address", PrizeRecorded{}},
		{TypeCertPayoutRecorded, "partner", "a certification payout was recorded for an e-mail address", CertPayoutRecorded{}},
		{TypeTournamentPublished, "partner", "a chess tournament was published on the schedule", Tournament{}},

		{TypeScenarioCreated, "constitution", "a constitution scenario was saved", ScenarioCreated{}},
		{TypeArtifactCreated, "constitution", "a planet artifact was published", ArtifactCreated{}},

		{TypeVacancyOpened, "build", "a partner vacancy was posted", VacancyEvent{}},
		{TypeVacancyClosed, "build", "a partner vacancy was closed by its employer", VacancyEvent{}},

		{TypeWebhookTest, "webhooks", "a test its owner sent to one endpoint (POST /api/fiat/webhook-subs/:id/test)", WebhookTest{}},
	}
}

// IsEventType reports whether the platform delivers events of type t.
func IsEventType(t string) bool {
	for _, e := range EventCatalog() {
		if e.Type == t {
			return true
		}
	}
	return false
}
