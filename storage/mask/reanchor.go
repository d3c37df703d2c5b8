package mask

// MissingLedgerEntriesSQL lists, in the columns of a ledger re-anchoring
// source (consumers/ledger.SQLSource), every authorized mask charge without
// its mask:charge entry; a declined charge moved no money and has none.
const MissingLedgerEntriesSQL = `
SELECT '' AS entry_id,
       'mask:charge' AS kind,
       c.id AS source_id,
       c.user_id AS actor_user_id,
       c.amount_cents,
       c.currency,
       json_build_object('reanchored', true, 'maskId', c.mask_id, 'paymentRef', c.payment_ref,
                         'merchant', c.merchant, 'merchantCategory', c.merchant_category)::text AS meta
FROM mask_charges c
WHERE c.status = 'authorized'
  AND NOT EXISTS (SELECT 1 FROM ledger_entries e WHERE e.kind = 'mask:charge' AND e.source_id = c.id)
ORDER BY c.created_at, c.id`
