package sequence

import (
	"fmt"
	"math"

	"github.com/excalibot/excalibot/diagram"
	"github.com/excalibot/excalibot/scene"
	"github.com/excalibot/excalibot/scene/fontmetrics"
)

// Placement of a sequence diagram, planned in full before any element is made so that the
// elements can be added in the z-order they need (lifelines under bars, bars under messages and
// notes). Text sizes come from the same metrics and wrapping the scene uses for labels.

const (
	seqBarWidth = 12.0 // activation bar; a nested one is shifted right by half of it
	seqBarPad   = 6.0  // a bar starts this far above the message that opens it
	seqNoteMax  = 220.0
	// seqNoteOffset is how far a note beside a lifeline stands off it, and how far a note over
	// two reaches past them: half of Mermaid's actorMargin.
	seqNoteOffset = 25.0
	seqBlockPad   = 14.0 // between a block's box and what it holds
	seqLabelMin   = 11 * seqFont
	seqFootFrom   = 400.0 // lifelines longer than this get the actors repeated at their foot
	seqBadge      = 22.0  // the height of a message's number badge (autonumber)
	seqBadgeFont  = 14.0
	maxID         = 64 // the longest id a part gets: the graph builder's default
)

type seqDrawing struct {
	w          *scene.Scene
	actors     []actor
	autonumber bool

	widths, centres []float64
	actorH          float64
	active          [][]int // per column, indices into bars of the open bars, innermost last
	n               int     // messages numbered so far

	msgs   []seqMsgPlan
	notes  []seqNotePlan
	blocks []seqBlockPlan
	bars   []seqBarPlan
}

type seqMsgPlan struct {
	st    *step
	label string
	pts   []scene.Point // absolute
	// self is a message to its own lifeline: its label is a free text left-aligned at side, beside
	// the loop, since a bound label would sit on the loop's far side.
	self bool
	side scene.Point // the left end of the label's middle line, absolute
	n    int         // its number when the diagram is numbered, else 0
}

type seqNotePlan struct {
	text string
	box  scene.Rect
}

type seqBlockPlan struct {
	kind, cond string
	box        scene.Rect
	dividers   []seqDivider
	depth      int
}

type seqDivider struct {
	y     float64
	label string
}

type seqBarPlan struct {
	col, depth int
	y0, y1     float64
}

// span is a horizontal extent of drawn things, to size the blocks around them.
type span struct{ lo, hi float64 }

func (a span) join(b span) span { return span{math.Min(a.lo, b.lo), math.Max(a.hi, b.hi)} }

var noSpan = span{math.Inf(1), math.Inf(-1)}

// seqText is the size of a text at seqFont, wrapped at maxW as the scene will wrap it.
func seqText(text string, size, maxW float64) (w, h float64) {
	wrapped := fontmetrics.Wrap(scene.DefaultFontFamily, size, text, maxW)
	return fontmetrics.Measure(scene.DefaultFontFamily, size, wrapped)
}

// number is the next message's number when the diagram is numbered, else 0.
func (d *seqDrawing) number() int {
	if !d.autonumber {
		return 0
	}
	d.n++
	return d.n
}

func (d *seqDrawing) draw(steps []step, ox, oy float64) (Result, error) {
	if err := d.addActors(); err != nil {
		return Result{}, err
	}
	d.columns(steps)
	d.active = make([][]int, len(d.actors))
	y, _ := d.walk(steps, d.actorH+24, 0)
	for c := range d.active { // bars left open end with the diagram
		for _, b := range d.active[c] {
			d.bars[b].y1 = y
		}
	}
	bottom := y + 20
	return d.emit(bottom, ox, oy)
}

