package tools

import (
	"strings"
	"testing"
)

func TestResolveColor(t *testing.T) {
	tests := []struct {
		in   string
		role colorRole
		want string
	}{
		{"red", roleFill, "#ffc9c9"},
		{"red", roleStroke, "#e03131"},
		{"Red-Light", roleStroke, "#ffc9c9"},
		{"light red", roleStroke, "#ffc9c9"},
		{"light_blue", roleFill, "#a5d8ff"},
		{"blue-lightest", roleFill, "#e7f5ff"},
		{"blue-medium", roleFill, "#4dabf7"},
		{"blue-strong", roleFill, "#228be6"},
		{"blue-dark", roleFill, "#1971c2"},
		{"grey", roleFill, "#e9ecef"},
		{"purple", roleStroke, "#6741d9"},
		{"bronze-dark", roleFill, "#846358"},
		{"black", roleFill, "#1e1e1e"},
		{"white", roleStroke, "#ffffff"},
		{"transparent", roleFill, "transparent"},
		{"none", roleFill, "transparent"},
		{"#ABC", roleFill, "#aabbcc"},
		{"#1971C2", roleFill, "#1971c2"},
		{" #1971c2 ", roleFill, "#1971c2"},
	}
	for _, tt := range tests {
		got, err := resolveColor(tt.in, tt.role)
		if err != nil || got != tt.want {
			t.Errorf("resolveColor(%q, %v) = %q, %v; want %q", tt.in, tt.role, got, err, tt.want)
		}
	}
}

func TestResolveColorRefused(t *testing.T) {
	tests := []struct{ in, wantMsg string }{
		{"reddish", "blue-light"},
		{"rgb(1,2,3)", "transparent, black, white, red"},
		{"#12", "want 3 or 6"},
		{"#12345678", "want 3 or 6"},
		{"#zzzzzz", "not a hex code"},
		{"", "unknown colour"},
		{"red-lighter", "unknown colour"},
	}
	for _, tt := range tests {
		got, err := resolveColor(tt.in, roleFill)
		if err == nil {
			t.Errorf("resolveColor(%q) = %q, want an error", tt.in, got)
			continue
		}
		if !strings.Contains(err.Error(), tt.wantMsg) {
			t.Errorf("resolveColor(%q) error = %q, want it to mention %q", tt.in, err, tt.wantMsg)
		}
	}
}

// Every name colorName prints must resolve back to the same hex in the same role, so that what
// get_scene shows can be written back unchanged.
func TestColorNameRoundTrip(t *testing.T) {
	for _, role := range []colorRole{roleStroke, roleFill} {
		for _, hue := range hues {
			for _, hex := range palette[hue] {
				name := colorName(hex, role)
				back, err := resolveColor(name, role)
				if err != nil || back != hex {
					t.Errorf("colorName(%s, %v) = %q resolves to %q, %v; want %s", hex, role, name, back, err, hex)
				}
			}
		}
		for _, name := range allColorNames() {
			hex, err := resolveColor(name, role)
			if err != nil {
				t.Errorf("listed name %q refused: %v", name, err)
				continue
			}
			if back, _ := resolveColor(colorName(hex, role), role); back != hex {
				t.Errorf("%q -> %s -> %q -> %s", name, hex, colorName(hex, role), back)
			}
		}
	}
	if got := colorName("#123456", roleFill); got != "#123456" {
		t.Errorf("colorName of a non-palette colour = %q, want the hex", got)
	}
}
