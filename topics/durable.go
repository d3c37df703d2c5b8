package topics

import (
	"encoding/binary"
	"errors"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Group commit for the embedded broker.
//
// kfake's SyncWrites fsyncs the segment and index file of every partition of
// every produce request inside the broker's single request loop: while one
// fsync runs, no other request (fetch, commit, produce) is served, and a
// produce touching 12 partitions pays 24 fsyncs in a row. Under the bench
// the loop spent about 85% of its time in fsync.
//
// groupCommit keeps the same promise — a produce with acks=all, an offset
// commit or a producer-id grant is acknowledged only once it is on disk — but
// moves the fsync out of the loop and shares it: the broker runs without
// SyncWrites (writes go to the page cache), every broker connection is
// wrapped, and a response that acknowledges a write is held back until an
// fsync that started after the broker wrote it has finished. One fsync round
// covers every file written since the previous round, however many requests
// wait on it; rounds run back to back while responses wait. A produce with
// acks=1 asks only that the broker wrote it (Kafka's leader acknowledgement,
// not a promise of disk) and records of volatile topics are not needed after
// a crash: both are answered at once, and acks=1 records are synced by the
// next round, before any offset commit it acknowledges.
type groupCommit struct {
	dir string // the broker's data directory
	// volatile topics are acknowledged without a sync (Spec.Volatile).
	volatile map[string]bool

	// topicName maps a topic id (produce v13+) to its name; nil until the
	// cluster is up.
	topicName func(id [16]byte) (string, bool)

	mu      sync.Mutex
	cond    *sync.Cond
	dirty   map[partKey]struct{}
	all     bool // a produce named a partition we could not resolve
	meta    bool // a waiter acknowledges group or producer-id state
	waiters []chan error
	closed  bool
	// synced is the highest segment base already synced per partition, to
	// fsync the partition directory when a segment appears.
	synced map[string]int64
	files  map[string]*os.File
	ids    map[[16]byte]string

	// fsyncs counts fsync calls, for tests.
	fsyncs int64
	// beforeRound, when set (tests), runs before each round's fsyncs.
	beforeRound func()
}

type partKey struct {
	topic string
	part  int32
}

// errBrokerClosed fails the waiters of a broker that is shutting down.
var errBrokerClosed = errors.New("embedded broker closed")

func newGroupCommit(dir string, volatile map[string]bool) *groupCommit {
	g := &groupCommit{dir: dir, volatile: volatile, dirty: map[partKey]struct{}{}, synced: map[string]int64{},
		files: map[string]*os.File{}, ids: map[[16]byte]string{}}
	g.cond = sync.NewCond(&g.mu)
	go g.loop()
	return g
}

// close releases every waiter with an error and stops the loop.
func (g *groupCommit) close() {
	g.mu.Lock()
	g.closed = true
	g.cond.Broadcast()
	g.mu.Unlock()
}

// mark records partitions a produce request is about to write.
func (g *groupCommit) mark(parts []partKey, unknown bool) {
	g.mu.Lock()
	for _, p := range parts {
		g.dirty[p] = struct{}{}
	}
	g.all = g.all || unknown
	g.mu.Unlock()
}

// await blocks until a round that starts after this call has synced parts
// and everything else marked dirty before it.
func (g *groupCommit) await(parts []partKey, meta bool) error {
	ch := make(chan error, 1)
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return errBrokerClosed
	}
	for _, p := range parts {
		g.dirty[p] = struct{}{}
	}
	g.meta = g.meta || meta
	g.waiters = append(g.waiters, ch)
	g.cond.Signal()
	g.mu.Unlock()
	return <-ch
}

func (g *groupCommit) loop() {
	for {
		g.mu.Lock()
		for len(g.waiters) == 0 && !g.closed {
			g.cond.Wait()
		}
		if g.closed {
			for _, w := range g.waiters {
				w <- errBrokerClosed
			}
			g.waiters = nil
			for _, f := range g.files {
				f.Close()
			}
			g.mu.Unlock()
			return
		}
		waiters, dirty, all, meta := g.waiters, g.dirty, g.all, g.meta
		g.waiters, g.dirty, g.all, g.meta = nil, map[partKey]struct{}{}, false, false
		g.mu.Unlock()

		if g.beforeRound != nil {
			g.beforeRound()
		}
		err := g.round(dirty, all, meta)
		for _, w := range waiters {
			w <- err
		}
	}
}

