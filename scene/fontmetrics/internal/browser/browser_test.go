package browser

import "testing"

func TestFontString(t *testing.T) {
	tests := []struct {
		id   int
		px   float64
		want string
	}{
		{5, 20, "20px Excalifont, Xiaolai, Segoe UI Emoji"},
		{7, 36, "36px Lilita One, Segoe UI Emoji"},
		{9, 16.5, "16.5px Liberation Sans, Segoe UI Emoji"},
		{2, 28, "28px Helvetica, Segoe UI Emoji"},
		{42, 20, "20px Excalifont, Segoe UI Emoji"},
	}
	for _, tt := range tests {
		if got := FontString(tt.id, tt.px); got != tt.want {
			t.Errorf("FontString(%d, %v) = %q, want %q", tt.id, tt.px, got, tt.want)
		}
	}
}

func TestCut(t *testing.T) {
	src := []byte("a\n// x.ts\nbody\n// y.ts\nrest")
	got, err := cut(src, "\n// x.ts", "\n// y.ts")
	if err != nil || string(got) != "\n// x.ts\nbody" {
		t.Errorf("cut = %q, %v; want %q", got, err, "\n// x.ts\nbody")
	}
	if _, err := cut(src, "\n// z.ts", "\n// y.ts"); err == nil {
		t.Error("cut with a missing start marker succeeded, want an error")
	}
	if _, err := cut(src, "\n// y.ts", "\n// x.ts"); err == nil {
		t.Error("cut with the end marker only before the start succeeded, want an error")
	}
}
