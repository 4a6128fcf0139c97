package tools

import (
	"fmt"
	"sort"
	"strings"
)

// palette is Excalidraw's own COLOR_PALETTE (packages/common/src/colors.ts): open-color shades
// 50, 200, 400, 600 and 800 per hue, plus radix bronze. Keeping exactly these values means the
// colours the model picks are the ones a person sees in Excalidraw's colour picker.
var palette = map[string][5]string{
	"gray":   {"#f8f9fa", "#e9ecef", "#ced4da", "#868e96", "#343a40"},
	"red":    {"#fff5f5", "#ffc9c9", "#ff8787", "#fa5252", "#e03131"},
	"pink":   {"#fff0f6", "#fcc2d7", "#f783ac", "#e64980", "#c2255c"},
	"grape":  {"#f8f0fc", "#eebefa", "#da77f2", "#be4bdb", "#9c36b5"},
	"violet": {"#f3f0ff", "#d0bfff", "#9775fa", "#7950f2", "#6741d9"},
	"blue":   {"#e7f5ff", "#a5d8ff", "#4dabf7", "#228be6", "#1971c2"},
	"cyan":   {"#e3fafc", "#99e9f2", "#3bc9db", "#15aabf", "#0c8599"},
	"teal":   {"#e6fcf5", "#96f2d7", "#38d9a9", "#12b886", "#099268"},
	"green":  {"#ebfbee", "#b2f2bb", "#69db7c", "#40c057", "#2f9e44"},
	"yellow": {"#fff9db", "#ffec99", "#ffd43b", "#fab005", "#f08c00"},
	"orange": {"#fff4e6", "#ffd8a8", "#ffa94d", "#fd7e14", "#e8590c"},
	"bronze": {"#f8f1ee", "#eaddd7", "#d2bab0", "#a18072", "#846358"},
}

// hues lists palette hues in Excalidraw's picker order, for stable messages and guide text.
var hues = []string{"red", "pink", "grape", "violet", "blue", "cyan", "teal", "green", "yellow", "orange", "bronze", "gray"}

// shadeSuffixes name the five shades. A bare hue means the shade Excalidraw's quick picks use:
// index 1 for fills (DEFAULT_ELEMENT_BACKGROUND_COLOR_INDEX) and index 4 for strokes
// (DEFAULT_ELEMENT_STROKE_COLOR_INDEX), so "red" fills light and strokes dark, as in the editor.
var shadeSuffixes = [5]string{"-lightest", "-light", "-medium", "-strong", "-dark"}

const (
	colorBlack       = "#1e1e1e"
	colorWhite       = "#ffffff"
	colorTransparent = "transparent"
)

// colorRole says which of the two default shades a bare hue name means.
type colorRole int

const (
	roleStroke colorRole = iota
	roleFill
)

// colorAliases are names small models use that Excalidraw's palette spells differently, and
// colour words outside the palette mapped to its nearest hue.
var colorAliases = map[string]string{
	"grey": "gray", "purple": "violet", "brown": "bronze", "none": colorTransparent,
	"magenta": "pink", "fuchsia": "pink", "crimson": "red", "lime": "green", "navy": "blue", "sky": "blue",
	"indigo": "violet", "lavender": "grape", "turquoise": "teal", "aqua": "cyan", "gold": "yellow",
	"amber": "orange", "beige": "bronze", "tan": "bronze", "silver": "gray",
}

// NormalizeColor gives the spelling the tools read back unchanged for a colour they accept:
// "#rrggbb", "transparent", "black", "white", a palette hue ("blue") or a hue with a shade
// ("blue-light"). A bare hue stays bare, so it still means the fill or stroke shade of where it
// is used. It accepts what every colour argument of the tools accepts, and refuses the rest
// with the message they give.
func NormalizeColor(in string) (string, error) {
	hue, shade, err := parseColor(in)
	if err != nil || shade < 0 {
		return hue, err
	}
	return hue + shadeSuffixes[shade], nil
}

