package main

// The replica harness: several `excalibot serve` processes (the binary built from this tree) on
// one PostgreSQL, each with a fake model of its own (so the test knows which replica draws what),
// sharing one fake Slack in Socket Mode (Slack spreads an app's events over all its connections)
// and one fake Telegram in webhook mode behind a load balancer that spreads the updates over the
// replicas, as a deployment with one public URL does.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/ollama/ollama/api"

	"github.com/excalibot/excalibot/agent/ollamafake"
	"github.com/excalibot/excalibot/internal/pgtest"
	"github.com/excalibot/excalibot/store/postgres"
)

// replicaTuning is the environment every replica gets beyond the harness's own settings, and how
// long a live replica may take to pick up the work of a killed one before a test gives up.
//
// By default the replicas run with serve's defaults, under which takeover must stay under a
// minute; the wait allows twice that, for a loaded machine. EXCALIBOT_TEST_REPLICA_ENV adds
// settings to every replica (space-separated KEY=VALUE, e.g. a shorter lease for a quicker run)
// and EXCALIBOT_TEST_TAKEOVER (a duration) then sets the wait to match.
func replicaTuning(t *testing.T) (env []string, takeover time.Duration) {
	t.Helper()
	env = strings.Fields(os.Getenv("EXCALIBOT_TEST_REPLICA_ENV"))
	for _, kv := range env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			t.Fatalf("EXCALIBOT_TEST_REPLICA_ENV: %q is not KEY=VALUE", kv)
		}
	}
	takeover = 2 * time.Minute
	if s := os.Getenv("EXCALIBOT_TEST_TAKEOVER"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			t.Fatalf("EXCALIBOT_TEST_TAKEOVER=%q: want a positive duration such as 30s", s)
		}
		takeover = d
	}
	return env, takeover
}

// replicaShared is what the replica tests share: the binary, one PostgreSQL server (a database
// per test) and Chromium.
type replicaShared struct {
	bin, chrome string
	pg          *pgtest.Server
}

func newReplicaShared(t *testing.T) *replicaShared {
	t.Helper()
	chrome := chromium(t)
	pg, err := pgtest.Start(t.Context())
	if errors.Is(err, pgtest.ErrNoServer) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pg.Stop() })
	return &replicaShared{bin: buildExcalibot(t), chrome: chrome, pg: pg}
}

// replica is one serve process of a cluster.
type replica struct {
	name   string // "A", "B" …, in the test's messages
	host   string // its host name; "" for the machine's own
	addr   string // its HTTP listener
	model  *ollamafake.Server
	proc   *botProcess
	exited chan struct{} // closed when the process has ended
	socket int           // its Socket Mode connection (slackfake.Sockets), 0 when not known
}

func (r *replica) String() string {
	if r.host == "" {
		return "replica " + r.name
	}
	return fmt.Sprintf("replica %s (host %s)", r.name, r.host)
}

func (r *replica) alive() bool {
	select {
	case <-r.exited:
		return false
	default:
		return true
	}
}

// cluster is the replicas of one test with their fakes and database.
type cluster struct {
	t     *testing.T
	sh    *replicaShared
	dbURL string
	st    *postgres.Store // the test's own connection, to read what the replicas stored
	sl    *slackDriver
	tg    *tgDriver
	lb    *balancer
	turn  time.Duration // the models' time per turn
	extra []string      // replicaTuning's settings
	// settings are a test's own settings for its replicas (serve's existing ones only).
	settings []string
	waitTO   time.Duration // replicaTuning's takeover wait

	mu   sync.Mutex
	reps []*replica
	// hook, when set, answers a model request of a replica before the tagged model does; ok
	// false leaves it to the tagged model.
	hook func(r *replica, req api.ChatRequest) (ollamafake.Turn, bool)
}

