package tools

import (
	"strings"
	"testing"

	"github.com/excalibot/excalibot/diagram/graph"
)

func TestLegibilityNote(t *testing.T) {
	tests := []struct {
		name   string
		l      graph.Legibility
		groups []string
		want   []string // in the note; none for no note
	}{
		{"reads well", graph.Legibility{Aspect: 1.6, PreviewPx: 18}, nil, nil},
		{"a long strip", graph.Legibility{Aspect: 5.2, PreviewPx: 15}, nil, []string{"5.2:1, one long strip", "main flow first"}},
		{"too small", graph.Legibility{Aspect: 1.2, PreviewPx: 7.4}, []string{"Sources", "Kafka", "Lake"}, []string{"about 7 px high", "one diagram per group (Sources, Kafka, Lake)"}},
		{"both", graph.Legibility{Aspect: 3.1, PreviewPx: 8}, []string{"a", "b", "c", "d", "e", "f"}, []string{"3.1:1 and its labels come out about 8 px", "(a, b, c, d, …)"}},
	}
	for _, tt := range tests {
		got := legibilityNote(tt.l, tt.groups)
		if len(tt.want) == 0 {
			if got != "" {
				t.Errorf("%s: legibilityNote = %q, want none", tt.name, got)
			}
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: legibilityNote = %q, want it to say %q", tt.name, got, w)
			}
		}
	}
}