// addActors adds the actor boxes (placed later) and records their sizes.
func (d *seqDrawing) addActors() error {
	for _, a := range d.actors {
		e := scene.NewElement(a.shape)
		e.ID = a.id
		e.Width, e.Height, _ = diagram.DefaultSize(a.shape)
		if a.fill != nil {
			e.BackgroundColor = *a.fill
		}
		if _, err := d.w.Add(e); err != nil {
			return &ItemError{Item: a.ref, Err: err}
		}
		if _, err := d.w.SetLabel(a.id, a.label); err != nil {
			return &ItemError{Item: a.ref, Field: "label", Err: err}
		}
		if err := diagram.FitLabel(d.w, a.id); err != nil {
			return err
		}
		e, _ = d.w.Get(a.id)
		d.widths = append(d.widths, e.Width)
		d.actorH = math.Max(d.actorH, e.Height)
	}
	return nil
}

// columns spaces the lifelines: every gap holds its actors' boxes, and every message label,
// self-message loop and side note fits between the lifelines it spans.
func (d *seqDrawing) columns(steps []step) {
	n := len(d.actors)
	dist := make([]float64, max(n-1, 0))
	for i := range dist {
		dist[i] = d.widths[i]/2 + d.widths[i+1]/2 + seqColumnGap
	}
	need := func(lo, hi int, room float64) { // lifelines lo and hi at least room apart
		if lo < 0 || hi >= n || lo >= hi {
			return
		}
		var have float64
		for i := lo; i < hi; i++ {
			have += dist[i]
		}
		if have < room {
			for i := lo; i < hi; i++ {
				dist[i] += (room - have) / float64(hi-lo)
			}
		}
	}
	var visit func([]step)
	visit = func(steps []step) {
		for i := range steps {
			st := &steps[i]
			switch {
			case st.isBlock():
				for _, sec := range st.sections {
					visit(sec.steps)
				}
			case st.isNote():
				nw := noteWidth(st.note)
				switch st.side {
				case "left":
					need(st.cols[0]-1, st.cols[0], nw+50)
				case "right":
					need(st.cols[0], st.cols[0]+1, nw+50)
				}
			default:
				lw, _ := seqText(st.label, seqFont, math.Inf(1))
				lo, hi := min(st.cols[0], st.cols[1]), max(st.cols[0], st.cols[1])
				if lo == hi {
					lw, _ = seqText(st.label, seqFont, seqLabelMin)
					// Nested bars, the loop, the label beside it, clear of the next lifeline's bars.
					need(lo, lo+1, seqBarWidth+seqSelfLoop+seqSelfGap+lw+seqBarWidth+12)
				} else {
					need(lo, hi, math.Max(lw+70, lw/0.7+30))
					if hi-lo >= 2 { // the label sits in the middle gap, clear of the lifelines it passes
						k := labelGap(lo, hi)
						need(k, k+1, lw+50)
					}
				}
			}
		}
	}
	visit(steps)
	d.centres = make([]float64, n)
	if n > 0 {
		d.centres[0] = d.widths[0] / 2
	}
	for i := 1; i < n; i++ {
		d.centres[i] = d.centres[i-1] + dist[i-1]
	}
}

// labelGap is the gap (between lifelines k and k+1) in the middle of lo..hi where a message
// spanning them has its label.
func labelGap(lo, hi int) int { return (lo + hi - 1) / 2 }

// A message to oneself is a square loop seqSelfLoop wide with its label seqSelfGap past its far
// side, level with the loop's middle: never on the loop's line nor over the lifeline.
const (
	seqSelfLoop = 40.0
	seqSelfGap  = 8.0
)

func noteWidth(text string) float64 {
	w, _ := seqText(text, seqFont, math.Inf(1))
	return math.Min(w, seqNoteMax) + 24
}

// edge is the x where a message touches column c coming from the side of x: the outer side of
// the open bars, or the lifeline.
func (d *seqDrawing) edge(c int, towards float64) float64 {
	x := d.centres[c]
	k := len(d.active[c])
	if k == 0 {
		return x
	}
	if towards < x {
		return x - seqBarWidth/2
	}
	return x + seqBarWidth/2 + float64(k-1)*seqBarWidth/2
}