// round fsyncs the active segment and index files of the dirty partitions
// (all partitions when all) and, with meta, the group and producer-id logs,
// in parallel. Offset commits sync the dirty partitions too, so a committed
// offset never points past records that a crash could lose.
func (g *groupCommit) round(dirty map[partKey]struct{}, all, meta bool) error {
	var paths []string
	if meta {
		paths = append(paths, filepath.Join(g.dir, "groups.log"), filepath.Join(g.dir, "pids.log"))
	}
	var dirs []string
	if all {
		entries, _ := os.ReadDir(filepath.Join(g.dir, "partitions"))
		for _, e := range entries {
			dirs = append(dirs, filepath.Join(g.dir, "partitions", e.Name()))
		}
	} else {
		for p := range dirty {
			dirs = append(dirs, filepath.Join(g.dir, "partitions", url.PathEscape(p.topic)+"-"+strconv.Itoa(int(p.part))))
		}
	}
	for _, d := range dirs {
		paths = append(paths, g.activeFiles(d)...)
	}
	errs := make([]error, len(paths))
	var wg sync.WaitGroup
	for i, p := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = g.fsync(p)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// activeFiles returns the files of a partition directory to sync: the
// newest segment and its index; after a segment roll also the segments from
// the last synced one on (the broker closes a rolled segment without an
// fsync) and the directory, so the new file's name is durable.
func (g *groupCommit) activeFiles(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil // not created yet: nothing written
	}
	var bases []int64
	for _, e := range entries {
		if base, ok := strings.CutSuffix(e.Name(), ".dat"); ok {
			if b, err := strconv.ParseInt(base, 10, 64); err == nil {
				bases = append(bases, b)
			}
		}
	}
	if len(bases) == 0 {
		return nil
	}
	newest := slices.Max(bases)
	g.mu.Lock()
	last, seen := g.synced[dir]
	g.synced[dir] = newest
	g.mu.Unlock()
	files := func(b int64) []string {
		n := strconv.FormatInt(b, 10)
		return []string{filepath.Join(dir, n+".dat"), filepath.Join(dir, n+".idx")}
	}
	if seen && newest == last {
		return files(newest)
	}
	// The broker rolled past the older segments: their kept descriptors are
	// closed, and this round syncs them by name (see fsync).
	g.forget(dir, newest)
	out := []string{dir}
	for _, b := range bases {
		if !seen && b == newest || seen && b >= last {
			out = append(out, files(b)...)
		}
	}
	return out
}

func (g *groupCommit) fsync(path string) error {
	if strings.HasSuffix(path, ".log") || g.rolledPast(path) {
		// kfake compacts groups.log (and may rewrite pids.log) by writing a
		// new file and renaming it over the old one: a kept descriptor would
		// sync the replaced inode, so the log is opened by name each round.
		// A segment the broker rolled past is synced once more and let go.
		return g.syncByName(path)
	}
	g.mu.Lock()
	f := g.files[path]
	g.mu.Unlock()
	if f == nil {
		var err error
		if f, err = os.Open(path); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil // never written
			}
			return err
		}
		g.mu.Lock()
		if old := g.files[path]; old != nil {
			f.Close()
			f = old
		} else {
			g.files[path] = f
		}
		g.mu.Unlock()
	}
	g.mu.Lock()
	g.fsyncs++
	g.mu.Unlock()
	if strings.HasSuffix(path, ".dat") || strings.HasSuffix(path, ".idx") {
		// Appends: the data and the new size, not the timestamps.
		return fdatasync(f)
	}
	return f.Sync()
}

// syncByName opens path, syncs it and closes it.
func (g *groupCommit) syncByName(path string) error {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	defer f.Close()
	g.mu.Lock()
	g.fsyncs++
	g.mu.Unlock()
	return fdatasync(f)
}

