package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/s2"
	bolt "go.etcd.io/bbolt"
)

// The embedded file's layout: one bucket, kv, for everything, so that a
// commit rewrites one B-tree's branches rather than one per bucket. Small
// values (run state, deliveries, idempotency keys in flight) are entries
// of their own: expiry (8 bytes, Unix ns, 0 = none) | kind (1 byte) |
// value (s2-compressed when it is packMin bytes or more and that pays).
// Values of blobMin bytes or more (reports, scan-cache entries, completed
// idempotency responses, screenshots) are blobs: the entry holds the
// expiry and the blob's hash, and the bytes, compressed when that saves a
// tenth or more, live once under blobPrefix + hash, whatever refers to
// them, in chunks (blobPrefix + hash + index) so that no node of the
// B-tree spans two pages (see chunkBytes). Sorted sets are entries too
// (txkv_bolt.go; the claims' leases are not: they live in memory), the
// showcase's latest outcome per site under historyPrefix + URL, and each
// site's series (history.go) under seriesPrefix + URL, expiring SeriesIdle
// after its last record, so the sweep reclaims the sites nobody scans.
//
// Why blobs addressed by hash inside the file rather than as files: a blob
// is written in the same transaction as what refers to it, so a crash
// leaves no reference without its blob, and it costs no fsync of its own
// (a file per report would cost two: the file and its directory). Why
// apart from the small entries: bbolt copies on write the whole leaf a key
// lives in, so 18 KB reports sitting between the small keys every run
// rewrites made each of those small writes cost a multi-page leaf (about
// 260 KB per commit: docs/benchmarks.md, "Monitors: 10,000 due in the same
// minute on one origin"). Why by hash: a run's report is the scan's
// report, which the scan cache holds too, and runs of one site due
// together share one scan (origin/monitor): one blob serves them all. A
// blob nothing refers to any more is deleted by the sweep (mark and
// sweep, see sweepStep).
var (
	bucketKV   = []byte("kv")
	bucketMeta = []byte("meta")
	layoutKey  = []byte("layout")

	blobPrefix    = []byte{0xff, 'b'}
	historyPrefix = []byte{0xfe, 'h'}
	seriesPrefix  = []byte{0xfe, 's'}
)

// layoutVersion names the layout above; a file of another version is
// refused at open rather than misread. Layout 3 added chunked blobs and
// compressed inline values (kinds 5–7) and moved polling claims to memory;
// it reads every value of layout 2, so a layout-2 file is taken over (its
// version rewritten at open) while a build of layout 2 refuses a layout-3
// file instead of misreading it.
const layoutVersion = "3"

// readsLayout: versions this build opens, upgrading them to layoutVersion.
var readsLayout = map[string]bool{"2": true, layoutVersion: true}

const (
	kindInline     byte = 0
	kindBlob       byte = 1 // value: the blob's hash (blobHash bytes)
	kindBlobBody   byte = 4 // under blobPrefix + hash: compression | bytes (a blob of at most chunkBytes)
	kindBlobChunks byte = 5 // under blobPrefix + hash: compression | length (4 bytes); the bytes in chunks after it
	kindBlobChunk  byte = 6 // under blobPrefix + hash + index (2 bytes): the next chunkBytes of them
	kindInlineS2   byte = 7 // value: its s2 block (an inline value of packMin bytes or more that shrank)
	valHeader           = 9 // expiry + kind

	blobMin  = 2048
	blobHash = 16 // bytes of SHA-256 naming a blob

	blobRaw byte = 0
	blobS2  byte = 1

	// chunkBytes bounds the bytes of a blob one entry holds, so that no
	// B-tree node ever needs more than one page. bbolt writes a node of
	// several pages with one write, and Linux then caches those pages as
	// one large folio; when they are freed and reused one page at a time,
	// dirtying any page of the folio writes (and counts in write_bytes)
	// the whole folio: a 5 KB report written whole cost every later commit
	// that reused one of its pages 8 KB instead of 4, a screenshot far
	// more (the monitor bench measured 1.6 times the pages bbolt wrote;
	// docs/benchmarks.md, "Embedded store: bytes written per monitor run").
	// bbolt leaves a node of four entries or fewer unsplit,
	// however large, so an entry (16-byte header, 20-byte key, value) must
	// stay under a quarter of a page.
	chunkBytes = 960

	// packMin: an inline value this long or longer (a delivery record,
	// about 1 KB of JSON, is the common one) is kept s2-compressed when
	// that saves an eighth or more (a delivery shrinks to 60%): the fewer
	// pages a monitor's records fill, the fewer a run's writes land in.
	packMin = 512
)

