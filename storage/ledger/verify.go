package ledger

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fintech/platform/schemas"
)

// VerifyResult is the chain verification result of the spec. On failure
// BrokenAt is the first height whose entry does not hold, with the prevHash
// it should carry (the previous entry's hash) and the one it carries; Reason
// says what broke, and for a recomputed hash that differs from the stored
// one ExpectedHash and FoundHash show both.
type VerifyResult = schemas.LedgerVerifyResult

// Reasons a chain breaks.
const (
	ReasonPrevHash = "prev_hash_mismatch" // prevHash is not the previous entry's hash
	ReasonHash     = "hash_mismatch"      // the recomputed hash differs from the stored one
	ReasonGap      = "height_gap"         // an entry is missing
)

// Conn is what verification needs from a pool. (Stopping at a broken link
// cancels the streaming query, which closes its connection: use a pool.)
type Conn interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

const verifySQL = `SELECT height, kind, actor_user_id, source_id, amount_cents, currency, meta,
       ts, prev_hash, hash
FROM ledger_entries WHERE height > $1 ORDER BY height`

// pgEpochMicros is 2000-01-01 in Unix microseconds (the binary timestamptz
// epoch).
const pgEpochMicros = 946684800000000

const chunkRows = 2048

// Verify walks the whole chain in height order and checks every link: each
// entry's prevHash is the previous entry's hash (64 zeros for the first),
// heights have no gap, and each stored hash equals the hash recomputed with
// salt. Rows are streamed in the binary protocol, and hashing runs on
// workers goroutines (0 = one per CPU) with reusable buffers.
func Verify(ctx context.Context, db Conn, salt string, workers int, now func() time.Time) (VerifyResult, error) {
	return VerifyFrom(ctx, db, salt, workers, now, Checkpoint{})
}

// VerifyFrom walks the entries above from, a head verified before: the
// first must link to from.Hash. The zero Checkpoint walks the whole chain.
func VerifyFrom(ctx context.Context, db Conn, salt string, workers int, now func() time.Time, from Checkpoint) (VerifyResult, error) {
	start := time.Now()
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	v := &verifier{salt: salt}
	v.minFail.Store(1<<63 - 1)
	jobs := make(chan *chunk, workers*2)
	free := make(chan *chunk, workers*3)
	for i := 0; i < workers*3; i++ {
		free <- &chunk{arena: make([]byte, 0, chunkRows*400), rows: make([]chunkRow, 0, chunkRows)}
	}
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := newHasher(salt)
			for c := range jobs {
				v.check(h, c)
				c.reset()
				free <- c
			}
		}()
	}

	last, readErr := v.read(ctx, db, jobs, free, from)
	close(jobs)
	wg.Wait()
	if readErr != nil {
		return VerifyResult{}, readErr
	}

	res := VerifyResult{Valid: true, Height: last.height, HeadHash: last.hash}
	if res.HeadHash == "" {
		res.HeadHash = GenesisPrevHash
	}
	if f := v.first(); f != nil {
		res.Valid = false
		res.Height, res.HeadHash = 0, GenesisPrevHash
		if err := db.QueryRow(ctx, `SELECT height, hash FROM ledger_entries ORDER BY height DESC LIMIT 1`).
			Scan(&res.Height, &res.HeadHash); err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return VerifyResult{}, fmt.Errorf("read ledger head: %w", err)
		}
		at := f.height
		res.BrokenAt = &at
		res.ExpectedPrevHash, res.FoundPrevHash = &f.expectedPrev, &f.foundPrev
		res.Reason, res.ExpectedHash, res.FoundHash = f.reason, f.expectedHash, f.foundHash
	}
	res.Verified = res.Valid
	res.VerifiedFrom = from.Height
	res.VerifiedAt = now().UTC().Format(time.RFC3339Nano)
	res.MsToVerify = time.Since(start).Milliseconds()
	return res, nil
}

type failure struct {
	height       int64
	reason       string
	expectedPrev string
	foundPrev    string
	expectedHash string
	foundHash    string
}

type verifier struct {
	salt    string
	minFail atomic.Int64
	mu      sync.Mutex
	fails   []failure
}