// rolledPast reports whether path is a segment file older than its
// partition's newest segment.
func (g *groupCommit) rolledPast(path string) bool {
	base, ok := segmentBase(path)
	if !ok {
		return false
	}
	g.mu.Lock()
	newest, seen := g.synced[filepath.Dir(path)]
	g.mu.Unlock()
	return seen && base < newest
}

// segmentBase is the base offset a segment or index file is named after.
func segmentBase(path string) (int64, bool) {
	name := filepath.Base(path)
	trimmed := strings.TrimSuffix(strings.TrimSuffix(name, ".dat"), ".idx")
	if trimmed == name {
		return 0, false
	}
	b, err := strconv.ParseInt(trimmed, 10, 64)
	return b, err == nil
}

// forget closes the kept descriptors of a partition's segments older than
// base: the broker no longer writes them (the round of the roll syncs them
// by name) and retention may delete them, which a kept descriptor would stop
// from freeing their space.
func (g *groupCommit) forget(dir string, base int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for path, f := range g.files {
		if filepath.Dir(path) != dir {
			continue
		}
		if b, ok := segmentBase(path); ok && b < base {
			f.Close()
			delete(g.files, path)
		}
	}
}

// listen wraps the broker's listener so every connection holds back its
// write acknowledgements until they are on disk.
func (g *groupCommit) listen(network, address string) (net.Listener, error) {
	ln, err := net.Listen(network, address)
	if err != nil {
		return nil, err
	}
	return &durableListener{Listener: ln, g: g}, nil
}

type durableListener struct {
	net.Listener
	g *groupCommit
}

func (l *durableListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &durableConn{Conn: c, g: l.g, pending: map[int32][]partKey{}}, nil
}

// mutating lists the requests whose response acknowledges state the broker
// persists (records, offsets, group membership, producer ids, transactions);
// their responses wait for the sync round.
var mutating = map[int16]bool{
	0:  true, // Produce
	8:  true, // OffsetCommit
	11: true, // JoinGroup
	13: true, // LeaveGroup
	14: true, // SyncGroup
	21: true, // DeleteRecords
	22: true, // InitProducerID
	24: true, // AddPartitionsToTxn
	25: true, // AddOffsetsToTxn
	26: true, // EndTxn
	28: true, // TxnOffsetCommit
	42: true, // DeleteGroups
	47: true, // OffsetDelete
}

// durableConn parses the Kafka framing in both directions: requests (read by
// the broker) to learn which correlation ids acknowledge writes and which
// partitions a produce writes; responses (written by the broker) to hold
// those acknowledgements until the sync round.
type durableConn struct {
	net.Conn
	g *groupCommit

	// request side, touched only by the broker's reader
	in     []byte // the current request: its size and header, or all of it for a produce
	inSkip int    // bytes of a non-produce request body left to pass

	mu      sync.Mutex
	pending map[int32][]partKey // correlation id -> partitions to sync

	// response side, touched only by the broker's writer
	out     []byte // the current response's first 8 bytes (size, correlation id)
	outSkip int
}

func (c *durableConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.parseRequests(p[:n])
	return n, err
}

func (c *durableConn) parseRequests(b []byte) {
	for len(b) > 0 {
		if c.inSkip > 0 {
			k := min(c.inSkip, len(b))
			c.inSkip -= k
			b = b[k:]
			continue
		}
		// Gather the size and the header (api key, version, correlation id).
		if len(c.in) < 12 {
			k := min(12-len(c.in), len(b))
			c.in = append(c.in, b[:k]...)
			b = b[k:]
			if len(c.in) < 12 {
				return
			}
			size := int(binary.BigEndian.Uint32(c.in))
			key := int16(binary.BigEndian.Uint16(c.in[4:]))
			corr := int32(binary.BigEndian.Uint32(c.in[8:]))
			if size < 8 {
				c.in = c.in[:0] // malformed; the broker drops the connection
				continue
			}
			if key != 0 { // not a produce: note it and pass the body
				if mutating[key] {
					c.mu.Lock()
					c.pending[corr] = nil
					c.mu.Unlock()
				}
				c.in = c.in[:0]
				c.inSkip = size - 8
				continue
			}
		}
		// A produce: gather it whole to read its partitions.
		size := int(binary.BigEndian.Uint32(c.in))
		k := min(4+size-len(c.in), len(b))
		c.in = append(c.in, b[:k]...)
		b = b[k:]
		if len(c.in) == 4+size {
			c.produce(c.in[4:])
			c.in = c.in[:0]
		}
	}
}

