package scene

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestRandomOperations runs a long random sequence of operations (seeded, so failures reproduce)
// and checks after every step that the invariants hold, bound arrows end on their targets'
// borders, and the scene survives an encode/decode round trip unchanged. Refused operations must
// leave the scene exactly as it was.
func TestRandomOperations(t *testing.T) {
	for seed := range uint64(2) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			randomOps(t, seed, 200)
		})
	}
}

func randomOps(t *testing.T, seed uint64, steps int) {
	r := rand.New(rand.NewPCG(seed, 99))
	s := newTestScene()
	types := []Type{Rectangle, Ellipse, Diamond}
	pick := func() string {
		ids := s.IDs()
		if len(ids) == 0 {
			return "none"
		}
		return ids[r.IntN(len(ids))]
	}
	picks := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = pick()
		}
		return out
	}
	n := 0
	for step := range steps {
		before, _ := s.Encode()
		var err error
		op := r.IntN(15)
		switch op {
		case 0, 1, 2:
			n++
			e := shape(types[r.IntN(3)], fmt.Sprintf("s%d", n), r.Float64()*1500-200, r.Float64()*900-200, 40+r.Float64()*200, 30+r.Float64()*120)
			e.Angle = []float64{0, 0, 0.3, 1.2}[r.IntN(4)]
			_, err = s.Add(e)
		case 3, 4:
			n++
			_, err = s.Add(arrow(fmt.Sprintf("a%d", n), pick(), pick()))
		case 5:
			_, err = s.SetLabel(pick(), []string{"", "x", "a longer label that wraps somewhere", "two\nlines"}[r.IntN(4)])
		case 6:
			id := pick()
			err = s.Update(id, func(e *Element) error {
				e.X += r.Float64()*200 - 100
				if e.Type.IsShape() {
					e.Width = 20 + r.Float64()*200
				}
				return nil
			})
		case 7:
			_, err = s.Delete(pick())
		case 8:
			_, err = s.Group("", picks(2+r.IntN(3))...)
		case 9:
			err = s.Align(picks(3), []Alignment{AlignLeft, AlignCenter, AlignBottom}[r.IntN(3)])
		case 10:
			err = s.Distribute(picks(4), []Direction{Horizontal, Vertical}[r.IntN(2)])
		case 11:
			if r.IntN(2) == 0 {
				err = s.Lock(pick())
			} else {
				err = s.Unlock(pick())
			}
		case 12:
			err = s.MoveBy(picks(2), r.Float64()*100-50, r.Float64()*100-50)
		case 14:
			// Off-centre aims, as arrows drawn in Excalidraw have.
			err = s.Update(pick(), func(e *Element) error {
				if e.StartBinding != nil {
					e.StartBinding.Focus = r.Float64()*1.8 - 0.9
				}
				if e.EndBinding != nil {
					e.EndBinding.Focus = r.Float64()*1.8 - 0.9
				}
				return nil
			})
		case 13:
			if r.IntN(2) == 0 {
				err = s.BringToFront(pick())
			} else {
				err = s.SendToBack(pick())
			}
		}
		if err != nil {
			if !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrLocked) && !errors.Is(err, ErrExists) {
				t.Fatalf("step %d op %d: unexpected error kind: %v", step, op, err)
			}
			after, _ := s.Encode()
			if string(before) != string(after) {
				t.Fatalf("step %d op %d: refused operation (%v) changed the scene", step, op, err)
			}
		}
		assertConsistent(t, s)
		assertArrowsOnBorders(t, s)
		if t.Failed() {
			t.Fatalf("step %d op %d (err %v)", step, op, err)
		}
		out, _ := s.Encode()
		s2, derr := Decode(out)
		if derr != nil {
			t.Fatalf("step %d: decode own output: %v", step, derr)
		}
		assertSameElements(t, s, s2)
	}
}