func (v *verifier) fail(f failure) {
	v.mu.Lock()
	v.fails = append(v.fails, f)
	v.mu.Unlock()
	for {
		cur := v.minFail.Load()
		if f.height >= cur || v.minFail.CompareAndSwap(cur, f.height) {
			return
		}
	}
}

func (v *verifier) first() *failure {
	var best *failure
	for i := range v.fails {
		f := &v.fails[i]
		if best == nil || f.height < best.height || (f.height == best.height && f.reason == ReasonPrevHash) {
			best = f
		}
	}
	return best
}

type span struct{ start, end int32 }

type chunkRow struct {
	height, amount, tsMicros                            int64
	hasAmount, hasCurrency, hasMeta                     bool
	kind, actor, source, currency, meta, prevHash, hash span
}

type chunk struct {
	arena []byte
	rows  []chunkRow
}

func (c *chunk) reset() {
	c.arena = c.arena[:0]
	c.rows = c.rows[:0]
}

func (c *chunk) put(b []byte) span {
	s := int32(len(c.arena))
	c.arena = append(c.arena, b...)
	return span{s, int32(len(c.arena))}
}

func (c *chunk) get(s span) []byte { return c.arena[s.start:s.end] }

type lastRow struct {
	height int64
	hash   string
}

// read streams the rows into chunks for the workers and checks heights and
// prevHash links on the way (cheap, sequential).
func (v *verifier) read(ctx context.Context, db Conn, jobs chan<- *chunk, free <-chan *chunk, from Checkpoint) (lastRow, error) {
	// The walk reads on its own context: stopping early aborts the query
	// instead of draining the rest of the chain off the wire.
	qctx, stop := context.WithCancel(ctx)
	defer stop()
	rows, err := db.Query(qctx, verifySQL, pgx.QueryResultFormats{pgx.BinaryFormatCode}, from.Height)
	if err != nil {
		return lastRow{}, fmt.Errorf("stream ledger entries: %w", err)
	}
	defer rows.Close()

	var prevHash [64]byte
	copy(prevHash[:], GenesisPrevHash)
	if from.Height > 0 {
		copy(prevHash[:], from.Hash)
	}
	last := lastRow{height: from.Height}
	expectHeight := from.Height + 1
	c := <-free
	stopped := false
	for rows.Next() {
		raw := rows.RawValues()
		if len(raw) != 10 || len(raw[0]) != 8 || len(raw[7]) != 8 {
			return lastRow{}, errors.New("stream ledger entries: unexpected row shape")
		}
		r := chunkRow{height: int64(binary.BigEndian.Uint64(raw[0])),
			tsMicros: int64(binary.BigEndian.Uint64(raw[7])) + pgEpochMicros}
		if r.height > v.minFail.Load() {
			stopped = true
			break
		}
		if r.height != expectHeight {
			v.fail(failure{height: expectHeight, reason: ReasonGap,
				expectedPrev: string(prevHash[:]), foundPrev: string(raw[8])})
			stopped = true
			break
		}
		if !bytes.Equal(raw[8], prevHash[:]) {
			v.fail(failure{height: r.height, reason: ReasonPrevHash,
				expectedPrev: string(prevHash[:]), foundPrev: string(raw[8])})
			stopped = true
			break
		}
		r.kind, r.actor, r.source = c.put(raw[1]), c.put(raw[2]), c.put(raw[3])
		if raw[4] != nil {
			r.hasAmount, r.amount = true, int64(binary.BigEndian.Uint64(raw[4]))
		}
		if raw[5] != nil {
			r.hasCurrency, r.currency = true, c.put(raw[5])
		}
		if raw[6] != nil {
			r.hasMeta, r.meta = true, c.put(raw[6])
		}
		r.prevHash, r.hash = c.put(raw[8]), c.put(raw[9])
		c.rows = append(c.rows, r)

		// The next link must point at this entry's stored hash; the workers
		// check that the stored hash is the recomputed one.
		if len(raw[9]) == 64 {
			copy(prevHash[:], raw[9])
		} else {
			prevHash = [64]byte{}
		}
		last = lastRow{height: r.height}
		expectHeight++

		if len(c.rows) == chunkRows {
			jobs <- c
			c = <-free
		}
	}
	if len(c.rows) > 0 {
		jobs <- c
	}
	if stopped {
		stop()
		return last, nil
	}
	if err := rows.Err(); err != nil {
		return lastRow{}, fmt.Errorf("stream ledger entries: %w", err)
	}
	last.hash = string(prevHash[:])
	if last.height == 0 {
		last.hash = GenesisPrevHash
	}
	return last, nil
}

