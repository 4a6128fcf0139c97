package bot

import "testing"

func TestParseCommand(t *testing.T) {
	tests := []struct {
		in   string
		kind CommandKind
		arg  string
		err  bool
	}{
		{"undo", CmdUndo, "", false},
		{"  Undo! ", CmdUndo, "", false},
		{"/undo@excalibot", CmdUndo, "", false},
		{"/redo", CmdRedo, "", false},
		{"new", CmdReset, "", false},
		{"/reset", CmdReset, "", false},
		{"history", CmdHistory, "", false},
		{"help", CmdHelp, "", false},
		{"/start", CmdHelp, "", false},
		{"", CmdHelp, "", false},
		{"export svg", CmdExport, "svg", false},
		{"/export Excalidraw", CmdExport, "excalidraw", false},
		{"export", CmdExport, "png", false},
		{"export pdf", CmdExport, "", true},
		{"theme dark", CmdTheme, "dark", false},
		{"theme blue", CmdTheme, "", true},
		{"theme", CmdTheme, "", true},
		{"/frobnicate", CmdHelp, "", true},
		{"/draw a box labelled API", CmdDraw, "a box labelled API", false},
		{"/draw", CmdHelp, "", false},
		{"undo the colour change and add a cache", CmdDraw, "undo the colour change and add a cache", false},
		{"draw our deploy pipeline", CmdDraw, "draw our deploy pipeline", false},
		{"new service called Billing next to API", CmdDraw, "new service called Billing next to API", false},
	}
	for _, tt := range tests {
		got := ParseCommand(tt.in)
		if got.Kind != tt.kind || got.Arg != tt.arg || (got.Err != "") != tt.err {
			t.Errorf("ParseCommand(%q) = %+v; want kind %d arg %q err %v", tt.in, got, tt.kind, tt.arg, tt.err)
		}
	}
}
