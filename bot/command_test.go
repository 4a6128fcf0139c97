package bot

import (
	"regexp"
	"strings"
	"testing"
)

func TestParseCommand(t *testing.T) {
	tests := []struct {
		in   string
		kind CommandKind
		arg  string
		err  bool
		rev  int64
	}{
		{"undo", CmdUndo, "", false, 0},
		{"  Undo! ", CmdUndo, "", false, 0},
		{"/undo@excalibot", CmdUndo, "", false, 0},
		{"/redo", CmdRedo, "", false, 0},
		{"new", CmdReset, "", false, 0},
		{"/reset", CmdReset, "", false, 0},
		{"history", CmdHistory, "", false, 0},
		{"help", CmdHelp, "", false, 0},
		{"/start", CmdHelp, "", false, 0},
		{"", CmdHelp, "", false, 0},
		{"export svg", CmdExport, "svg", false, 0},
		{"/export Excalidraw", CmdExport, "excalidraw", false, 0},
		{"export", CmdExport, "png", false, 0},
		{"export pdf", CmdExport, "", true, 0},
		{"theme dark", CmdTheme, "dark", false, 0},
		{"theme blue", CmdTheme, "", true, 0},
		{"theme", CmdTheme, "", true, 0},
		{"/frobnicate", CmdHelp, "", true, 0},
		{"/draw a box labelled API", CmdDraw, "a box labelled API", false, 0},
		{"/draw", CmdHelp, "", false, 0},
		{"undo the colour change and add a cache", CmdDraw, "undo the colour change and add a cache", false, 0},
		{"draw our deploy pipeline", CmdDraw, "draw our deploy pipeline", false, 0},
		{"new service called Billing next to API", CmdDraw, "new service called Billing next to API", false, 0},
		{"show", CmdShow, "", false, 0},
		{"show 3", CmdShow, "", false, 3},
		{"/show@excalibot r12", CmdShow, "", false, 12},
		{"Show #4.", CmdShow, "", false, 4},
		{"show revision 2", CmdShow, "", false, 2},
		{"show 0", CmdShow, "", true, 0},
		{"show the database in red", CmdDraw, "show the database in red", false, 0},
		{"show 3 boxes in a row", CmdDraw, "show 3 boxes in a row", false, 0},
		{"revert 3", CmdRevert, "", false, 3},
		{"/revert v7", CmdRevert, "", false, 7},
		{"revert to 2", CmdRevert, "", false, 2},
		{"revert to revision 2!", CmdRevert, "", false, 2},
		{"revert", CmdRevert, "", true, 0},
		{"revert -1", CmdRevert, "", true, 0},
		{"revert 99999999999999999999", CmdRevert, "", true, 0},
		{"revert it", CmdRevert, "", true, 0},
		{"revert the colours to blue", CmdDraw, "revert the colours to blue", false, 0},
		{"describe", CmdDescribe, "", false, 0},
		{"/describe 2", CmdDescribe, "", false, 2},
		{"describe our login flow", CmdDraw, "describe our login flow", false, 0},
	}
	for _, tt := range tests {
		got := ParseCommand(tt.in)
		if got.Kind != tt.kind || got.Arg != tt.arg || (got.Err != nil) != tt.err || got.Rev != tt.rev {
			t.Errorf("ParseCommand(%q) = %+v; want kind %d arg %q err %v rev %d", tt.in, got, tt.kind, tt.arg, tt.err, tt.rev)
		}
	}
}

// TestCommandsAreParsed: every command a platform lists is one ParseCommand understands, and the
// help names it.
func TestCommandsAreParsed(t *testing.T) {
	for _, c := range Commands {
		arg := map[string]string{"draw": " a box", "show": " 2", "revert": " 2", "describe": "", "export": " png", "theme": " dark"}[c.Name]
		if got := ParseCommand("/" + c.Name + arg); got.Err != nil || (got.Kind == CmdDraw) != (c.Name == "draw") {
			t.Errorf("ParseCommand(/%s%s) = %+v; want the command", c.Name, arg, got)
		}
		_, list, _ := strings.Cut(HelpText, "Commands in a thread:")
		if c.Name != "draw" && !regexp.MustCompile(`(•|/|\(or) ?`+c.Name+`\b`).MatchString(list) {
			t.Errorf("the help does not name %s", c.Name)
		}
		if c.Description == "" {
			t.Errorf("%s has no description", c.Name)
		}
	}
}
