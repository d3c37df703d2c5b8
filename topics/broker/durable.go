package broker

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

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
// covers the files every waiting response needs, however many wait on it;
// rounds run back to back while responses wait, and a file unchanged since
// its last sync is not synced again.
//
// What a response needs: a produce with acks=all, its partitions; an offset
// commit, the partitions it commits and groups.log, so a committed offset
// never points past records a host crash could lose; group membership,
// groups.log; producer ids and transactions, pids.log. A produce with acks=1
// asks only that the broker wrote it (Kafka's leader acknowledgement, not a
// promise of disk) and records of volatile topics are not needed after a
// crash: both are answered at once, and an acks=1 record is synced by the
// round of the first offset commit past it.
type groupCommit struct {
	dir string // the broker's data directory
	// volatile topics are acknowledged without a sync (topics.Spec.Volatile).
	volatile map[string]bool

	// topicName maps a topic id (produce v13+, offset commit v10+) to its
	// name; nil until the cluster is up.
	topicName func(id [16]byte) (string, bool)

	mu      sync.Mutex
	cond    *sync.Cond
	need    need // what the waiters of the next round need, merged
	waiters []chan error
	closed  bool
	// synced is the highest segment base already synced per partition, to
	// fsync the partition directory when a segment appears.
	synced map[string]int64
	files  map[string]*os.File
	ids    map[[16]byte]string
	// lastSync is each file as it was just before its last successful
	// sync: the same file with the same size and modification time has
	// nothing new to sync.
	lastSync map[string]os.FileInfo

	// fsyncs counts fsync calls (Embedded.Fsyncs).
	fsyncs int64
	// observe, when set (WithFsyncObserver), is told how long each fsync
	// took.
	observe func(time.Duration)
	// beforeRound, when set (tests), runs before each round's fsyncs.
	beforeRound func()
}

type partKey struct {
	topic string
	part  int32
}

// need is what one acknowledgement waits for, or what a round syncs.
type need struct {
	parts  map[partKey]struct{}
	all    bool // every partition: a request named one we could not resolve
	groups bool // groups.log: offsets and group membership
	pids   bool // pids.log: producer ids and transactions
}

func (n *need) addPart(p partKey) {
	if n.parts == nil {
		n.parts = map[partKey]struct{}{}
	}
	n.parts[p] = struct{}{}
}

func (n *need) merge(o need) {
	for p := range o.parts {
		n.addPart(p)
	}
	n.all = n.all || o.all
	n.groups = n.groups || o.groups
	n.pids = n.pids || o.pids
}

// errBrokerClosed fails the waiters of a broker that is shutting down.
var errBrokerClosed = errors.New("embedded broker closed")

func newGroupCommit(dir string, volatile map[string]bool) *groupCommit {
	g := &groupCommit{dir: dir, volatile: volatile, synced: map[string]int64{},
		files: map[string]*os.File{}, ids: map[[16]byte]string{}, lastSync: map[string]os.FileInfo{}}
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

// await blocks until a round that starts after this call has synced what n
// names.
func (g *groupCommit) await(n need) error {
	ch := make(chan error, 1)
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return errBrokerClosed
	}
	g.need.merge(n)
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
		waiters, n := g.waiters, g.need
		g.waiters, g.need = nil, need{}
		g.mu.Unlock()

		if g.beforeRound != nil {
			g.beforeRound()
		}
		err := g.round(n)
		for _, w := range waiters {
			w <- err
		}
	}
}