func newCluster(t *testing.T, sh *replicaShared, turn time.Duration) *cluster {
	t.Helper()
	dsn, err := sh.pg.CreateDB(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{t: t, sh: sh, dbURL: pgURL(t, dsn), sl: newSlack(t), tg: newTelegram(t), turn: turn}
	c.extra, c.waitTO = replicaTuning(t)
	c.lb = startBalancer(t, c)
	st, err := postgres.Open(t.Context(), c.dbURL, storeOptions(), quietLog())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	c.st = st
	return c
}

// setHook sets (or, with nil, clears) the model hook.
func (c *cluster) setHook(h func(r *replica, req api.ChatRequest) (ollamafake.Turn, bool)) {
	c.mu.Lock()
	c.hook = h
	c.mu.Unlock()
}

// live returns the replicas whose process runs, in the order they started.
func (c *cluster) live() []*replica {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*replica
	for _, r := range c.reps {
		if r.alive() {
			out = append(out, r)
		}
	}
	return out
}

// env is the environment of a replica: the fakes, the shared database, the balancer's URL for
// Telegram's webhook, no rate limits (the tests measure the bot, not its limits).
func (c *cluster) env(r *replica) []string {
	fc := c.sl.fake.Config()
	env := []string{
		"OLLAMA_HOST=" + r.model.URL(), "EXCALIBOT_MODEL=" + ollamafake.DefaultModel,
		"EXCALIBOT_DATABASE=" + c.dbURL, "EXCALIBOT_CHROME=" + c.sh.chrome, "EXCALIBOT_RENDER_TABS=1",
		"EXCALIBOT_LISTEN=" + r.addr, "EXCALIBOT_PUBLIC_URL=http://" + c.lb.addr, "EXCALIBOT_LOG_LEVEL=debug",
		"SLACK_BOT_TOKEN=" + fc.BotToken, "SLACK_APP_TOKEN=" + fc.AppToken,
		"EXCALIBOT_SLACK_API_URL=" + c.sl.fake.APIURL(), "EXCALIBOT_SLACK_MODE=socket",
		"TELEGRAM_BOT_TOKEN=" + tgToken, "EXCALIBOT_TELEGRAM_API_URL=" + c.tg.fake.URL,
		"EXCALIBOT_TELEGRAM_MODE=webhook", "EXCALIBOT_TELEGRAM_WEBHOOK_SECRET=" + tgSecret,
		"EXCALIBOT_USER_RATE=100000", "EXCALIBOT_CHAT_RATE=100000",
	}
	env = append(env, c.settings...)
	return append(env, c.extra...)
}

// newReplica makes replica name with its model; start runs it.
func (c *cluster) newReplica(name, host string) *replica {
	r := &replica{name: name, host: host, addr: freeAddr(c.t)}
	r.model = ollamafake.New(c.t, ollamafake.Config{Delay: c.turn, Responder: func(req api.ChatRequest) ollamafake.Turn {
		c.mu.Lock()
		h := c.hook
		c.mu.Unlock()
		if h != nil {
			if turn, ok := h(r, req); ok {
				return turn
			}
		}
		return taggedBoxes(req)
	}})
	return r
}

// start runs a replica and waits until it serves: /healthz and /readyz, its Socket Mode
// connection (noted as the replica's), and its webhook registration.
func (c *cluster) start(name, host string) *replica {
	c.t.Helper()
	r := c.newReplica(name, host)
	before := c.sl.fake.Sockets()
	hooks := len(c.tg.fake.Calls("setWebhook"))
	c.launch(r)
	c.waitServing(r, hooks)
	waitLong(c.t, r.String()+"'s Socket Mode connection", func() bool {
		for _, id := range c.sl.fake.Sockets() {
			if !slices.Contains(before, id) && !c.socketTaken(id) {
				c.mu.Lock() // traffic already running reads the replicas' connections (onSocket)
				r.socket = id
				c.mu.Unlock()
				return true
			}
		}
		return false
	}, func() string { return fmt.Sprintf("connections %v, before %v", c.sl.fake.Sockets(), before) })
	return r
}

// startAll runs several replicas at once (their Socket Mode connections are not told apart).
func (c *cluster) startAll(names, hosts []string) []*replica {
	c.t.Helper()
	hooks := len(c.tg.fake.Calls("setWebhook"))
	var reps []*replica
	for i, name := range names {
		r := c.newReplica(name, hosts[i])
		c.launch(r)
		reps = append(reps, r)
	}
	for _, r := range reps {
		c.waitServing(r, hooks)
	}
	want := len(c.live())
	waitLong(c.t, fmt.Sprintf("%d Socket Mode connections", want), func() bool { return len(c.sl.fake.Sockets()) >= want },
		func() string { return fmt.Sprint(c.sl.fake.Sockets()) })
	waitLong(c.t, "every replica to register the webhook", func() bool { return len(c.tg.fake.Calls("setWebhook")) >= hooks+len(reps) },
		func() string { return fmt.Sprint(len(c.tg.fake.Calls("setWebhook"))) })
	return reps
}

func (c *cluster) socketTaken(id int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range c.reps {
		if r.socket == id {
			return true
		}
	}
	return false
}

// launch starts the process: under its own host name (a UTS namespace of its own) when r.host is
// set, as on another machine.
func (c *cluster) launch(r *replica) {
	c.t.Helper()
	p := &botProcess{addr: r.addr, logs: &tailBuffer{max: 256 << 10}, done: make(chan error, 1)}
	if r.host == "" {
		p.cmd = exec.Command(c.sh.bin, "serve")
	} else {
		p.cmd = exec.Command("unshare", "--uts", "--", "sh", "-c", `hostname "$0" && exec "$@"`, r.host, c.sh.bin, "serve")
	}
	p.cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + c.t.TempDir()}, c.env(r)...)
	p.cmd.Stdout, p.cmd.Stderr = p.logs, p.logs
	if err := p.cmd.Start(); err != nil {
		c.t.Fatalf("start %s: %v", r, err)
	}
	r.proc, r.exited = p, make(chan struct{})
	go func() {
		err := p.cmd.Wait()
		close(r.exited)
		p.done <- err // for botProcess.kill and stop
	}()
	c.mu.Lock()
	c.reps = append(c.reps, r)
	c.mu.Unlock()
	t := c.t
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("the end of the log of %s (pid %d):\n%s", r, p.cmd.Process.Pid, p.logs.String())
		}
	})
}