func (d *seqDrawing) openBar(c int, y float64) {
	d.bars = append(d.bars, seqBarPlan{col: c, depth: len(d.active[c]), y0: y - seqBarPad, y1: y + seqBarPad})
	d.active[c] = append(d.active[c], len(d.bars)-1)
}

func (d *seqDrawing) closeBar(c int, y float64) bool {
	k := len(d.active[c])
	if k == 0 {
		return false
	}
	b := &d.bars[d.active[c][k-1]]
	b.y1 = math.Max(y+seqBarPad, b.y0+2*seqBarPad)
	d.active[c] = d.active[c][:k-1]
	return true
}

// walk plans steps from y down; it returns the y below them and their horizontal extent.
func (d *seqDrawing) walk(steps []step, y float64, depth int) (float64, span) {
	ext := noSpan
	for i := range steps {
		st := &steps[i]
		var sp span
		switch {
		case st.isBlock():
			y, sp = d.walkBlock(st, y, depth)
		case st.isNote():
			y, sp = d.planNote(st, y)
		default:
			y, sp = d.planMessage(st, y)
		}
		ext = ext.join(sp)
	}
	return y, ext
}

func (d *seqDrawing) planMessage(st *step, y float64) (float64, span) {
	label, n := st.label, d.number()
	from, to := st.cols[0], st.cols[1]
	if from == to {
		lw, lh := seqText(label, seqFont, seqLabelMin)
		if label == "" {
			lw, lh = 0, 0
		}
		loop := seqSelfLoop
		// The label is level with the loop's middle: room above and below for it.
		ay := y + math.Max(14, 6+lh/2-seqSelfDrop/2)
		x0 := d.edge(from, math.Inf(1))
		if st.activate {
			d.openBar(from, ay+seqSelfDrop)
		}
		x1 := d.edge(from, math.Inf(1))
		pts := []scene.Point{{X: x0, Y: ay}, {X: x0 + loop, Y: ay}, {X: x0 + loop, Y: ay + seqSelfDrop}, {X: x1, Y: ay + seqSelfDrop}}
		side := scene.Point{X: x0 + loop + seqSelfGap, Y: ay + seqSelfDrop/2}
		d.msgs = append(d.msgs, seqMsgPlan{st: st, label: label, pts: pts, self: true, side: side, n: n})
		if st.deactivate {
			d.closeBar(from, ay+seqSelfDrop)
		}
		bottom := math.Max(ay+seqSelfDrop, ay+seqSelfDrop/2+lh/2) + 14
		return bottom, span{d.centres[from] - seqBarWidth, side.X + lw}
	}
	cf, ct := d.centres[from], d.centres[to]
	width := math.Abs(ct - cf)
	lw, lh := seqText(label, seqFont, math.Max(0.7*width, seqLabelMin))
	if label == "" {
		lw, lh = 0, 0
	}
	half := math.Max(seqRow/2, lh/2+10)
	ay := y + half
	x0 := d.edge(from, ct)
	if st.activate {
		d.openBar(to, ay)
	}
	x1 := d.edge(to, cf)
	pts := []scene.Point{{X: x0, Y: ay}, {X: x1, Y: ay}}
	mid := (x0 + x1) / 2
	if lo, hi := min(from, to), max(from, to); hi-lo >= 2 {
		// Excalidraw centres a label on an arrow's middle point: put one in the middle gap
		// between lifelines, so the label does not sit on a lifeline the message passes.
		k := labelGap(lo, hi)
		mid = (d.centres[k] + d.centres[k+1]) / 2
		pts = []scene.Point{pts[0], {X: mid, Y: ay}, pts[1]}
	}
	d.msgs = append(d.msgs, seqMsgPlan{st: st, label: label, pts: pts, n: n})
	if st.deactivate && !d.closeBar(from, ay) && !st.activate {
		d.closeBar(to, ay) // "deactivate" on a message to a busy actor that sent nothing open
	}
	// The box of a block around it clears the bars on both lifelines.
	return ay + half, span{math.Min(cf, ct) - seqBarWidth, math.Max(cf, ct) + seqBarWidth}.join(span{mid - lw/2, mid + lw/2})
}

