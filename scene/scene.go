package scene

import (
	crand "crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// Sentinel errors; every error a Scene method returns wraps one of them (test with errors.Is) and
// names the element concerned.
var (
	ErrNotFound = errors.New("no such element")
	ErrExists   = errors.New("element id already in use")
	ErrLocked   = errors.New("element is locked")
	ErrInvalid  = errors.New("invalid element")
)

// Scene is an Excalidraw document: elements in z-order (bottom first), the appState and files of
// the .excalidraw file it came from, and an optional viewport.
//
// Invariants every method keeps: ids are unique; Index keys are valid and strictly increasing;
// every containerId, frameId and binding points at a live element and the other side agrees
// (the container lists its text, the arrow's targets list the arrow); bound arrows end on their
// targets' borders; labels sit centred inside their containers.
type Scene struct {
	elems []*Element // z-order, bottom first; never modified in place (copy-on-write, see Clone)
	pos   *posIndex  // id -> position in elems; shared with clones until written (ownPos)

	appState map[string]json.RawMessage
	files    map[string]json.RawMessage
	viewport *Rect

	rnd *randSource
	now func() time.Time

	// tok, set only inside Batch, marks elements this working copy made or copied itself: no
	// snapshot can hold them yet, so they are edited in place instead of copied again.
	tok *byte

	// inBatch is set on the working copy inside Batch: operations then run directly on it, since
	// Batch already guarantees all-or-nothing.
	inBatch bool
}

// posIndex maps ids to z-positions. Clones share it until one side inserts or removes an element:
// most edits change elements, not the order, so most clones never copy it. shared is atomic so
// that cloning (a read of the scene) stays safe from several goroutines.
type posIndex struct {
	m      map[string]int
	shared atomic.Bool
}

func newPosIndex(n int) *posIndex { return &posIndex{m: make(map[string]int, n)} }

// Option configures a Scene made by New or Decode.
type Option func(*Scene)

// WithRand makes the scene draw seeds, version nonces and generated ids from r instead of a
// cryptographically seeded source. Use a fixed seed (rand.New(rand.NewPCG(1, 2))) for golden tests.
func WithRand(r *rand.Rand) Option {
	return func(s *Scene) { s.rnd = &randSource{r: r} }
}

// WithClock makes the scene read the time for elements' "updated" field from now.
func WithClock(now func() time.Time) Option {
	return func(s *Scene) { s.now = now }
}

// randSource is shared by a scene and its clones; the mutex makes clones edited in different
// goroutines safe.
type randSource struct {
	mu sync.Mutex
	r  *rand.Rand
}

func (r *randSource) int63n(n int64) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.r.Int64N(n)
}

func newCryptoRand() *rand.Rand {
	var seed [32]byte
	_, _ = crand.Read(seed[:]) // never fails on supported platforms (documented by crypto/rand)
	return rand.New(rand.NewChaCha8(seed))
}