// check recomputes every hash of a chunk.
func (v *verifier) check(h *hasher, c *chunk) {
	for i := range c.rows {
		r := &c.rows[i]
		if r.height > v.minFail.Load() {
			return
		}
		re := rawEntry{height: r.height, kind: c.get(r.kind), actor: c.get(r.actor), source: c.get(r.source),
			prevHash: c.get(r.prevHash), amount: r.amount, tsMicros: r.tsMicros,
			hasAmount: r.hasAmount, hasCurrency: r.hasCurrency, hasMeta: r.hasMeta}
		if r.hasCurrency {
			re.currency = c.get(r.currency)
		}
		if r.hasMeta {
			re.meta = c.get(r.meta)
		}
		got := h.hexHash(re)
		stored := c.get(r.hash)
		if !bytes.Equal(got, stored) {
			p := string(re.prevHash)
			v.fail(failure{height: r.height, reason: ReasonHash, expectedPrev: p, foundPrev: p,
				expectedHash: string(got), foundHash: string(stored)})
			return
		}
	}
}

// ChainVerifier verifies the chain incrementally: a call walks only the
// entries above the last verified head (kept in ledger_verified), so that
// no request can force a walk of the whole chain; Full walks the whole
// chain (the background audit) and records what it found.
type ChainVerifier struct {
	db   VerifyDB
	salt string
	now  func() time.Time
}

// VerifyDB is what the verifier needs from a pool.
type VerifyDB interface {
	Conn
	Execer
}

// NewVerifier builds a ChainVerifier.
func NewVerifier(db VerifyDB, salt string, now func() time.Time) *ChainVerifier {
	return &ChainVerifier{db: db, salt: salt, now: now}
}

// Verify checks the entries appended since the last verified head and
// moves it. A break recorded by a walk (a full one finds one below the
// head) is answered as it was found until a full walk finds the chain
// whole. When the entry at the verified head no longer carries its hash,
// the whole chain is walked.
func (v *ChainVerifier) Verify(ctx context.Context) (VerifyResult, error) {
	st, err := ReadVerified(ctx, v.db)
	if err != nil {
		return VerifyResult{}, err
	}
	if st.Broken != nil {
		return withFullWalk(*st.Broken, st.FullWalkAt), nil
	}
	from := st.Checkpoint
	full := from.Height == 0
	if !full {
		hash, ok, err := EntryHash(ctx, v.db, from.Height)
		if err != nil {
			return VerifyResult{}, err
		}
		if !ok || hash != from.Hash {
			from, full = Checkpoint{}, true
		}
	}
	res, err := VerifyFrom(ctx, v.db, v.salt, 0, v.now, from)
	if err != nil {
		return VerifyResult{}, err
	}
	// A walk from the genesis is a full walk, whoever asked for it.
	if err := RecordWalk(ctx, v.db, res, full, v.now().UTC()); err != nil {
		return VerifyResult{}, err
	}
	if full {
		t := v.now().UTC()
		st.FullWalkAt = &t
	}
	return withFullWalk(res, st.FullWalkAt), nil
}

// Full walks the whole chain and records the result: a valid walk moves
// the verified head and clears a recorded break; a break is recorded.
func (v *ChainVerifier) Full(ctx context.Context) (VerifyResult, error) {
	res, err := Verify(ctx, v.db, v.salt, 0, v.now)
	if err != nil {
		return VerifyResult{}, err
	}
	at := v.now().UTC()
	if err := RecordWalk(ctx, v.db, res, true, at); err != nil {
		return VerifyResult{}, err
	}
	return withFullWalk(res, &at), nil
}

func withFullWalk(res VerifyResult, at *time.Time) VerifyResult {
	if at != nil {
		res.FullWalkAt = at.UTC().Format(time.RFC3339Nano)
	}
	return res
}

// FullWalk is the ChainVerifier seen by the background audit: its Verify is
// the full walk.
type FullWalk struct{ V *ChainVerifier }

// Verify walks the whole chain (ChainVerifier.Full).
func (f FullWalk) Verify(ctx context.Context) (VerifyResult, error) { return f.V.Full(ctx) }