// Embedded is the single-node backend: one bbolt file.
type Embedded struct {
	db  *bolt.DB
	now func() time.Time

	// Writes go through one committer (see update).
	writes    chan *write
	mu        sync.RWMutex // held to send on writes; Close takes it to close the channel
	closed    bool
	committed chan struct{} // closed when the committer has stopped

	commits, grouped      atomic.Int64 // commits made, writes they carried
	blobsNew, blobsShared atomic.Int64 // blobs written, and values that found theirs already there

	// marks are the blobs known to be referred to in the current sweep
	// pass: the references the pass has read, and every blob written or
	// referred to again since it began (see sweepStep).
	marksMu sync.Mutex
	marks   map[[blobHash]byte]bool

	replays *memReplays

	// The claims (leases) of runs and deliveries, held in memory: see
	// txkv_bolt.go. leases is what the committed writes left, read by
	// anyone under leaseMu; overlay is what the transaction the committer
	// is making changes (nil: deleted), folded into leases once it is
	// committed, dropped when it is not. Only the committer touches it.
	leaseMu sync.Mutex
	leases  map[string]memLease
	overlay map[string]*memLease

	histMu        sync.Mutex
	histPending   map[string][]byte // url → outcome recorded, not yet committed (boltHistory)
	seriesPending map[string][]byte // url → its series as the records not yet committed leave it

	sweepMu   sync.Mutex
	sweepFrom []byte // where the next sweep step starts (nil: the first key)
	blobPhase bool   // the pass is past the references: deleting unmarked blobs
	stop      chan struct{}
	done      chan struct{}
}

// embeddedOptions are for tests: a clock, no background sweep (the test
// sweeps when its clock says so), no fsync (a test of what the file holds,
// not of what survives a crash).
type embeddedOptions struct {
	now     func() time.Time
	noSweep bool
	noSync  bool
}

// OpenEmbedded opens (or creates) dir/agentready.db. Writes are fsynced before
// they are acknowledged, so an acknowledged write survives kill -9; the one
// exception is the scan history, whose Record queues its write for the next
// commit (boltHistory.Record). Claims of monitor runs and deliveries are
// held in memory, not written (txkv_bolt.go): a restart releases every
// claim, so a claim the file kept would be released at open anyway.
func OpenEmbedded(dir string) (*Embedded, error) { return openEmbedded(dir, embeddedOptions{}) }

func openEmbedded(dir string, o embeddedOptions) (*Embedded, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating data directory %s: %w", dir, err)
	}
	path := filepath.Join(dir, "agentready.db")
	opts := &bolt.Options{
		Timeout: 2 * time.Second,
		// The freelist is rebuilt by scanning the file at open instead of
		// being written at every commit: on a file with many free pages it
		// was several pages of every commit. etcd runs bbolt this way. The
		// array freelist hands out the lowest free pages, which keeps the
		// file compact: with the map one, which hands out any, a simulated
		// day grew the file by a fifth more, by amounts that varied from run
		// to run (TestReclamationOverADay).
		NoFreelistSync: true,
		FreelistType:   bolt.FreelistArrayType,
		NoSync:         o.noSync,
		OpenFile:       openRandom, // see pagecache_linux.go
	}
	_, statErr := os.Stat(path)
	dropCache(path)
	db, err := bolt.Open(path, 0o600, opts)
	if err == nil && os.IsNotExist(statErr) {
		// bbolt wrote the new file in one piece: cache it afresh, page by page.
		if err = db.Close(); err == nil {
			dropCache(path)
			db, err = bolt.Open(path, 0o600, opts)
		}
	}
	if errors.Is(err, bolt.ErrTimeout) {
		return nil, fmt.Errorf("%s is in use by another process (is another agentready serve running with the same --data?)", path)
	}
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	if o.now == nil {
		o.now = time.Now
	}
	e := &Embedded{db: db, now: o.now, writes: make(chan *write, 256), committed: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{}),
		marks: map[[blobHash]byte]bool{}, replays: newMemReplays(o.now), leases: map[string]memLease{}}
	err = db.Update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if meta == nil && tx.Bucket(bucketKV) != nil {
			return fmt.Errorf("%s was written by an earlier agentready (state layout 1), which this version does not read: run the earlier version to keep its monitors, or move the file away to start afresh", path)
		}
		if meta != nil {
			if v := meta.Get(layoutKey); !readsLayout[string(v)] {
				return fmt.Errorf("%s has state layout %q, written by another version of agentready; this one reads layouts 2 and %s: run the version that wrote it, or move the file away to start afresh", path, v, layoutVersion)
			}
		}
		for _, b := range [][]byte{bucketKV, bucketMeta} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketMeta).Put(layoutKey, []byte(layoutVersion))
	})
	if err == nil {
		err = db.Update(e.releaseDeadLeases)
	}
	if err == nil {
		err = db.Update(func(tx *bolt.Tx) error { return e.releaseDeadClaims(tx, ms(e.now())) })
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	go e.commitLoop()
	if o.noSweep {
		close(e.done)
	} else {
		go e.sweep()
	}
	return e, nil
}