// round fsyncs, in parallel, the logs n names and the active segment files
// of its partitions (of every partition with n.all) that changed since their
// last sync.
func (g *groupCommit) round(n need) error {
	var paths []string
	if n.groups {
		paths = append(paths, filepath.Join(g.dir, "groups.log"))
	}
	if n.pids {
		paths = append(paths, filepath.Join(g.dir, "pids.log"))
	}
	var dirs []string
	if n.all {
		entries, _ := os.ReadDir(filepath.Join(g.dir, "partitions"))
		for _, e := range entries {
			dirs = append(dirs, filepath.Join(g.dir, "partitions", e.Name()))
		}
	} else {
		for p := range n.parts {
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
// newest segment; after a segment roll also the segments from the last
// synced one on (the broker closes a rolled segment without an fsync) and the
// directory, so the new file's name is durable. Index files (.idx) are not
// synced: kfake rebuilds a partition from its segments and reads a missing
// index entry as leader epoch 0 outside a transaction, which is what every
// batch of this single-broker cluster without transactions carries.
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
		return []string{filepath.Join(dir, n+".dat")}
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
	// Stat before syncing: what the stat saw is on disk once the sync
	// returns, and a file that still looks the same later has nothing new.
	info, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil // never written
		}
		return err
	}
	g.mu.Lock()
	last := g.lastSync[path]
	g.mu.Unlock()
	if last != nil && os.SameFile(last, info) && last.Size() == info.Size() && last.ModTime().Equal(info.ModTime()) {
		return nil
	}
	if err := g.sync(path); err != nil {
		return err
	}
	g.mu.Lock()
	g.lastSync[path] = info
	g.mu.Unlock()
	return nil
}

func (g *groupCommit) sync(path string) error {
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
	if strings.HasSuffix(path, ".dat") {
		// Appends: the data and the new size, not the timestamps.
		return g.timed(func() error { return fdatasync(f) })
	}
	return g.timed(f.Sync)
}

// timed counts one fsync, runs it and reports its duration to observe.
func (g *groupCommit) timed(sync func() error) error {
	g.mu.Lock()
	g.fsyncs++
	observe := g.observe
	g.mu.Unlock()
	start := time.Now()
	err := sync()
	if observe != nil {
		observe(time.Since(start))
	}
	return err
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
	return g.timed(func() error { return fdatasync(f) })
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
	for path := range g.lastSync {
		if filepath.Dir(path) != dir {
			continue
		}
		if b, ok := segmentBase(path); ok && b < base {
			delete(g.lastSync, path)
		}
	}
}

// listen wraps the broker's listener so every connection holds back its
// write acknowledgements until they are on disk. It listens on a loopback
// address only: the broker has no authentication, and a client that can
// produce to the command topics submits commands as any user (README,
// Security), so it must not be reachable from another host.
func (g *groupCommit) listen(network, address string) (net.Listener, error) {
	if err := loopbackOnly(address); err != nil {
		return nil, err
	}
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
	return &durableConn{Conn: c, g: l.g, pending: map[int32]need{}}, nil
}

// logsOf lists the requests whose response acknowledges state the broker
// persists in its logs, and which logs; their responses wait for a sync
// round. Produce and OffsetCommit are read whole (durableConn.request) to
// learn their partitions too.
var logsOf = map[int16]need{
	11: {groups: true},             // JoinGroup
	13: {groups: true},             // LeaveGroup
	14: {groups: true},             // SyncGroup
	21: {groups: true, pids: true}, // DeleteRecords
	22: {pids: true},               // InitProducerID
	24: {groups: true, pids: true}, // AddPartitionsToTxn
	25: {groups: true, pids: true}, // AddOffsetsToTxn
	26: {groups: true, pids: true}, // EndTxn
	28: {groups: true, pids: true}, // TxnOffsetCommit
	42: {groups: true},             // DeleteGroups
	47: {groups: true},             // OffsetDelete
}

const (
	keyProduce      = 0
	keyOffsetCommit = 8
)

