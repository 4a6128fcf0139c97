package graph

import (
	"testing"

	"github.com/excalibot/excalibot/layout"
	"github.com/excalibot/excalibot/scene"
)

func TestDetour(t *testing.T) {
	box := scene.Rect{X: 80, Y: 30, Width: 40, Height: 40}
	other := scene.Rect{X: 300, Y: 300, Width: 40, Height: 40}
	tests := []struct {
		name string
		line []scene.Point
	}{
		{"straight across", []scene.Point{{X: 0, Y: 50}, {X: 200, Y: 50}}},
		{"across off centre", []scene.Point{{X: 0, Y: 60}, {X: 200, Y: 40}}},
		{"down through", []scene.Point{{X: 100, Y: -100}, {X: 95, Y: 200}}},
		{"a bend inside", []scene.Point{{X: 0, Y: 0}, {X: 100, Y: 50}, {X: 200, Y: 0}}},
	}
	for _, tt := range tests {
		got, ok := detour(tt.line, []scene.Rect{other, box}, detourMargins[0])
		if !ok {
			t.Errorf("%s: no detour found", tt.name)
			continue
		}
		if got[0] != tt.line[0] || got[len(got)-1] != tt.line[len(tt.line)-1] {
			t.Errorf("%s: ends %v … %v moved, want %v … %v", tt.name, got[0], got[len(got)-1], tt.line[0], tt.line[len(tt.line)-1])
		}
		for k := 1; k < len(got); k++ {
			if segmentThrough(got[k-1], got[k], box) {
				t.Errorf("%s: %v still passes through %v", tt.name, got, box)
				break
			}
		}
		if len(got) > len(tt.line)+4 {
			t.Errorf("%s: %d points, want the way round one side (at most %d)", tt.name, len(got), len(tt.line)+4)
		}
	}
}

func TestCentreOn(t *testing.T) {
	at := layout.Point{X: 50, Y: 0}
	got := centreOn([]layout.Point{{X: 10, Y: 0}, {X: 20, Y: 10}, {X: 30, Y: 0}, at, {X: 90, Y: 0}}, at)
	if len(got)%2 != 1 || got[len(got)/2] != at {
		t.Errorf("centreOn = %v, want %v as the middle point", got, at)
	}
}
