package slack

import (
	"strings"
	"testing"
)

func TestCleanText(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{"<@U0BOT> draw a flow", "draw a flow"},
		{"<@U0BOT|excalibot>   draw", "draw"},
		{"please <@U0BOT> draw", "please draw"},
		{"<@U0BOT>", ""},
		{"ask <@U123> about it", "ask <@U123> about it"},
		{"in <#C42|general> please", "in #general please"},
		{"A &lt; B &amp;&amp; C &gt; D", "A < B && C > D"},
		{"see <https://example.com/x|the docs>", "see the docs (https://example.com/x)"},
		{"see <https://example.com/x|example.com/x>", "see example.com/x"}, // Slack's auto-link
		{"see <https://example.com>", "see https://example.com"},
		{"see <http://example.com|example.com>", "see example.com"},
		{"mail <mailto:a@b.c|a@b.c>", "mail a@b.c"},
		{"<!here> draw", "<!here> draw"},
		{"<@U0BOT> line one\n  line   two ", "line one\nline two"},
	} {
		if got := cleanText(tc.in, "U0BOT"); got != tc.want {
			t.Errorf("cleanText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestHasMention(t *testing.T) {
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"<@U0BOT> hi", true},
		{"hi <@U0BOT|bot>", true},
		{"hi <@U0BOTX>", false},
		{"hi U0BOT", false},
	} {
		if got := hasMention(tc.text, "U0BOT"); got != tc.want {
			t.Errorf("hasMention(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
	if hasMention("<@>", "") {
		t.Error("an unknown bot id matches nothing")
	}
}

func TestNewConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string // substring of the error; "" for none
	}{
		{"socket ok", Config{BotToken: "xoxb-1", AppToken: "xapp-1"}, ""},
		{"events ok", Config{BotToken: "xoxb-1", SigningSecret: "s", Mode: "events"}, ""},
		{"no bot token", Config{AppToken: "xapp-1"}, "SLACK_BOT_TOKEN"},
		{"socket without app token", Config{BotToken: "xoxb-1"}, "SLACK_APP_TOKEN"},
		{"bot token as app token", Config{BotToken: "xoxb-1", AppToken: "xoxb-1"}, "must start with xapp-"},
		{"events without secret", Config{BotToken: "xoxb-1", Mode: "events"}, "SLACK_SIGNING_SECRET"},
		{"unknown mode", Config{BotToken: "xoxb-1", Mode: "rtm"}, `mode "rtm"`},
		{"everything missing", Config{}, "SLACK_BOT_TOKEN, xoxb-…) is missing; Socket Mode needs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.cfg, newRecorder(), nil)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("err = %v, want none", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"héllo wörld", 6, "héllo…"},
		{"a &amp; b", 4, "a …"}, // never cut inside an escape
	} {
		if got := truncate(tc.in, tc.n); got != tc.want {
			t.Errorf("truncate(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

func TestThreadSetForgetsOldest(t *testing.T) {
	s := newThreadSet(2)
	s.add("a")
	s.add("b")
	s.add("a") // already there: no reordering, no growth
	s.add("c")
	for k, want := range map[string]bool{"a": false, "b": true, "c": true} {
		if got := s.has(k); got != want {
			t.Errorf("has(%q) = %v, want %v", k, got, want)
		}
	}
}
