package scene

import (
	"encoding/json"
	"math"
	"testing"
)

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// assertConsistent checks the scene's invariants: unique ids, increasing valid indices, and every
// reference answered from the other side.
func assertConsistent(t *testing.T, s *Scene) {
	t.Helper()
	seen := map[string]bool{}
	prev := ""
	for i, e := range s.elems {
		if seen[e.ID] {
			t.Errorf("duplicate id %q", e.ID)
		}
		seen[e.ID] = true
		if s.pos.m[e.ID] != i {
			t.Errorf("pos[%q] = %d, want %d", e.ID, s.pos.m[e.ID], i)
		}
		if err := validateKey(e.Index); err != nil {
			t.Errorf("element %q: %v", e.ID, err)
		}
		if e.Index <= prev {
			t.Errorf("element %q: index %q not above %q", e.ID, e.Index, prev)
		}
		prev = e.Index
	}
	if len(s.pos.m) != len(s.elems) {
		t.Errorf("pos has %d entries, elems %d", len(s.pos.m), len(s.elems))
	}
	for _, e := range s.elems {
		if e.IsDeleted {
			continue
		}
		if e.FrameID != "" {
			if f := s.get(e.FrameID); f == nil || f.Type != Frame {
				t.Errorf("element %q: frameId %q is not a live frame", e.ID, e.FrameID)
			}
		}
		if e.ContainerID != "" {
			c := s.get(e.ContainerID)
			if c == nil || c.Label() != e.ID {
				t.Errorf("text %q: container %q does not list it", e.ID, e.ContainerID)
			}
		}
		for _, b := range []*Binding{e.StartBinding, e.EndBinding} {
			if b == nil {
				continue
			}
			tg := s.get(b.ElementID)
			if tg == nil || !containsID(tg.BoundElements, e.ID) {
				t.Errorf("arrow %q: target %q does not list it", e.ID, b.ElementID)
			}
		}
		for _, b := range e.BoundElements {
			o := s.get(b.ID)
			switch {
			case o == nil:
				t.Errorf("element %q lists missing %q", e.ID, b.ID)
			case b.Type == Text && o.ContainerID != e.ID:
				t.Errorf("element %q lists text %q whose containerId is %q", e.ID, b.ID, o.ContainerID)
			case b.Type != Text && !((o.StartBinding != nil && o.StartBinding.ElementID == e.ID) || (o.EndBinding != nil && o.EndBinding.ElementID == e.ID)):
				t.Errorf("element %q lists arrow %q which is not bound to it", e.ID, b.ID)
			}
		}
	}
}

func nan() float64 { z := 0.0; return z / z }

func hypot(p Point) float64 { return math.Hypot(p.X, p.Y) }

func jsonMarshalIndent(v any) ([]byte, error) { return json.MarshalIndent(v, "", "  ") }
