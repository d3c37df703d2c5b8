package charity

// MissingLedgerEntriesSQL lists, in the columns of a ledger re-anchoring
// source (consumers/ledger.SQLSource), every donation without its
// charity:donation entry. The entry keeps the id the donation answered with
// (ledger_entry_id); an anonymous donation's entry names no donor.
const MissingLedgerEntriesSQL = `
SELECT d.ledger_entry_id AS entry_id,
       'charity:donation' AS kind,
       d.id AS source_id,
       CASE WHEN d.anonymous THEN 'anonymous' ELSE d.donor_user_id END AS actor_user_id,
       d.amount_kzt AS amount_cents,
       'KZT' AS currency,
       json_build_object('reanchored', true, 'campaignId', d.campaign_id, 'donationId', d.id,
                         'transactionId', d.transaction_id, 'anonymous', d.anonymous)::text AS meta
FROM charity_donations d
WHERE NOT EXISTS (SELECT 1 FROM ledger_entries e WHERE e.kind = 'charity:donation' AND e.source_id = d.id)
ORDER BY d.created_at, d.id`
