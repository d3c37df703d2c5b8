package fiat

// MissingLedgerEntriesSQL lists, in the columns of a ledger re-anchoring
// source (consumers/ledger.SQLSource), every completed transfer, deposit,
// withdrawal, merchant charge, request payment and refund without its fiat:
// entry. A deposit keeps the entry id it answered with; the actor is the
// receiving user for a deposit and the paying one otherwise, as the fiat
// applier sets it.
const MissingLedgerEntriesSQL = `
SELECT coalesce(nullif(d.ledger_entry_id, ''), '') AS entry_id,
       'fiat:' || t.kind AS kind,
       t.id AS source_id,
       CASE WHEN t.kind = 'deposit' THEN t.to_user ELSE t.from_user END AS actor_user_id,
       t.amount AS amount_cents,
       t.currency,
       json_build_object('reanchored', true, 'fromWallet', t.from_wallet, 'toWallet', t.to_wallet,
                         'feeMinor', t.fee)::text AS meta
FROM fiat_transactions t
LEFT JOIN fiat_deposits d ON d.transaction_id = t.id AND t.kind = 'deposit'
WHERE t.kind IN ('transfer', 'deposit', 'withdrawal', 'merchant_charge', 'request_payment', 'refund') AND t.status = 'completed'
  AND NOT EXISTS (SELECT 1 FROM ledger_entries e WHERE e.kind = 'fiat:' || t.kind AND e.source_id = t.id)
ORDER BY t.created_at, t.id`