// produce notes the partitions of a produce request (body from the api key
// on) and marks them dirty before the broker writes them.
func (c *durableConn) produce(body []byte) {
	r := kbin.Reader{Src: body}
	r.Int16() // api key
	version := r.Int16()
	corr := r.Int32()
	r.NullableString() // client id
	req := kmsg.NewPtrProduceRequest()
	req.SetVersion(version)
	if req.IsFlexible() {
		kmsg.SkipTags(&r)
	}
	var parts []partKey
	unknown := req.ReadFrom(r.Src) != nil
	for _, t := range req.Topics {
		name := t.Topic
		if version >= 13 {
			var ok bool
			if name, ok = c.g.topic(t.TopicID); !ok {
				unknown = true
				continue
			}
		}
		if c.g.volatile[name] {
			continue
		}
		for _, p := range t.Partitions {
			parts = append(parts, partKey{topic: name, part: p.Partition})
		}
	}
	if len(parts) == 0 && !unknown {
		return // only volatile records: acknowledged as soon as written
	}
	// Marked dirty whatever the acks, so that the next round syncs them
	// before any offset commit it acknowledges: a committed offset never
	// points past records a host crash could lose.
	c.g.mark(parts, unknown)
	if req.Acks != -1 {
		// acks=0 has no response; acks=1 asks only that the leader wrote
		// the records (Kafka's meaning: in its log, not yet on disk
		// everywhere). Durability is what acks=all asks for.
		return
	}
	if unknown {
		parts = append(parts, partKey{}) // makes the round sync everything
	}
	c.mu.Lock()
	c.pending[corr] = parts
	c.mu.Unlock()
}

func (g *groupCommit) topic(id [16]byte) (string, bool) {
	g.mu.Lock()
	name, ok := g.ids[id]
	lookup := g.topicName
	g.mu.Unlock()
	if ok || lookup == nil {
		return name, ok
	}
	if name, ok = lookup(id); ok {
		g.mu.Lock()
		g.ids[id] = name
		g.mu.Unlock()
	}
	return name, ok
}

func (c *durableConn) Write(p []byte) (int, error) {
	hold, meta, parts := c.parseResponses(p)
	if hold {
		all := false
		for _, k := range parts {
			all = all || k == (partKey{})
		}
		if all {
			c.g.mark(nil, true)
		}
		if err := c.g.await(parts, meta); err != nil {
			c.Conn.Close()
			return 0, err
		}
	}
	return c.Conn.Write(p)
}

// parseResponses reports whether b starts a response that acknowledges a
// write, whether that is group or producer-id state (meta), and the
// partitions it needs synced.
func (c *durableConn) parseResponses(b []byte) (hold, meta bool, parts []partKey) {
	for len(b) > 0 {
		if c.outSkip > 0 {
			k := min(c.outSkip, len(b))
			c.outSkip -= k
			b = b[k:]
			continue
		}
		k := min(8-len(c.out), len(b))
		c.out = append(c.out, b[:k]...)
		b = b[k:]
		if len(c.out) < 8 {
			break
		}
		size := int(binary.BigEndian.Uint32(c.out))
		corr := int32(binary.BigEndian.Uint32(c.out[4:]))
		c.out = c.out[:0]
		c.outSkip = max(size-4, 0)
		c.mu.Lock()
		ps, ok := c.pending[corr]
		delete(c.pending, corr)
		c.mu.Unlock()
		if ok {
			hold = true
			meta = meta || ps == nil
			parts = append(parts, ps...)
		}
	}
	return hold, meta, parts
}
