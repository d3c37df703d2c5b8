-- +goose Up
-- Governance proposals. Written directly by the gateway (low write rate):
-- each state change and its outbox rows commit in one transaction. Mode,
-- options, quorum and threshold are never updated (frozen from creation,
-- and a fortiori after open). threshold is the exact decimal as text
-- (0 < t < 1), so tallies compare against it without rounding.
CREATE TABLE gov_proposals (
    id                      text PRIMARY KEY,
    title                   text NOT NULL,
    summary                 text NOT NULL DEFAULT '',
    body                    text NOT NULL DEFAULT '',
    category                text NOT NULL DEFAULT '',
    vote_mode               text NOT NULL CHECK (vote_mode IN ('yes-no-abstain', 'ranked-choice', 'weighted')),
    options                 jsonb NOT NULL DEFAULT '[]',
    quorum                  integer NOT NULL CHECK (quorum >= 1),
    threshold               text NOT NULL,
    voting_duration_seconds integer NOT NULL CHECK (voting_duration_seconds BETWEEN 1 AND 31536000),
    status                  text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'open', 'executed', 'rejected')),
    author_user_id          text NOT NULL REFERENCES users (id),
    votes_open_at           timestamptz,
    votes_close_at          timestamptz,
    closed_at               timestamptz,
    closed_by               text,
    ballots                 integer,
    tally                   jsonb,
    created_at              timestamptz NOT NULL
);
CREATE INDEX gov_proposals_status ON gov_proposals (status, id);
CREATE INDEX gov_proposals_category ON gov_proposals (category, id);
CREATE INDEX gov_proposals_author ON gov_proposals (author_user_id, id);

-- One ballot per (proposal, user): the unique index is what refuses a
-- second ballot, also when two arrive at once.
CREATE TABLE gov_ballots (
    id          text PRIMARY KEY,
    proposal_id text NOT NULL REFERENCES gov_proposals (id),
    user_id     text NOT NULL REFERENCES users (id),
    choice      text NOT NULL DEFAULT '',
    ranking     jsonb,
    weights     jsonb,
    reason      text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL
);
CREATE UNIQUE INDEX gov_ballots_one_per_user ON gov_ballots (proposal_id, user_id);
CREATE INDEX gov_ballots_proposal ON gov_ballots (proposal_id, id);

-- +goose Down
DROP TABLE gov_ballots;
DROP TABLE gov_proposals;