func (e *Embedded) Name() string                   { return "embedded" }
func (e *Embedded) Ping(ctx context.Context) error { return nil }
func (e *Embedded) ScanCache() ScanCache           { return scanCache{e} }
func (e *Embedded) Idempotency() Idempotency       { return idempotency{e} }
func (e *Embedded) Screenshots() Screenshots       { return screenshots{e} }
func (e *Embedded) Monitors() Monitors             { return monitors{boltTx{e}, embeddedLayout} }
func (e *Embedded) History() History               { return boltHistory{e} }
func (e *Embedded) Replays() Replays               { return e.replays }
func (e *Embedded) Close() error {
	close(e.stop)
	<-e.done
	e.mu.Lock()
	if !e.closed {
		e.closed = true
		close(e.writes)
	}
	e.mu.Unlock()
	<-e.committed
	return e.db.Close()
}

// write is one writer's transaction function, waiting for its commit
// (after, when set, runs once it is committed). A write that only reads
// the file (readOnly: a claim, which changes only the leases in memory)
// runs in the committer's order like any other, but a group of such
// writes alone runs in a read transaction: no commit, no fsync.
type write struct {
	fn       func(tx *bolt.Tx) error
	done     chan error
	after    func()
	readOnly bool
}

// maxBatch bounds the writes one commit carries.
const maxBatch = 256

// update runs fn in a write transaction and returns once it is committed
// (fsynced). Writers are committed in groups: one goroutine commits, and
// every write that arrives while a commit is syncing goes into the next
// one, so a burst shares its fsyncs and the pages every commit rewrites
// (branches, meta) instead of queueing one commit each. Unlike bbolt's
// Batch it waits for no timer: a lone write commits at once. fn may run
// more than once (after another write in its group failed), so it must
// set its results afresh each time.
func (e *Embedded) update(fn func(tx *bolt.Tx) error) error {
	w := &write{fn: fn, done: make(chan error, 1)}
	if err := e.send(w); err != nil {
		return err
	}
	return fileError(<-w.done)
}

// updateLater queues fn for the next commit without waiting for it; after
// runs once it is committed. Close commits what is queued.
func (e *Embedded) updateLater(fn func(tx *bolt.Tx) error, after func()) error {
	return e.send(&write{fn: fn, done: make(chan error, 1), after: after})
}

// inOrder runs fn, which only reads the file, in the committer's order:
// it sees every write queued before it, and none queued after it.
func (e *Embedded) inOrder(fn func(tx *bolt.Tx) error) error {
	w := &write{fn: fn, done: make(chan error, 1), readOnly: true}
	if err := e.send(w); err != nil {
		return err
	}
	return fileError(<-w.done)
}

func (e *Embedded) send(w *write) error {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return fileError(bolt.ErrDatabaseNotOpen)
	}
	e.writes <- w
	return nil
}

// linger is the longest a commit waits for more writes, and only while
// fewer have come than the last commit carried: writers that keep several
// in flight (a burst of runs and deliveries) then share commits, while a
// lone write never waits.
const linger = time.Millisecond

func (e *Embedded) commitLoop() {
	defer close(e.committed)
	batch := make([]*write, 0, maxBatch)
	timer := time.NewTimer(linger)
	timer.Stop()
	last := 1
	for w := range e.writes {
		batch = append(batch[:0], w)
		waiting := false
	more:
		for len(batch) < maxBatch {
			select {
			case w, ok := <-e.writes:
				if !ok {
					break more
				}
				batch = append(batch, w)
				continue
			default:
			}
			if len(batch) >= last {
				break
			}
			if !waiting {
				waiting = true
				timer.Reset(linger)
			}
			select {
			case w, ok := <-e.writes:
				if !ok {
					break more
				}
				batch = append(batch, w)
			case <-timer.C:
				waiting = false
				break more
			}
		}
		timer.Stop() // no stale tick can follow (Go 1.23 timers)
		last = len(batch)
		e.commitGroup(batch)
	}
}