// New returns an empty scene.
func New(opts ...Option) *Scene {
	s := &Scene{pos: newPosIndex(0)}
	for _, o := range opts {
		o(s)
	}
	if s.rnd == nil {
		s.rnd = &randSource{r: newCryptoRand()}
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// Clone returns an independent copy of the scene. Elements are shared until one side changes them
// (every change replaces the element with an edited copy), so a clone costs one slice and one map
// copy: use it for revisions, undo and all-or-nothing batches.
func (s *Scene) Clone() *Scene {
	c := *s
	c.inBatch = false
	c.tok = nil
	if s.tok != nil {
		// The clone shares every element: s may no longer edit any of them in place.
		s.tok = new(byte)
	}
	c.elems = make([]*Element, len(s.elems), len(s.elems)+8)
	copy(c.elems, s.elems)
	// pos is shared until either side inserts or removes an element (ownPos).
	s.pos.shared.Store(true)
	// appState and files are replaced, never edited in place, by this package.
	if s.viewport != nil {
		v := *s.viewport
		c.viewport = &v
	}
	return &c
}

// Len returns the number of live (not deleted) elements.
func (s *Scene) Len() int {
	n := 0
	for _, e := range s.elems {
		if !e.IsDeleted {
			n++
		}
	}
	return n
}

// Elements returns copies of the live elements in z-order, bottom first.
func (s *Scene) Elements() []Element {
	out := make([]Element, 0, len(s.elems))
	for _, e := range s.elems {
		if !e.IsDeleted {
			out = append(out, *e.clone())
		}
	}
	return out
}

// Each calls fn for every live element in z-order, bottom first, until fn returns false, without
// copying: e is the scene's own element, shared with every snapshot. fn must not modify e (nor its
// slices, maps or bindings) nor keep it after returning; use Get or Elements for a copy, Update to
// change it. Each is for hot read-only paths (describing or linting the whole scene).
func (s *Scene) Each(fn func(e *Element) bool) {
	for _, e := range s.elems {
		if !e.IsDeleted && !fn(e) {
			return
		}
	}
}

// AllElements returns copies of every element in z-order, including deleted ones that a loaded
// file carried (Excalidraw keeps them as tombstones for collaboration; they are written back).
func (s *Scene) AllElements() []Element {
	out := make([]Element, len(s.elems))
	for i, e := range s.elems {
		out[i] = *e.clone()
	}
	return out
}

// IDs returns the ids of the live elements in z-order.
func (s *Scene) IDs() []string {
	out := make([]string, 0, len(s.elems))
	for _, e := range s.elems {
		if !e.IsDeleted {
			out = append(out, e.ID)
		}
	}
	return out
}

// Get returns a copy of the live element with the given id.
func (s *Scene) Get(id string) (Element, bool) {
	e := s.get(id)
	if e == nil {
		return Element{}, false
	}
	return *e.clone(), true
}

// Has reports whether a live element with the given id exists.
func (s *Scene) Has(id string) bool { return s.get(id) != nil }

// get returns the shared live element (do not modify it) or nil.
func (s *Scene) get(id string) *Element {
	i, ok := s.pos.m[id]
	if !ok || s.elems[i].IsDeleted {
		return nil
	}
	return s.elems[i]
}

func (s *Scene) mustGet(id string) (*Element, error) {
	e := s.get(id)
	if e == nil {
		return nil, fmt.Errorf("element %q: %w", id, ErrNotFound)
	}
	return e, nil
}

// edit returns a copy of e that s may change and then store with put: a fresh deep copy, or e
// itself when this batch's working copy made it (see tok).
func (s *Scene) edit(e *Element) *Element {
	if s.tok != nil && e.owner == s.tok {
		return e
	}
	c := e.clone()
	c.owner = s.tok
	return c
}

// put stores an edited copy of an existing element in place (same id).
func (s *Scene) put(e *Element) { s.elems[s.pos.m[e.ID]] = e }

// touch records a change to e as Excalidraw's mutateElement does: version+1, new nonce, updated.
func (s *Scene) touch(e *Element) {
	e.Version++
	e.VersionNonce = s.randInt()
	e.Updated = s.now().UnixMilli()
}

// randInt returns a random 31-bit integer, the range Excalidraw's randomInteger uses, above 1:
// restore() fills a missing seed with 1, and equal seeds draw equal wobbles.
func (s *Scene) randInt() int64 { return 2 + s.rnd.int63n(1<<31-2) }

// newID returns an id that is not in use, Excalidraw-style (21 random characters from base 62).
func (s *Scene) newID() string {
	for {
		var b [21]byte
		for i := range b {
			b[i] = base62Digits[s.rnd.int63n(62)]
		}
		id := string(b[:])
		if _, used := s.pos.m[id]; !used {
			return id
		}
	}
}

// freeID returns base if unused, else base-2, base-3, ...
func (s *Scene) freeID(base string) string {
	if _, used := s.pos.m[base]; !used {
		return base
	}
	for i := 2; ; i++ {
		id := fmt.Sprintf("%s-%d", base, i)
		if _, used := s.pos.m[id]; !used {
			return id
		}
	}
}

// insert places e at z-position i (0 = bottom), giving it an index key between its neighbours.
func (s *Scene) insert(i int, e *Element) {
	lo, hi := "", ""
	if i > 0 {
		lo = s.elems[i-1].Index
	}
	if i < len(s.elems) {
		hi = s.elems[i].Index
	}
	k, err := keyBetween(lo, hi)
	if err != nil {
		// Neighbours are always valid and increasing (an invariant), so this cannot happen;
		// resyncing after insertion repairs it anyway.
		k = ""
	}
	e.Index = k
	s.elems = append(s.elems, nil)
	copy(s.elems[i+1:], s.elems[i:])
	s.elems[i] = e
	s.reindexPositions(i)
	if k == "" {
		s.syncIndices()
	}
}

// ownPos makes s.pos private to s before it is written.
func (s *Scene) ownPos() {
	if !s.pos.shared.Load() {
		return
	}
	p := newPosIndex(len(s.pos.m) + 8)
	for k, v := range s.pos.m {
		p.m[k] = v
	}
	s.pos = p
}

// remove drops the element at z-position i entirely.
func (s *Scene) remove(i int) {
	s.ownPos()
	delete(s.pos.m, s.elems[i].ID)
	s.elems = append(s.elems[:i], s.elems[i+1:]...)
	s.reindexPositions(i)
}

func (s *Scene) reindexPositions(from int) {
	s.ownPos()
	for j := from; j < len(s.elems); j++ {
		s.pos.m[s.elems[j].ID] = j
	}
}

// syncIndices repairs invalid or non-increasing index keys, bumping the version of each element it
// changes.
func (s *Scene) syncIndices() {
	idx := make([]string, len(s.elems))
	for i, e := range s.elems {
		idx[i] = e.Index
	}
	for _, i := range syncIndices(idx) {
		e := s.edit(s.elems[i])
		e.Index = idx[i]
		s.touch(e)
		s.elems[i] = e
	}
}

// atomically runs op on a working copy and keeps the result only if op succeeds, so that a failed
// operation leaves the scene exactly as it was.
func (s *Scene) atomically(op func(w *Scene) error) error {
	if s.inBatch {
		return op(s)
	}
	w := s.Clone()
	if err := op(w); err != nil {
		return err
	}
	*s = *w
	return nil
}

// Batch runs fn on one working copy of the scene and keeps its changes only if fn returns nil:
// a whole tool call (hundreds of Add, SetLabel and Update calls) costs one Clone instead of one per
// operation. Inside fn, call methods on b, not on s. A method that fails inside a batch may leave b
// partly changed: return its error from fn (the batch is then discarded), don't carry on.
func (s *Scene) Batch(fn func(b *Scene) error) error {
	if s.inBatch {
		return fn(s)
	}
	w := s.Clone()
	w.inBatch = true
	w.tok = new(byte)
	if err := fn(w); err != nil {
		return err
	}
	w.inBatch, w.tok = false, nil
	*s = *w
	return nil
}

// Clear removes every element (including tombstones), the image files (they belong to image
// elements) and the viewport. The appState (background colour, grid) is kept.
func (s *Scene) Clear() {
	s.elems = nil
	s.pos = newPosIndex(0)
	s.files = nil
	s.viewport = nil
}

// Viewport returns the rectangle of the scene meant to be shown, if one was set.
func (s *Scene) Viewport() (Rect, bool) {
	if s.viewport == nil {
		return Rect{}, false
	}
	return *s.viewport, true
}

// SetViewport sets the rectangle of the scene meant to be shown (used to frame exports). It is
// stored in appState under "excalibotViewport", so it survives our own files; Excalidraw ignores it.
func (s *Scene) SetViewport(r Rect) error {
	if !finite(r.X, r.Y, r.Width, r.Height) || r.Width <= 0 || r.Height <= 0 {
		return fmt.Errorf("viewport %v: %w: width and height must be positive and finite", r, ErrInvalid)
	}
	s.viewport = &r
	return nil
}

// ClearViewport removes the viewport.
func (s *Scene) ClearViewport() { s.viewport = nil }

// Files returns the image files of the scene (fileId to the raw JSON of the file entry).
func (s *Scene) Files() map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(s.files))
	for k, v := range s.files {
		out[k] = v
	}
	return out
}

// Bounds returns the box around all live elements (rotation included), and false when the scene
// is empty.
func (s *Scene) Bounds() (Rect, bool) {
	var r Rect
	ok := false
	for _, e := range s.elems {
		if e.IsDeleted {
			continue
		}
		b := BoundingBox(*e)
		if !ok {
			r, ok = b, true
		} else {
			r = r.Union(b)
		}
	}
	return r, ok
}

// nowMillis is the time for the "updated" field.
func (s *Scene) nowMillis() int64 { return s.now().UnixMilli() }