func (d *seqDrawing) planNote(st *step, y float64) (float64, span) {
	nw := noteWidth(st.note)
	_, th := seqText(st.note, seqFont, nw-2*scene.BoundTextPadding)
	h := math.Max(40, th+2*scene.BoundTextPadding+12)
	lo, hi := d.centres[st.cols[0]], d.centres[st.cols[1]]
	var x float64
	// Where Mermaid puts notes (sequenceRenderer buildNoteModel, actorMargin 50): beside a
	// lifeline half the margin off it, clear of two nested bars; over one actor centred and at
	// least as wide as its box; over two from half the margin outside one lifeline to half the
	// margin outside the other.
	switch st.side {
	case "left":
		x = lo - seqNoteOffset - nw
	case "right":
		x = lo + seqNoteOffset
	default:
		if st.cols[0] == st.cols[1] {
			nw = math.Max(nw, d.widths[st.cols[0]])
		} else {
			nw = math.Max(nw, hi-lo+2*seqNoteOffset)
		}
		x = (lo+hi)/2 - nw/2
	}
	box := scene.Rect{X: x, Y: y + 10, Width: nw, Height: h}
	d.notes = append(d.notes, seqNotePlan{text: st.note, box: box})
	return box.Y + h + 10, span{x, x + nw}
}

// walkBlock plans a block: a header row for its kind and label, its sections separated by dashed
// dividers with their labels, and a box around all of it drawn once the contents are known.
func (d *seqDrawing) walkBlock(st *step, y float64, depth int) (float64, span) {
	top := y + 6
	i := len(d.blocks)
	d.blocks = append(d.blocks, seqBlockPlan{kind: st.block, cond: st.sections[0].label, depth: depth})
	tabW, tabH := blockTab(st.block)
	condW, condH := 0.0, 0.0
	if c := st.sections[0].label; c != "" {
		condW, condH = seqText("["+c+"]", seqFont, math.Inf(1))
	}
	y = top + math.Max(tabH, condH+8) + 8
	ext := noSpan
	var dividers []seqDivider
	for k, sec := range st.sections {
		if k > 0 {
			dy := y + 6
			dividers = append(dividers, seqDivider{y: dy, label: sec.label})
			_, lh := seqText("["+sec.label+"]", seqFont, math.Inf(1))
			y = dy + lh + 10
		}
		var sp span
		y, sp = d.walk(sec.steps, y, depth+1)
		ext = ext.join(sp)
	}
	bottom := y + 8
	box := scene.Rect{X: ext.lo - seqBlockPad, Y: top, Width: ext.hi - ext.lo + 2*seqBlockPad, Height: bottom - top}
	if min := tabW + condW + 24; box.Width < min || math.IsInf(box.Width, 0) {
		box.Width = min
	}
	for _, dv := range dividers {
		if w, _ := seqText("["+dv.label+"]", seqFont, math.Inf(1)); box.Width < w+24 {
			box.Width = w + 24
		}
	}
	d.blocks[i].box, d.blocks[i].dividers = box, dividers
	return bottom + 10, span{box.X, box.X + box.Width}
}

// blockTab is the size of the tab naming a block's kind in its top-left corner.
func blockTab(kind string) (float64, float64) {
	w, h := seqText(kind, 14, math.Inf(1))
	return w + 20, h + 12
}

// closedLine is a line drawn as a closed box: Excalidraw fills a closed line with its background.
func closedLine(id string, r scene.Rect) scene.Element {
	e := scene.NewElement(scene.Line)
	e.ID, e.X, e.Y, e.Roundness = id, r.X, r.Y, nil
	e.Points = []scene.Point{{}, {X: r.Width}, {X: r.Width, Y: r.Height}, {Y: r.Height}, {}}
	return e
}