// EmbeddedStats counts the file's writes since it was opened.
type EmbeddedStats struct {
	Commits     int64 // write transactions committed (each one fsync)
	Writes      int64 // store writes they carried
	BlobsNew    int64 // large values written
	BlobsShared int64 // large values already there (the same bytes under another key)
}

// Stats says how the writes were grouped into commits.
func (e *Embedded) Stats() EmbeddedStats {
	return EmbeddedStats{Commits: e.commits.Load(), Writes: e.grouped.Load(), BlobsNew: e.blobsNew.Load(), BlobsShared: e.blobsShared.Load()}
}

func (e *Embedded) commitGroup(batch []*write) {
	finish := func(w *write, err error) {
		if err == nil && w.after != nil {
			w.after()
		}
		w.done <- err
	}
	err := e.transact(batch)
	if err == nil || len(batch) == 1 {
		for _, w := range batch {
			finish(w, err)
		}
		return
	}
	// One write failed and rolled the group back: each runs again alone,
	// so one write's failure is its own.
	for _, w := range batch {
		finish(w, e.transact([]*write{w}))
	}
}

// transact runs the batch's functions in one transaction: a read
// transaction when every one of them only reads, else a write transaction,
// committed. The leases they change are folded in once it is committed.
func (e *Embedded) transact(batch []*write) error {
	run, readOnly := e.db.Update, true
	for _, w := range batch {
		readOnly = readOnly && w.readOnly
	}
	if readOnly {
		run = e.db.View
	} else {
		e.commits.Add(1)
		e.grouped.Add(int64(len(batch)))
	}
	e.overlay = map[string]*memLease{}
	err := run(func(tx *bolt.Tx) error {
		for _, w := range batch {
			if err := w.fn(tx); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil && len(e.overlay) > 0 {
		e.leaseMu.Lock()
		for k, l := range e.overlay {
			if l == nil {
				delete(e.leases, k)
			} else {
				e.leases[k] = *l
			}
		}
		e.leaseMu.Unlock()
	}
	e.overlay = nil
	return err
}

// sweepEvery and sweepBudget pace the sweep of expired entries: a step
// examines sweepBudget keys from where the last one stopped, so a full pass
// over a file of n keys takes n/sweepBudget steps, whatever its size.
const (
	sweepEvery  = 10 * time.Second
	sweepBudget = 5000
)

// sweep deletes expired entries (and their blobs) so the file does not grow
// without bound.
func (e *Embedded) sweep() {
	defer close(e.done)
	t := time.NewTicker(sweepEvery)
	defer t.Stop()
	for {
		select {
		case <-e.stop:
			return
		case <-t.C:
			_, _ = e.sweepStep(sweepBudget)
		}
	}
}

// sweepStep deletes the expired entries among the next budget keys; wrapped
// reports that a pass ended (the next step starts again from the first
// key). A pass reads every entry, deleting the expired ones and marking the
// blobs the others refer to, then reads the blobs, deleting those not
// marked. Writes mark the blobs they write or refer to while a pass runs
// (putVal), so a reference made behind the pass keeps its blob too. Steps
// run as writes through the committer, between other writes, never beside
// one.
func (e *Embedded) sweepStep(budget int) (wrapped bool, err error) {
	e.sweepMu.Lock()
	defer e.sweepMu.Unlock()
	now := e.now().UnixNano()
	var next []byte
	blobPhase := e.blobPhase
	err = e.update(func(tx *bolt.Tx) error {
		blobPhase = e.blobPhase
		kvb := tx.Bucket(bucketKV)
		c := kvb.Cursor()
		k, v := c.First()
		if e.sweepFrom != nil {
			k, v = c.Seek(e.sweepFrom)
		}
		var dead [][]byte
		n := 0
		for ; k != nil && n < budget; k, v = c.Next() {
			n++
			if !blobPhase && bytes.HasPrefix(k, blobPrefix) {
				blobPhase = true // the references are all read: now the blobs
			}
			switch {
			case blobPhase:
				if !e.marked(blobOf(k)) {
					dead = append(dead, bytes.Clone(k))
				}
			case expired(v, now):
				dead = append(dead, bytes.Clone(k))
			case len(v) >= valHeader+blobHash && v[8] == kindBlob:
				e.mark(v[valHeader : valHeader+blobHash])
			}
		}
		next = bytes.Clone(k)
		for _, k := range dead {
			if err := kvb.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	e.sweepFrom, e.blobPhase = next, blobPhase
	if next == nil {
		e.sweepFrom, e.blobPhase = nil, false
		e.marksMu.Lock()
		e.marks = map[[blobHash]byte]bool{}
		e.marksMu.Unlock()
	}
	return next == nil, nil
}

// sweepAll runs sweep steps until a whole pass is done, from the start.
func (e *Embedded) sweepAll() error {
	e.sweepMu.Lock()
	e.sweepFrom, e.blobPhase = nil, false
	e.sweepMu.Unlock()
	e.marksMu.Lock()
	e.marks = map[[blobHash]byte]bool{}
	e.marksMu.Unlock()
	for {
		wrapped, err := e.sweepStep(sweepBudget)
		if err != nil || wrapped {
			return err
		}
	}
}

func (e *Embedded) mark(h []byte) {
	e.marksMu.Lock()
	e.marks[[blobHash]byte(h)] = true
	e.marksMu.Unlock()
}

func (e *Embedded) marked(h []byte) bool {
	if len(h) != blobHash {
		return true // not a blob of this layout: leave it
	}
	e.marksMu.Lock()
	defer e.marksMu.Unlock()
	return e.marks[[blobHash]byte(h)]
}

func expired(v []byte, now int64) bool {
	if len(v) < valHeader {
		return true // not of this layout: nothing reads it
	}
	exp := int64(binary.BigEndian.Uint64(v[:8]))
	return exp != 0 && exp <= now
}

func (e *Embedded) expiry(ttl time.Duration) int64 {
	if ttl <= 0 {
		return 0
	}
	return e.now().Add(ttl).UnixNano()
}

// putVal stores val under key until expiry (Unix ns; 0: none).
func (e *Embedded) putVal(tx *bolt.Tx, key, val []byte, expiry int64) error {
	return e.putParts(tx, key, nil, val, expiry)
}

// putParts stores head+body under key until expiry. A large body is stored
// once by its hash: if those bytes are there already, only the reference
// (with head) is written. The scan cache puts a scan's time in head and
// its report in body, so the run that made the scan shares the blob.
func (e *Embedded) putParts(tx *bolt.Tx, key, head, body []byte, expiry int64) error {
	kvb := tx.Bucket(bucketKV)
	if n := len(head) + len(body); n < blobMin {
		b := make([]byte, valHeader, valHeader+n)
		binary.BigEndian.PutUint64(b, uint64(expiry))
		b[8] = kindInline
		b = append(append(b, head...), body...)
		if n >= packMin {
			z := make([]byte, valHeader+s2.MaxEncodedLen(n))
			copy(z, b[:valHeader])
			z[8] = kindInlineS2
			if z = z[:valHeader+len(s2.Encode(z[valHeader:], b[valHeader:]))]; len(z)-valHeader <= n-n/8 {
				b = z
			}
		}
		return kvb.Put(key, b)
	}
	sum := sha256.Sum256(body)
	h := sum[:blobHash]
	e.mark(h)
	if bk := blobKey(h); kvb.Get(bk) == nil {
		enc := make([]byte, 1+s2.MaxEncodedLen(len(body)))
		enc[0] = blobS2
		enc = enc[:1+len(s2.Encode(enc[1:], body))] // encoded in place
		if len(enc)-1 > len(body)*9/10 {
			enc = append(append(enc[:0], blobRaw), body...)
		}
		if err := putBlob(kvb, bk, enc); err != nil {
			return err
		}
		e.blobsNew.Add(1)
	} else {
		e.blobsShared.Add(1)
	}
	b := make([]byte, valHeader+blobHash, valHeader+blobHash+len(head))
	binary.BigEndian.PutUint64(b, uint64(expiry))
	b[8] = kindBlob
	copy(b[valHeader:], h)
	return kvb.Put(key, append(b, head...))
}

func blobKey(h []byte) []byte { return append(bytes.Clone(blobPrefix), h...) }

// blobOf is the hash a key under blobPrefix belongs to (a blob's or one of
// its chunks').
func blobOf(k []byte) []byte {
	h := k[len(blobPrefix):]
	if len(h) > blobHash {
		h = h[:blobHash]
	}
	return h
}

// putBlob stores enc (compression | bytes) under bk: whole when it fits
// one entry, else its length there and the bytes in chunks right after
// it (bk + index), which sort together.
func putBlob(kvb *bolt.Bucket, bk, enc []byte) error {
	if len(enc) <= chunkBytes {
		return kvb.Put(bk, append(zentry(kindBlobBody, nil), enc...))
	}
	data := enc[1:]
	head := append(zentry(kindBlobChunks, nil), enc[0], 0, 0, 0, 0)
	binary.BigEndian.PutUint32(head[valHeader+1:], uint32(len(data)))
	if err := kvb.Put(bk, head); err != nil {
		return err
	}
	for i := 0; len(data) > 0; i++ {
		n := min(len(data), chunkBytes)
		ck := binary.BigEndian.AppendUint16(bytes.Clone(bk), uint16(i))
		if err := kvb.Put(ck, append(zentry(kindBlobChunk, nil), data[:n]...)); err != nil {
			return err
		}
		data = data[n:]
	}
	return nil
}

// blobBody reads the blob hash h as putBlob stored it: compression | bytes
// (a copy when it was chunked, else the file's own bytes).
func blobBody(kvb *bolt.Bucket, h []byte) ([]byte, bool) {
	bk := blobKey(h)
	c := kvb.Cursor()
	k, v := c.Seek(bk)
	if !bytes.Equal(k, bk) || len(v) < valHeader+1 {
		return nil, false
	}
	switch v[8] {
	case kindBlobBody:
		return v[valHeader:], true
	case kindBlobChunks:
		if len(v) != valHeader+5 {
			return nil, false
		}
		n := int(binary.BigEndian.Uint32(v[valHeader+1:]))
		out := make([]byte, 1, 1+n)
		out[0] = v[valHeader]
		for i := 0; len(out)-1 < n; i++ {
			k, v = c.Next()
			if len(k) != len(bk)+2 || !bytes.HasPrefix(k, bk) || int(binary.BigEndian.Uint16(k[len(bk):])) != i || len(v) < valHeader || v[8] != kindBlobChunk {
				return nil, false
			}
			out = append(out, v[valHeader:]...)
		}
		return out, len(out)-1 == n
	}
	return nil, false
}

// loadVal returns key's value if it is live at now (Unix ns), as a copy.
func loadVal(tx *bolt.Tx, key []byte, now int64) ([]byte, bool, error) {
	v := tx.Bucket(bucketKV).Get(key)
	if v == nil || expired(v, now) {
		return nil, false, nil
	}
	switch v[8] {
	case kindInline, kindInlineS2:
		b, err := inlineVal(v)
		if err != nil {
			return nil, false, fmt.Errorf("the value of %q does not decompress: %w", key, err)
		}
		return b, true, nil
	case kindBlob:
		if len(v) < valHeader+blobHash {
			return nil, false, nil
		}
		head := v[valHeader+blobHash:]
		body, ok := blobBody(tx.Bucket(bucketKV), v[valHeader:valHeader+blobHash])
		if !ok {
			return nil, false, fmt.Errorf("the value of %q lost its blob", key)
		}
		if body[0] == blobRaw {
			return append(bytes.Clone(head), body[1:]...), true, nil
		}
		n, err := s2.DecodedLen(body[1:])
		if err != nil {
			return nil, false, fmt.Errorf("the value of %q does not decompress: %w", key, err)
		}
		out := make([]byte, len(head), len(head)+n)
		copy(out, head)
		dec, err := s2.Decode(out[len(head):cap(out)], body[1:])
		if err != nil {
			return nil, false, fmt.Errorf("the value of %q does not decompress: %w", key, err)
		}
		return out[:len(head)+len(dec)], true, nil
	}
	return nil, false, nil
}

// inlineVal is an inline entry's value (kindInline or kindInlineS2), as a
// copy.
func inlineVal(v []byte) ([]byte, error) {
	if v[8] == kindInline {
		return bytes.Clone(v[valHeader:]), nil
	}
	return s2.Decode(nil, v[valHeader:])
}

// delVal deletes key (a blob it referred to goes at the next sweep, if
// nothing else refers to it).
func delVal(tx *bolt.Tx, key []byte) error { return tx.Bucket(bucketKV).Delete(key) }

// setExpiry gives a live key a new expiry (Unix ns); a missing or expired
// key stays as it is, as Redis's PEXPIREAT leaves it.
func setExpiry(tx *bolt.Tx, key []byte, expiry, now int64) error {
	kvb := tx.Bucket(bucketKV)
	v := kvb.Get(key)
	if v == nil || expired(v, now) {
		return nil
	}
	nv := bytes.Clone(v)
	binary.BigEndian.PutUint64(nv, uint64(expiry))
	return kvb.Put(key, nv)
}

// fileError reports a failed read or write of the data file (disk full, I/O
// error, closed database) as the store being unavailable, like a Redis
// outage: callers answer 503 state_unavailable either way.
func fileError(err error) error {
	if err == nil || errors.Is(err, ErrNotFound) {
		return err
	}
	return &UnavailableError{RetryAfter: time.Second, Cause: "the data file could not be read or written", Err: err}
}

func (e *Embedded) get(_ context.Context, key string) ([]byte, error) {
	var out []byte
	now := e.now().UnixNano()
	err := e.db.View(func(tx *bolt.Tx) error {
		v, ok, err := loadVal(tx, []byte(key), now)
		if err != nil {
			return err
		}
		if !ok {
			return ErrNotFound
		}
		out = v
		return nil
	})
	return out, fileError(err)
}

func (e *Embedded) set(_ context.Context, key string, val []byte, ttl time.Duration) error {
	return e.setParts(context.Background(), key, nil, val, ttl)
}

func (e *Embedded) setParts(_ context.Context, key string, head, body []byte, ttl time.Duration) error {
	exp := e.expiry(ttl)
	return e.update(func(tx *bolt.Tx) error { return e.putParts(tx, []byte(key), head, body, exp) })
}

func (e *Embedded) setNX(_ context.Context, key string, val []byte, ttl time.Duration) (bool, error) {
	ok := false
	exp := e.expiry(ttl)
	now := e.now().UnixNano()
	err := e.update(func(tx *bolt.Tx) error {
		ok = false
		if v := tx.Bucket(bucketKV).Get([]byte(key)); v != nil && !expired(v, now) {
			return nil
		}
		ok = true
		return e.putVal(tx, []byte(key), val, exp)
	})
	return ok, err
}

func (e *Embedded) del(_ context.Context, key string) error {
	return e.update(func(tx *bolt.Tx) error { return delVal(tx, []byte(key)) })
}

func (e *Embedded) swapOwned(_ context.Context, key, owner string, val []byte, ttl time.Duration) (bool, error) {
	ok := false
	exp := e.expiry(ttl)
	now := e.now().UnixNano()
	err := e.update(func(tx *bolt.Tx) error {
		ok = false
		cur, exists, err := loadVal(tx, []byte(key), now)
		if err != nil || !exists || !ownedInFlight(cur, owner) {
			return err
		}
		ok = true
		if val == nil {
			return delVal(tx, []byte(key))
		}
		return e.putVal(tx, []byte(key), val, exp)
	})
	return ok, err
}

var inFlightPrefix = []byte(`{"state":"` + IdemInFlight + `"`)

// releaseDeadLeases frees the idempotency keys left in flight by a previous
// process. bbolt's file lock admits one process at a time, so every in-flight
// key found at open belongs to a process that died before finishing (kill -9,
// power loss): keeping it would answer 409 until its lease ran out.
func (e *Embedded) releaseDeadLeases(tx *bolt.Tx) error {
	b := tx.Bucket(bucketKV)
	var dead [][]byte
	c := b.Cursor()
	prefix := []byte("idem:")
	now := e.now().UnixNano()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		// State is the record's first member: the prefix test skips
		// decoding the (many, larger, blob-held) completed records.
		if expired(v, now) || (v[8] != kindInline && v[8] != kindInlineS2) {
			continue
		}
		val, err := inlineVal(v)
		if err != nil {
			continue
		}
		var r IdemRecord
		if bytes.HasPrefix(val, inFlightPrefix) && json.Unmarshal(val, &r) == nil && r.State == IdemInFlight {
			dead = append(dead, bytes.Clone(k))
		}
	}
	for _, k := range dead {
		if err := delVal(tx, k); err != nil {
			return err
		}
	}
	return nil
}

type boltHistory struct{ e *Embedded }

// Record makes e the latest outcome of its site, and the newest of its
// series, at once for Top and Series, and writes both with the next commit
// without waiting for it: the origin records a scan before answering it,
// and a commit's fsync (two, behind a burst of monitor runs' writes) has
// no place on that path. A crash may lose the outcomes of the last few
// milliseconds: the showcase and the series then end with the scan
// before. The history on Redis is written at once.
func (h boltHistory) Record(_ context.Context, e HistoryEntry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	key := append(bytes.Clone(historyPrefix), e.URL...)
	skey := append(bytes.Clone(seriesPrefix), e.URL...)
	s := h.e
	// The series is read and its next value made under histMu, so two
	// records of one site in flight build one on the other: the pending
	// value is always the newest, and commits land in the order made.
	s.histMu.Lock()
	cur, pending := s.seriesPending[e.URL]
	if !pending {
		if err := s.db.View(func(tx *bolt.Tx) (err error) {
			cur, _, err = loadVal(tx, skey, s.now().UnixNano())
			return err
		}); err != nil {
			s.histMu.Unlock()
			return fileError(err)
		}
	}
	series := appendSeries(cur, e)
	if s.histPending == nil {
		s.histPending, s.seriesPending = map[string][]byte{}, map[string][]byte{}
	}
	s.histPending[e.URL], s.seriesPending[e.URL] = b, series
	s.histMu.Unlock()
	exp := s.expiry(SeriesIdle)
	return s.updateLater(func(tx *bolt.Tx) error {
		if err := s.putVal(tx, key, b, 0); err != nil {
			return err
		}
		return s.putVal(tx, skey, series, exp)
	}, func() {
		s.histMu.Lock()
		if bytes.Equal(s.histPending[e.URL], b) {
			delete(s.histPending, e.URL)
		}
		if bytes.Equal(s.seriesPending[e.URL], series) {
			delete(s.seriesPending, e.URL)
		}
		s.histMu.Unlock()
	})
}

func (h boltHistory) Series(_ context.Context, url string, checks bool) ([]HistoryEntry, error) {
	s := h.e
	s.histMu.Lock()
	v, ok := s.seriesPending[url]
	s.histMu.Unlock()
	if !ok {
		err := s.db.View(func(tx *bolt.Tx) (err error) {
			v, _, err = loadVal(tx, append(bytes.Clone(seriesPrefix), url...), s.now().UnixNano())
			return err
		})
		if err != nil {
			return nil, fileError(err)
		}
	}
	if v == nil {
		return []HistoryEntry{}, nil
	}
	return decodeSeries(url, v, checks)
}

// maxHistory bounds the entries ranked per query on the single-node backend.
const maxHistory = 100000

func (h boltHistory) Top(_ context.Context, offset, limit int) ([]HistoryEntry, int, error) {
	// The outcomes recorded but not yet committed are taken before the
	// file is read: one whose commit lands in between is then in one or
	// the other (taken after, it could be in neither). Of the two, the
	// newer scan stands (a later record may have committed meanwhile).
	h.e.histMu.Lock()
	pending := make([]HistoryEntry, 0, len(h.e.histPending))
	for _, b := range h.e.histPending {
		var e HistoryEntry
		if json.Unmarshal(b, &e) == nil {
			pending = append(pending, e)
		}
	}
	h.e.histMu.Unlock()
	var all []HistoryEntry
	err := h.e.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketKV).Cursor()
		for k, _ := c.Seek(historyPrefix); k != nil && bytes.HasPrefix(k, historyPrefix) && len(all) < maxHistory; k, _ = c.Next() {
			v, _, err := loadVal(tx, k, 0)
			if err != nil {
				return err
			}
			var e HistoryEntry
			if json.Unmarshal(v, &e) == nil {
				all = append(all, e)
			}
		}
		return nil
	})
	if err != nil {
		return nil, 0, fileError(err)
	}
	if len(pending) > 0 {
		at := make(map[string]int, len(all))
		for i, e := range all {
			at[e.URL] = i
		}
		for _, e := range pending {
			if i, ok := at[e.URL]; ok {
				if !all[i].ScannedAt.After(e.ScannedAt) {
					all[i] = e
				}
			} else if len(all) < maxHistory {
				all = append(all, e)
			}
		}
	}
	sortHistory(all)
	return page(all, offset, limit), len(all), nil
}

func sortHistory(all []HistoryEntry) {
	sort.Slice(all, func(i, j int) bool {
		if all[i].Score != all[j].Score {
			return all[i].Score > all[j].Score
		}
		return all[i].ScannedAt.After(all[j].ScannedAt)
	})
}

func page(all []HistoryEntry, offset, limit int) []HistoryEntry {
	if offset >= len(all) {
		return []HistoryEntry{}
	}
	end := offset + limit
	if end > len(all) {
		end = len(all)
	}
	return all[offset:end]
}
