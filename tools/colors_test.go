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
		{"magenta", roleFill, "#fcc2d7"},
		{"dark crimson", roleFill, "#e03131"},
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

// NormalizeColor spells a colour so it resolves as the original does in every role: a bare hue
// stays bare (its shade depends on the role), a shade or alias is spelled out, hex is expanded.
func TestNormalizeColor(t *testing.T) {
	for in, want := range map[string]string{"Blue": "blue", "light blue": "blue-light", "dark-red": "red-dark",
		"blue_lightest": "blue-lightest", "grey": "gray", "purple": "violet", "magenta": "pink",
		"light lavender": "grape-light", "none": "transparent", " White ": "white", "BLACK": "black",
		"#ABC": "#aabbcc", "#1971C2": "#1971c2"} {
		got, err := NormalizeColor(in)
		if err != nil || got != want {
			t.Errorf("NormalizeColor(%q) = %q, %v; want %q", in, got, err, want)
			continue
		}
		for _, role := range []colorRole{roleStroke, roleFill} {
			a, _ := resolveColor(in, role)
			if b, err := resolveColor(got, role); err != nil || a != b {
				t.Errorf("%q resolves to %s in role %v but %q to %s, %v", in, a, role, got, b, err)
			}
		}
	}
	for _, bad := range []string{"blurple", "#12345", "#ggg", "white-dark", "transparent-light", "", "light"} {
		got, err := NormalizeColor(bad)
		if _, rerr := resolveColor(bad, roleFill); err == nil || rerr == nil || err.Error() != rerr.Error() {
			t.Errorf("NormalizeColor(%q) = %q, %v; want refused as resolveColor refuses it (%v)", bad, got, err, rerr)
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