// freshID is base, or base with "-2", "-3"… when the scene has it, cut to maxID like the graph
// builder's ids.
func (d *seqDrawing) freshID(base string) string { return diagram.FreshID(base, "", maxID, d.w.Has) }

// emit adds the planned elements, shifted so the diagram's top-left corner is (ox, oy).
func (d *seqDrawing) emit(bottom, ox, oy float64) (Result, error) {
	minX := 0.0
	for _, n := range d.notes {
		minX = math.Min(minX, n.box.X)
	}
	for _, b := range d.blocks {
		minX = math.Min(minX, b.box.X)
	}
	for i := range d.actors {
		minX = math.Min(minX, d.centres[i]-d.widths[i]/2)
	}
	dx, dy := ox-minX, oy
	at := func(x, y float64) (float64, float64) { return x + dx, y + dy }
	var ids []string
	w := d.w
	add := func(e scene.Element, what string) error {
		if _, err := w.Add(e); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		ids = append(ids, e.ID)
		return nil
	}
	// Block boxes and dividers first (under everything); their tabs and labels come last, over
	// the bars and lifelines they cross.
	groups := make([]string, len(d.blocks))
	boxIDs := make([]string, len(d.blocks))
	for k, b := range d.blocks {
		groups[k] = d.freshID(fmt.Sprintf("%sblock%d", GroupPrefix, k+1))
		r := b.box
		r.X, r.Y = at(r.X, r.Y)
		box := closedLine(d.freshID(fmt.Sprintf("block%d", k+1)), r)
		box.BackgroundColor, box.StrokeColor, box.StrokeWidth = "transparent", "#868e96", 1
		box.GroupIDs = []string{groups[k]}
		boxIDs[k] = box.ID
		if err := add(box, "block box"); err != nil {
			return Result{}, err
		}
		for j, dv := range b.dividers {
			x, y := at(b.box.X, dv.y)
			line := scene.NewElement(scene.Line)
			line.ID, line.X, line.Y, line.Roundness = d.freshID(fmt.Sprintf("%s-else%d", box.ID, j+1)), x, y, nil
			line.Points = []scene.Point{{}, {X: b.box.Width}}
			line.StrokeStyle, line.StrokeColor, line.StrokeWidth, line.GroupIDs = "dashed", "#868e96", 1, []string{groups[k]}
			if err := add(line, "block divider"); err != nil {
				return Result{}, err
			}
		}
	}
	// Lifelines, then bars on them, then the actors on top of their lifelines' start.
	for i, a := range d.actors {
		c, top := at(d.centres[i], d.actorH)
		line := scene.NewElement(scene.Line)
		line.ID, line.X, line.Y = d.freshID("life-"+a.id), c, top
		line.Points = []scene.Point{{}, {Y: bottom - d.actorH}}
		line.StrokeStyle, line.StrokeColor, line.StrokeWidth = "dashed", "#868e96", 1
		if err := add(line, "lifeline of "+a.id); err != nil {
			return Result{}, err
		}
		members := []string{a.id, line.ID}
		for k, b := range d.bars {
			if b.col != i {
				continue
			}
			x, y := at(d.centres[i]-seqBarWidth/2+float64(b.depth)*seqBarWidth/2, b.y0)
			bar := closedLine(d.freshID(fmt.Sprintf("act-%s-%d", a.id, k+1)), scene.Rect{X: x, Y: y, Width: seqBarWidth, Height: b.y1 - b.y0})
			bar.BackgroundColor, bar.StrokeColor, bar.StrokeWidth, bar.Roughness = "#e9ecef", "#495057", 1, 0
			if err := add(bar, "activation of "+a.id); err != nil {
				return Result{}, err
			}
			members = append(members, bar.ID)
		}
		e, _ := w.Get(a.id)
		x, y := at(d.centres[i]-e.Width/2, d.actorH-e.Height)
		if err := w.MoveBy([]string{a.id}, x-e.X, y-e.Y); err != nil {
			return Result{}, fmt.Errorf("place actor %q: %w", a.id, err)
		}
		if err := w.BringToFront(a.id); err != nil {
			return Result{}, fmt.Errorf("raise actor %q: %w", a.id, err)
		}
		if bottom-d.actorH > seqFootFrom { // a long diagram repeats its actors at the foot, as Mermaid does
			e, _ = w.Get(a.id)
			foot := scene.NewElement(e.Type)
			foot.ID, foot.Width, foot.Height = d.freshID(a.id+"-foot"), e.Width, e.Height
			foot.X, foot.Y = at(d.centres[i]-e.Width/2, bottom)
			foot.BackgroundColor, foot.StrokeColor, foot.FillStyle = e.BackgroundColor, e.StrokeColor, e.FillStyle
			if err := add(foot, "foot of "+a.id); err != nil {
				return Result{}, err
			}
			if _, err := w.SetLabel(foot.ID, w.LabelText(a.id)); err != nil {
				return Result{}, fmt.Errorf("label the foot of %q: %w", a.id, err)
			}
			members = append(members, foot.ID)
		}
		if _, err := w.Group(GroupPrefix+a.id, members...); err != nil {
			return Result{}, fmt.Errorf("group %q with its lifeline: %w", a.id, err)
		}
		ids = append([]string{a.id}, ids...)
	}
	for k, m := range d.msgs {
		e := scene.NewElement(scene.Arrow)
		e.ID, e.StrokeStyle, e.EndArrowhead = d.freshID(fmt.Sprintf("msg%d", k+1)), m.st.style, "arrow"
		switch m.st.arrow {
		case "both":
			e.StartArrowhead = "arrow"
		case "none":
			e.EndArrowhead = ""
		}
		e.X, e.Y = at(m.pts[0].X, m.pts[0].Y)
		e.Points = make([]scene.Point, len(m.pts))
		for j, p := range m.pts {
			e.Points[j] = scene.Point{X: p.X - m.pts[0].X, Y: p.Y - m.pts[0].Y}
		}
		if len(m.pts) > 2 {
			e.Roundness = nil // a square loop (a rounded one curls into its own label), or a straight line
		}
		// A self-message's label and a number badge are free elements: grouped with their arrow
		// so they move with it in the editor.
		var group []string
		if m.self && m.label != "" || m.n > 0 {
			group = []string{d.freshID(GroupPrefix + e.ID)}
			e.GroupIDs = group
		}
		if _, err := w.Add(e); err != nil {
			return Result{}, &ItemError{Item: m.st.ref, Err: err}
		}
		ids = append(ids, e.ID)
		switch {
		case m.label == "":
		case m.self:
			wrapped := fontmetrics.Wrap(scene.DefaultFontFamily, seqFont, m.label, seqLabelMin)
			_, h := fontmetrics.Measure(scene.DefaultFontFamily, seqFont, wrapped)
			x, y := at(m.side.X, m.side.Y-h/2)
			t := d.freeText(e.ID+"-label", wrapped, x, y, group[0])
			t.StrokeColor = "#1e1e1e"
			if err := add(t, "label of "+e.ID); err != nil {
				return Result{}, &ItemError{Item: m.st.ref, Field: "label", Err: err}
			}
		default:
			if _, err := w.SetLabel(e.ID, m.label, scene.TextStyle{FontSize: seqFont}); err != nil {
				return Result{}, &ItemError{Item: m.st.ref, Field: "label", Err: err}
			}
		}
		if m.n > 0 {
			x, y := at(m.pts[0].X, m.pts[0].Y)
			if err := d.badge(add, e.ID, m.n, x, y, group[0]); err != nil {
				return Result{}, err
			}
		}
	}
	for k, n := range d.notes {
		e := scene.NewElement(scene.Rectangle)
		e.ID = d.freshID(fmt.Sprintf("note%d", k+1))
		e.X, e.Y = at(n.box.X, n.box.Y)
		e.Width, e.Height = n.box.Width, n.box.Height
		e.BackgroundColor, e.StrokeColor, e.StrokeWidth, e.Roundness = "#fff9db", "#f08c00", 1, nil
		e.GroupIDs = []string{GroupPrefix + e.ID}
		if err := add(e, "note"); err != nil {
			return Result{}, err
		}
		if _, err := w.SetLabel(e.ID, n.text, scene.TextStyle{FontSize: seqFont}); err != nil {
			return Result{}, &ItemError{Item: fmt.Sprintf("note %q", n.text), Err: err}
		}
	}
	for k, b := range d.blocks {
		x, y := at(b.box.X, b.box.Y)
		tw, th := blockTab(b.kind)
		tab := scene.NewElement(scene.Rectangle)
		tab.ID, tab.X, tab.Y, tab.Width, tab.Height = d.freshID(boxIDs[k]+"-tab"), x, y, tw, th
		tab.Roundness, tab.BackgroundColor, tab.StrokeColor, tab.StrokeWidth = nil, "#e9ecef", "#868e96", 1
		tab.GroupIDs = []string{groups[k]}
		if err := add(tab, "block tab"); err != nil {
			return Result{}, err
		}
		if _, err := w.SetLabel(tab.ID, b.kind, scene.TextStyle{FontSize: 14}); err != nil {
			return Result{}, fmt.Errorf("block tab label: %w", err)
		}
		if b.cond != "" {
			if err := add(d.freeText(boxIDs[k]+"-label", "["+b.cond+"]", x+tw+8, y+4, groups[k]), "block label"); err != nil {
				return Result{}, err
			}
		}
		for j, dv := range b.dividers {
			if dv.label == "" {
				continue
			}
			lx, ly := at(b.box.X, dv.y)
			if err := add(d.freeText(fmt.Sprintf("%s-else%d-label", boxIDs[k], j+1), "["+dv.label+"]", lx+10, ly+4, groups[k]), "branch label"); err != nil {
				return Result{}, err
			}
		}
	}
	return Result{IDs: ids, Actors: len(d.actors), Messages: len(d.msgs), Notes: len(d.notes), Blocks: len(d.blocks), Activations: len(d.bars)}, nil
}

