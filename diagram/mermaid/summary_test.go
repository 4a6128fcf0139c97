package mermaid

import (
	"strings"
	"testing"
)

// TestImportedCounts: what Import says counts in words, "1 arrow" and "2 arrows".
func TestImportedCounts(t *testing.T) {
	tests := []struct {
		m    Imported
		want string
	}{
		{Imported{Type: "flowchart-v2", Shapes: []string{`A "Start"`}, Arrows: 1}, `Drew the Mermaid flowchart diagram at (0,0): 1 shape, 1 arrow. Shapes: A "Start".`},
		{Imported{Type: "flowchart", Shapes: []string{"A", "B"}, Arrows: 0}, "Drew the Mermaid flowchart diagram at (0,0): 2 shapes, 0 arrows. Shapes: A, B."},
		{Imported{Type: "er", Shapes: []string{"A", "B"}, Arrows: 3, Renamed: 1}, "1 id was already used on the canvas and got a suffix."},
		{Imported{Type: "er", Shapes: []string{"A", "B"}, Arrows: 3, Renamed: 2}, "2 ids were already used on the canvas and got a suffix."},
	}
	for _, tt := range tests {
		if got := tt.m.String(); !strings.Contains(got, tt.want) {
			t.Errorf("String() = %q, want %q in it", got, tt.want)
		}
	}
}
