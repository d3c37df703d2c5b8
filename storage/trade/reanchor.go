package trade

// MissingLedgerEntriesSQL lists, in the columns of a ledger re-anchoring
// source (consumers/ledger.SQLSource), every top-up and transfer without its
// trade:topup or trade:transfer entry. The actor is the account holder who
// asked (the receiving account's for a top-up, the sending one's for a
// transfer), as the trade applier sets it; the exact amount is a decimal
// string in meta, formatted as schemas.FormatTNU does, since amountCents does
// not apply to 10^-7 units.
const MissingLedgerEntriesSQL = `
SELECT '' AS entry_id,
       'trade:' || o.kind AS kind,
       o.id AS source_id,
       a.user_id AS actor_user_id,
       NULL::bigint AS amount_cents,
       '' AS currency,
       json_strip_nulls(json_build_object('reanchored', true,
                         'amount', trim_scale(o.amount::numeric / 10000000)::text,
                         'currency', 'TNU', 'to', o.to_account, 'from', o.from_account))::text AS meta
FROM trade_operations o
JOIN trade_accounts a ON a.id = coalesce(o.from_account, o.to_account)
WHERE NOT EXISTS (SELECT 1 FROM ledger_entries e WHERE e.kind = 'trade:' || o.kind AND e.source_id = o.id)
ORDER BY o.created_at, o.id`
