package schemas

// CommandInfo describes one command type (or appended record type): the
// topic it travels on, whose consumer declares it (pipeline.NewTable
// checks both ways at start-up), and a value of the Go type its data is
// read into.
type CommandInfo struct {
	Type  string
	Topic string
	Data  any
}

// The command topics, as topics names them (schemas cannot import topics;
// topics' tests check these are its names).
const (
	TopicFiatCommands       = "fiat.commands"
	TopicMaskCommands       = "mask.commands"
	TopicTradeCommands      = "trade.commands"
	TopicReputationCommands = "reputation.commands"
	TopicLedgerAppend       = "ledger.append"
)

// CommandCatalog lists every command type, beside EventCatalog's events. A
// new command is one line here, its data type, its file in the consumer of
// its topic and one line in that consumer's declarations
// (consumers/pipeline/README.md); a message type of the registry that is
// neither listed here nor in EventCatalog fails TestEventCatalogIsComplete.
func CommandCatalog() []CommandInfo {
	return []CommandInfo{
		{TypeFiatTransfer, TopicFiatCommands, FiatTransfer{}},
		{TypeFiatDepositCreate, TopicFiatCommands, FiatDepositCreate{}},
		{TypeFiatDepositCredit, TopicFiatCommands, FiatDepositCredit{}},
		{TypeFiatDepositReview, TopicFiatCommands, FiatDepositReview{}},
		{TypeFiatWithdraw, TopicFiatCommands, FiatWithdraw{}},
		{TypeFiatPayoutRequest, TopicFiatCommands, FiatPayoutRequest{}},
		{TypeFiatPayoutDecide, TopicFiatCommands, FiatPayoutDecide{}},
		{TypeFiatMerchantCharge, TopicFiatCommands, FiatMerchantCharge{}},
		{TypeFiatRequestPay, TopicFiatCommands, FiatRequestPay{}},
		{TypeFiatRefund, TopicFiatCommands, FiatRefund{}},
		{TypeCharityDonate, TopicFiatCommands, CharityDonate{}},

		{TypeMaskIssue, TopicMaskCommands, MaskIssue{}},
		{TypeMaskRevoke, TopicMaskCommands, MaskRevoke{}},
		{TypeMaskCharge, TopicMaskCommands, MaskCharge{}},

		{TypeTradeTopUp, TopicTradeCommands, TradeTopUp{}},
		{TypeTradeTransfer, TopicTradeCommands, TradeTransfer{}},

		{TypeReputationEvent, TopicReputationCommands, ReputationEvent{}},
		{TypeLedgerAppend, TopicLedgerAppend, LedgerAppend{}},
	}
}