// waitServing waits for a launched replica's /healthz, /readyz and webhook registration (the
// setWebhook calls beyond hooks).
func (c *cluster) waitServing(r *replica, hooks int) {
	c.t.Helper()
	for _, path := range []string{"/healthz", "/readyz"} {
		var code int
		var body string
		waitLong(c.t, r.String()+" to answer "+path, func() bool {
			if !r.alive() {
				c.t.Fatalf("%s exited while starting:\n%s", r, r.proc.logs.String())
			}
			code, body = httpGet("http://" + r.addr + path)
			return code == http.StatusOK
		}, func() string { return fmt.Sprintf("%d %s", code, body) })
	}
	waitLong(c.t, r.String()+" to register Telegram's webhook", func() bool { return len(c.tg.fake.Calls("setWebhook")) > hooks },
		func() string { return r.proc.logs.String() })
}

// requireUnshare skips when replicas cannot get host names of their own.
func requireUnshare(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("distinct host names need a UTS namespace per replica: run as root (unshare --uts)")
	}
	if out, err := exec.Command("unshare", "--uts", "--", "sh", "-c", "hostname replica-probe && hostname").CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "replica-probe" {
		t.Skipf("unshare --uts does not work here: %v %s", err, out)
	}
}

// kill SIGKILLs a replica and waits until it is gone.
func (r *replica) kill() { r.proc.kill() }

// pid is the replica's serve process (unshare and sh exec into it).
func (r *replica) pid() int { return r.proc.cmd.Process.Pid }

// peakRSS is the replica's peak resident memory (VmHWM) so far.
func (r *replica) peakRSS() uint64 {
	return statusKB("/proc/"+strconv.Itoa(r.pid())+"/status", "VmHWM:")
}

// signal sends sig to the replica's process.
func (r *replica) signal(sig syscall.Signal) { _ = r.proc.cmd.Process.Signal(sig) }

// balancer is the public URL in front of the replicas: every request (Telegram's webhook, editor
// links) goes to one live replica, the next one when that one does not answer. Updates of a chat
// go to the replicas in turn, so consecutive messages of a thread reach different replicas; pin
// sends a chat to one replica.
type balancer struct {
	c    *cluster
	addr string

	mu     sync.Mutex
	byChat map[int64]int      // deliveries per chat so far
	pinned map[int64]*replica // chat → the replica its updates go to
	served map[int64][]string // chat → the replicas that answered each delivery, for messages
}

func startBalancer(t *testing.T, c *cluster) *balancer {
	t.Helper()
	b := &balancer{c: c, byChat: map[int64]int{}, pinned: map[int64]*replica{}, served: map[int64][]string{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b.addr = ln.Addr().String()
	srv := &http.Server{Handler: b, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return b
}

// pin sends chat's updates to r (nil: in turn again).
func (b *balancer) pin(chat int64, r *replica) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if r == nil {
		delete(b.pinned, chat)
		return
	}
	b.pinned[chat] = r
}

var forwardClient = &http.Client{Timeout: time.Minute}

func (b *balancer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		http.Error(w, "read body: "+err.Error(), http.StatusBadRequest)
		return
	}
	var chat int64
	if strings.HasSuffix(r.URL.Path, "/telegram/webhook") {
		var u models.Update
		if jsonErr := json.Unmarshal(body, &u); jsonErr == nil && u.Message != nil {
			chat = u.Message.Chat.ID
		}
	}
	live := b.c.live()
	if len(live) == 0 {
		http.Error(w, "no replica is up", http.StatusBadGateway)
		return
	}
	b.mu.Lock()
	// Chats start on different replicas: ids of private chats (the tests' threads) go up by two.
	first := (b.byChat[chat] + int(absInt(chat)/2%int64(len(live)))) % len(live)
	b.byChat[chat]++
	if p := b.pinned[chat]; p != nil {
		if i := slices.Index(live, p); i >= 0 {
			first = i
		}
	}
	b.mu.Unlock()
	for k := range live {
		rep := live[(first+k)%len(live)]
		req, err := http.NewRequestWithContext(r.Context(), r.Method, "http://"+rep.addr+r.URL.RequestURI(), bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		req.Header = r.Header.Clone()
		resp, err := forwardClient.Do(req)
		if err != nil {
			continue // that replica is gone: the next one
		}
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
		resp.Body.Close()
		if chat != 0 && resp.StatusCode == http.StatusOK {
			b.mu.Lock()
			b.served[chat] = append(b.served[chat], rep.name)
			b.mu.Unlock()
		}
		return
	}
	http.Error(w, "no replica answered", http.StatusBadGateway)
}

func absInt(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// waitCtx is a context for one delivery or wait of the harness.
func waitCtx(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}
