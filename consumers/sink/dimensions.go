package sink

import (
	"github.com/fintech/platform/schemas"
	"github.com/fintech/platform/storage/clickhouse"
)

// campaignVersions and proposalVersions order a campaign's and a proposal's
// events by lifecycle step: the dimension row of the latest step wins.
var (
	campaignVersions = map[string]uint64{
		schemas.TypeCampaignCreated:  clickhouse.VersionCreated,
		schemas.TypeCampaignApproved: clickhouse.VersionOpened,
	}
	proposalVersions = map[string]uint64{
		schemas.TypeProposalCreated:  clickhouse.VersionCreated,
		schemas.TypeProposalOpened:   clickhouse.VersionOpened,
		schemas.TypeProposalPassed:   clickhouse.VersionClosed,
		schemas.TypeProposalRejected: clickhouse.VersionClosed,
	}
)

// convertDimension adds the dimension row an event carries, if any. The
// user row takes the display name only: never the e-mail the event holds.
func convertDimension(env schemas.Envelope, out *clickhouse.Rows) error {
	switch {
	case env.Type == schemas.TypeUserRegistered:
		u, err := schemas.DataAs[schemas.UserRegistered](env)
		if err != nil {
			return err
		}
		out.Users = append(out.Users, clickhouse.UserRow{UserID: u.UserID, DisplayName: u.Name,
			RegisteredAt: env.OccurredAt, Version: clickhouse.VersionCreated})
	case env.Type == schemas.TypeWalletCreated:
		w, err := schemas.DataAs[schemas.WalletCreated](env)
		if err != nil {
			return err
		}
		out.Wallets = append(out.Wallets, clickhouse.WalletRow{WalletID: w.WalletID, OwnerUserID: w.UserID,
			Currency: w.Currency, Kind: w.Kind, CreatedAt: w.CreatedAt, Version: clickhouse.VersionCreated})
	case campaignVersions[env.Type] > 0:
		c, err := schemas.DataAs[schemas.CampaignEvent](env)
		if err != nil {
			return err
		}
		out.Campaigns = append(out.Campaigns, clickhouse.CampaignRow{CampaignID: c.CampaignID,
			ProposerUserID: c.ProposerUserID, Title: c.Title, Category: c.Category, GoalKzt: c.GoalKzt,
			Status: c.Status, UpdatedAt: env.OccurredAt, Version: campaignVersions[env.Type]})
	case proposalVersions[env.Type] > 0:
		p, err := schemas.DataAs[schemas.ProposalEvent](env)
		if err != nil {
			return err
		}
		out.Proposals = append(out.Proposals, clickhouse.ProposalRow{ProposalID: p.ProposalID,
			AuthorUserID: p.AuthorUserID, Title: p.Title, Category: p.Category, VoteMode: p.VoteMode,
			Status: p.Status, Quorum: p.Quorum, Ballots: p.Ballots, QuorumMet: p.QuorumMet, Passing: p.Passing,
			UpdatedAt: env.OccurredAt, Version: proposalVersions[env.Type]})
	case env.Type == schemas.TypeWebhookDeliveryUpdated:
		d, err := schemas.DataAs[schemas.WebhookDeliveryUpdated](env)
		if err != nil {
			return err
		}
		out.WebhookDeliveries = append(out.WebhookDeliveries, clickhouse.WebhookDeliveryRow{DeliveryID: d.DeliveryID,
			WebhookID: d.WebhookID, EventID: d.EventID, EventType: d.EventType, Status: d.Status,
			Attempts: int64(d.Attempts), LastStatusCode: int64(d.LastStatusCode), UpdatedAt: d.UpdatedAt})
	}
	return nil
}