// durableConn parses the Kafka framing in both directions: requests (read by
// the broker) to learn which correlation ids acknowledge writes and which
// partitions a produce writes; responses (written by the broker) to hold
// those acknowledgements until the sync round.
type durableConn struct {
	net.Conn
	g *groupCommit

	// request side, touched only by the broker's reader
	in     []byte // the current request: its size and header, or all of it for a produce or offset commit
	inSkip int    // bytes of another request's body left to pass

	mu      sync.Mutex
	pending map[int32]need // correlation id -> what its response waits for

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
			if key != keyProduce && key != keyOffsetCommit { // note it and pass the body
				if n, ok := logsOf[key]; ok {
					c.hold(corr, n)
				}
				c.in = c.in[:0]
				c.inSkip = size - 8
				continue
			}
		}
		// A produce or offset commit: gather it whole to read its partitions.
		size := int(binary.BigEndian.Uint32(c.in))
		k := min(4+size-len(c.in), len(b))
		c.in = append(c.in, b[:k]...)
		b = b[k:]
		if len(c.in) == 4+size {
			c.request(c.in[4:])
			c.in = c.in[:0]
		}
	}
}

func (c *durableConn) hold(corr int32, n need) {
	c.mu.Lock()
	c.pending[corr] = n
	c.mu.Unlock()
}

// request reads a produce or offset commit (body from the api key on) and
// notes what its response must wait for: the partitions of a produce with
// acks=all; the partitions an offset commit commits, and groups.log.
func (c *durableConn) request(body []byte) {
	r := kbin.Reader{Src: body}
	key := r.Int16()
	version := r.Int16()
	corr := r.Int32()
	r.NullableString() // client id
	var n need
	if key == keyOffsetCommit {
		n.groups = true
		req := kmsg.NewPtrOffsetCommitRequest()
		req.SetVersion(version)
		if req.IsFlexible() {
			kmsg.SkipTags(&r)
		}
		n.all = req.ReadFrom(r.Src) != nil
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				c.addPart(&n, t.Topic, t.TopicID, version >= 10, p.Partition)
			}
		}
		c.hold(corr, n)
		return
	}
	req := kmsg.NewPtrProduceRequest()
	req.SetVersion(version)
	if req.IsFlexible() {
		kmsg.SkipTags(&r)
	}
	n.all = req.ReadFrom(r.Src) != nil
	if !n.all && req.Acks != -1 {
		// acks=0 has no response; acks=1 asks only that the leader wrote
		// the records (Kafka's meaning: in its log, not yet on disk
		// everywhere). Durability is what acks=all asks for; an offset
		// commit past these records syncs them.
		return
	}
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			c.addPart(&n, t.Topic, t.TopicID, version >= 13, p.Partition)
		}
	}
	if len(n.parts) == 0 && !n.all {
		return // only volatile records: acknowledged as soon as written
	}
	c.hold(corr, n)
}

// addPart adds a partition named by topic (or by id, when byID) to n, unless
// its topic is volatile; a topic id that does not resolve makes n need every
// partition.
func (c *durableConn) addPart(n *need, topic string, id [16]byte, byID bool, part int32) {
	if byID {
		var ok bool
		if topic, ok = c.g.topic(id); !ok {
			n.all = true
			return
		}
	}
	if c.g.volatile[topic] {
		return
	}
	n.addPart(partKey{topic: topic, part: part})
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
	if n, hold := c.parseResponses(p); hold {
		if err := c.g.await(n); err != nil {
			c.Conn.Close()
			return 0, err
		}
	}
	return c.Conn.Write(p)
}

// parseResponses reports whether b starts a response that acknowledges a
// write, and what those acknowledgements need synced.
func (c *durableConn) parseResponses(b []byte) (n need, hold bool) {
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
			n.merge(ps)
		}
	}
	return n, hold
}

// loopbackOnly refuses a listen address that is not a loopback IP.
func loopbackOnly(address string) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("embedded kafka listen address %q: %w", address, err)
	}
	if ip, err := netip.ParseAddr(host); err != nil || !ip.Unmap().IsLoopback() {
		return fmt.Errorf("embedded kafka listens on loopback only, not %q: it has no authentication, and whoever can produce to it can submit commands as any user", address)
	}
	return nil
}