// resolveColor turns a colour name or hex code into the hex (or "transparent") stored in the
// scene. It accepts #rgb, #rrggbb, "transparent", "black", "white", a hue ("red"), a hue with a
// shade ("red-light", also "light-red" or "light red"), case-insensitively.
func resolveColor(in string, role colorRole) (string, error) {
	hue, shade, err := parseColor(in)
	switch {
	case err != nil:
		return "", err
	case hue == "black":
		return colorBlack, nil
	case hue == "white":
		return colorWhite, nil
	case hue == colorTransparent, strings.HasPrefix(hue, "#"):
		return hue, nil
	case shade < 0 && role == roleFill:
		return palette[hue][1], nil
	case shade < 0:
		return palette[hue][4], nil
	}
	return palette[hue][shade], nil
}

// parseColor reads a colour: a hex code ("#rrggbb"), transparent, black or white with shade -1;
// or a palette hue with the index of its shade, -1 for a bare hue.
func parseColor(in string) (hue string, shade int, err error) {
	s := strings.ToLower(strings.TrimSpace(in))
	if strings.HasPrefix(s, "#") {
		hex, err := resolveHex(in, s)
		return hex, -1, err
	}
	s = strings.NewReplacer(" ", "-", "_", "-").Replace(s)
	if a, ok := colorAliases[s]; ok {
		s = a
	}
	switch s {
	case colorTransparent, "black", "white":
		return s, -1, nil
	}
	if _, ok := palette[s]; ok {
		return s, -1, nil
	}
	if h, suffix, ok := splitShade(s); ok {
		if a, ok := colorAliases[h]; ok {
			h = a
		}
		if _, ok := palette[h]; ok {
			for i, suf := range shadeSuffixes {
				if suf == suffix {
					return h, i, nil
				}
			}
		}
	}
	return "", -1, fmt.Errorf("unknown colour %q; use a hex code like \"#1971c2\" or one of: %s", in, colorNameList())
}

// splitShade splits "red-light" or "light-red" into ("red", "-light").
func splitShade(s string) (hue, suffix string, ok bool) {
	for _, suf := range shadeSuffixes {
		if h, found := strings.CutSuffix(s, suf); found {
			return h, suf, true
		}
		if h, found := strings.CutPrefix(s, suf[1:]+"-"); found {
			return h, suf, true
		}
	}
	return "", "", false
}

func resolveHex(orig, s string) (string, error) {
	h := s[1:]
	for _, c := range h {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return "", fmt.Errorf("colour %q is not a hex code: use #rgb or #rrggbb like \"#1971c2\", or a name like \"blue\"", orig)
		}
	}
	switch len(h) {
	case 3:
		return "#" + string([]byte{h[0], h[0], h[1], h[1], h[2], h[2]}), nil
	case 6:
		return "#" + h, nil
	}
	return "", fmt.Errorf("colour %q has %d hex digits, want 3 or 6 like \"#1971c2\"", orig, len(h))
}

// colorNameList is the list of accepted names shown in refusals and the guide.
func colorNameList() string {
	return "transparent, black, white, " + strings.Join(hues, ", ") +
		" (each also as -lightest, -light, -medium, -strong, -dark, e.g. \"blue-light\")"
}

// colorName gives the shortest name that resolves back to hex in role, or hex itself when the
// colour is not in the palette. get_scene prints these so the model reads what it can write.
func colorName(hex string, role colorRole) string {
	switch hex {
	case colorTransparent, colorBlack, colorWhite:
		return map[string]string{colorTransparent: "transparent", colorBlack: "black", colorWhite: "white"}[hex]
	}
	def := 4
	if role == roleFill {
		def = 1
	}
	for _, hue := range hues {
		shades := palette[hue]
		if shades[def] == hex {
			return hue
		}
	}
	for _, hue := range hues {
		for i, v := range palette[hue] {
			if v == hex {
				return hue + shadeSuffixes[i]
			}
		}
	}
	return hex
}

// allColorNames lists every accepted palette name, sorted; used by tests and the fuzz seed corpus.
func allColorNames() []string {
	names := []string{"transparent", "black", "white"}
	for _, hue := range hues {
		names = append(names, hue)
		for _, suf := range shadeSuffixes {
			names = append(names, hue+suf)
		}
	}
	sort.Strings(names)
	return names
}