// badge draws a message's number as Mermaid's autonumber does: a dark circle with the number in
// white, centred on the message's start. The number is a free text over the circle rather than its
// label: a label would make Excalidraw grow the circle to its padded text box.
func (d *seqDrawing) badge(add func(scene.Element, string) error, msgID string, n int, cx, cy float64, group string) error {
	num := fmt.Sprint(n)
	tw, th := seqText(num, seqBadgeFont, math.Inf(1))
	size := math.Max(seqBadge, tw+10)
	c := scene.NewElement(scene.Ellipse)
	c.ID, c.X, c.Y, c.Width, c.Height = d.freshID(msgID+"-badge"), cx-size/2, cy-seqBadge/2, size, seqBadge
	c.BackgroundColor, c.StrokeColor, c.StrokeWidth, c.FillStyle, c.Roughness = "#343a40", "#343a40", 1, "solid", 0
	c.GroupIDs = []string{group}
	if err := add(c, "number of "+msgID); err != nil {
		return err
	}
	t := d.freeText(c.ID+"-text", num, cx-tw/2, cy-th/2, group)
	t.FontSize, t.StrokeColor, t.TextAlign = seqBadgeFont, "#ffffff", "center"
	return add(t, "number of "+msgID)
}

func (d *seqDrawing) freeText(id, text string, x, y float64, group string) scene.Element {
	t := scene.NewElement(scene.Text)
	t.ID, t.X, t.Y = d.freshID(id), x, y
	t.Text, t.OriginalText, t.FontSize = text, text, seqFont
	t.StrokeColor = "#495057"
	t.GroupIDs = []string{group}
	return t
}
