package render

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

func TestBrowserEnv(t *testing.T) {
	for _, tc := range []struct {
		name    string
		environ []string
		want    []string
	}{
		{"what Chromium needs passes",
			[]string{"HOME=/home/bot", "PATH=/usr/bin:/bin", "LANG=de_DE.UTF-8", "TZ=Europe/Berlin", "TMPDIR=/var/tmp"},
			[]string{"HOME=/home/bot", "PATH=/usr/bin:/bin", "LANG=de_DE.UTF-8", "TZ=Europe/Berlin", "TMPDIR=/var/tmp"}},
		{"locale categories pass",
			[]string{"LC_ALL=C.UTF-8", "LC_TIME=en_GB.UTF-8", "LCX=1"},
			[]string{"LC_ALL=C.UTF-8", "LC_TIME=en_GB.UTF-8"}},
		{"fontconfig and XDG pass",
			[]string{"FONTCONFIG_FILE=/etc/fonts/local.conf", "FONTCONFIG_PATH=/etc/fonts", "XDG_CACHE_HOME=/cache", "XDG_DATA_DIRS=/usr/share"},
			[]string{"FONTCONFIG_FILE=/etc/fonts/local.conf", "FONTCONFIG_PATH=/etc/fonts", "XDG_CACHE_HOME=/cache", "XDG_DATA_DIRS=/usr/share"}},
		{"secrets stay behind",
			[]string{"EXCALIBOT_SLACK_BOT_TOKEN=xoxb-1", "EXCALIBOT_TELEGRAM_TOKEN=123:AA", "EXCALIBOT_DATABASE_URL=postgres://u:pw@db/x",
				"PGPASSWORD=pw", "OLLAMA_HOST=http://gpu:11434", "HOME=/home/bot", "AWS_SECRET_ACCESS_KEY=k", "EXCALIBOT_CHAT_SECRET=s"},
			[]string{"HOME=/home/bot"}},
		{"names match whole", []string{"HOMEDIR=/x", "MYPATH=/y", "PATH_EXTRA=/z"}, nil},
		{"malformed entries dropped", []string{"HOME", "=PATH", "PATH=/bin"}, []string{"PATH=/bin"}},
		{"empty", nil, nil},
	} {
		if got := browserEnv(tc.environ); !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

// descendants lists pid and every process below it, from the parent pids in /proc/*/stat.
func descendants(t *testing.T, pid int) []int {
	t.Helper()
	children := map[int][]int{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // ended meanwhile
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses, so read after the last ")".
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 {
			continue
		}
		self, _ := strconv.Atoi(strings.Fields(s)[0])
		parent, _ := strconv.Atoi(f[1])
		children[parent] = append(children[parent], self)
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}

// TestChromiumEnvironment starts the real browser with secrets in this process's environment and
// looks for them in every Chromium process: in /proc/<pid>/environ, and in the process's writable
// memory, since Chromium's children write their titles over the environment's place and keep the
// variables on the heap, where /proc/<pid>/environ no longer shows them (a variable that is
// passed, LC_TIME, must be found there). Pictures still come out: text in Excalidraw's fonts, and
// system fonts found through fontconfig.
func TestChromiumEnvironment(t *testing.T) {
	needChrome(t)
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skipf("skipping: needs /proc: %v", err)
	}
	const secret = "xoxb-42-not-for-the-browser"
	t.Setenv("EXCALIBOT_SLACK_BOT_TOKEN", secret)
	t.Setenv("EXCALIBOT_DATABASE_URL", "postgres://excalibot:"+secret+"@db/excalibot")
	t.Setenv("LC_TIME", "C.UTF-8")
	if os.Getenv("HOME") == "" {
		t.Setenv("HOME", t.TempDir())
	}

	r := own(t, Config{Tabs: 1})
	ctx := testCtx(t)
	pic, err := r.PNG(ctx, textScene("Hello, fonts"), Options{})
	if err != nil {
		t.Fatalf("render with the clean environment: %v", err)
	}
	if n := ink(decodePNG(t, pic)); n < 200 {
		t.Errorf("the text picture has %d dark pixels, want its letters", n)
	}
	// fontconfig resolves the generic families to different installed fonts; without it they
	// would all fall back to one face, or to none.
	tb, err := r.borrow(ctx)
	if err != nil {
		t.Fatal(err)
	}
	widths, err := chromedp.Run(tb.ctx, chromedp.Evaluate[[]float64](`(() => {
		const c = document.createElement("canvas").getContext("2d");
		return ["serif", "monospace"].map(f => { c.font = "40px " + f; return c.measureText("iiiiiiiiiiWWWWW").width; });
	})()`))
	r.put(tb)
	if err != nil {
		t.Fatalf("measure system fonts: %v", err)
	}
	if len(widths) != 2 || widths[0] <= 0 || widths[0] == widths[1] {
		t.Errorf("serif and monospace text measure %v: want two different widths (system fonts found)", widths)
	}

	browser := chromePID(t, r)
	pids := descendants(t, browser)
	if len(pids) < 3 {
		t.Fatalf("found %d Chromium processes %v, want the browser and its children", len(pids), pids)
	}
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil {
			if _, gone := os.Stat(fmt.Sprintf("/proc/%d", pid)); gone != nil {
				continue // a helper that ended meanwhile
			}
			t.Fatalf("read the environment of %d: %v", pid, err)
		}
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("process %d (%s) has the secret in /proc/%d/environ", pid, comm(pid), pid)
		}
		if pid == browser { // its children write their titles over this place
			env := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
			for _, want := range []string{"HOME=" + os.Getenv("HOME"), "LC_TIME=C.UTF-8"} {
				if !slices.Contains(env, want) {
					t.Errorf("the browser (%d) lacks %s; it has %q", pid, want, env)
				}
			}
		}
		// LC_TIME is in the environment it was given: finding it shows the search reaches the
		// place where this process keeps its variables.
		found, n, err := memSearch(pid, []byte(secret), []byte("LC_TIME=C.UTF-8"))
		switch {
		case err != nil && os.IsNotExist(err):
			continue // ended meanwhile
		case err != nil:
			t.Fatalf("search the memory of %d (%s): %v", pid, comm(pid), err)
		case found[0]:
			t.Errorf("process %d (%s) holds the secret in its memory", pid, comm(pid))
		case !found[1]:
			t.Errorf("process %d (%s): LC_TIME, which it was given, is not in the %d MB searched", pid, comm(pid), n>>20)
		}
	}
}

func comm(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return strings.TrimSpace(string(b))
}

// memSearch reports which needles the writable private memory of pid (heap, stack, anonymous
// mappings) holds, and how many bytes it read.
func memSearch(pid int, needles ...[]byte) ([]bool, int64, error) {
	found := make([]bool, len(needles))
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return found, 0, err
	}
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		return found, 0, err
	}
	defer mem.Close()
	var read int64
	const chunk, overlap = 1 << 20, 256 // needles are shorter than the overlap
	buf := make([]byte, chunk)
	for _, line := range strings.Split(string(maps), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 || !strings.HasPrefix(f[1], "rw") || (len(f) >= 6 && !strings.HasPrefix(f[5], "[")) {
			continue // not writable, or a mapped file
		}
		lo, hi, _ := strings.Cut(f[0], "-")
		start, _ := strconv.ParseUint(lo, 16, 64)
		end, _ := strconv.ParseUint(hi, 16, 64)
		for off := start; off < end; off += chunk - overlap {
			k, err := mem.ReadAt(buf[:min(chunk, end-off)], int64(off))
			read += int64(k)
			for i, n := range needles {
				found[i] = found[i] || bytes.Contains(buf[:k], n)
			}
			if err != nil {
				break // a guard page, or a mapping gone meanwhile
			}
		}
	}
	return found, read, nil
}
