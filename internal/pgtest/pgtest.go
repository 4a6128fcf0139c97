// Package pgtest runs a throwaway PostgreSQL server for tests: initdb on a temporary directory, a
// server listening only on a Unix socket in it, and removal of everything on Stop. initdb and postgres
// refuse to run as root, so under root (as in CI) they run as the "postgres" system user that
// Debian's package creates.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrNoServer means the PostgreSQL server binaries are not installed.
var ErrNoServer = errors.New("PostgreSQL server binaries not found in /usr/lib/postgresql/*/bin or $PGBIN " +
	"(Debian: apt-get install postgresql; .ci/run installs them)")

// Server is one running throwaway cluster.
type Server struct {
	bin  string // directory with initdb and postgres
	dir  string // root of everything: data/, sock/, log
	cred *syscall.Credential
	cmd  *exec.Cmd
	done chan error
	n    atomic.Int64 // databases created
}

// FindBin returns the directory holding initdb and postgres, newest version first.
func FindBin() (string, error) {
	if d := os.Getenv("PGBIN"); d != "" {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", ErrNoServer
}

// baseDir is where the cluster's directory goes: $TMPDIR, unless the socket path would be too long
// for a Unix socket (about 107 bytes) or, under root, the postgres user could not reach it.
func baseDir() string {
	dir := os.TempDir()
	if len(dir) > 60 || (os.Geteuid() == 0 && !traversable(dir)) {
		return "/tmp"
	}
	return dir
}

// traversable reports whether every directory from / down to dir lets others through.
func traversable(dir string) bool {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil || fi.Mode().Perm()&0o001 == 0 {
			return false
		}
		if d == "/" {
			return true
		}
	}
}

func version(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

// Start creates a cluster in a new temporary directory and starts a server on it.
func Start(ctx context.Context) (*Server, error) {
	bin, err := FindBin()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(baseDir(), "excalibot-pg-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: temp dir: %w", err)
	}
	s := &Server{bin: bin, dir: dir}
	if err := s.setup(ctx); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := s.start(ctx); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

func (s *Server) setup(ctx context.Context) error {
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return fmt.Errorf("pgtest: running as root, and initdb refuses root, but there is no postgres user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(s.dir, uid, gid); err != nil {
			return fmt.Errorf("pgtest: chown temp dir: %w", err)
		}
	}
	for _, sub := range []string{"sock"} {
		if err := os.Mkdir(filepath.Join(s.dir, sub), 0o700); err != nil {
			return fmt.Errorf("pgtest: %w", err)
		}
		if s.cred != nil {
			if err := os.Chown(filepath.Join(s.dir, sub), int(s.cred.Uid), int(s.cred.Gid)); err != nil {
				return fmt.Errorf("pgtest: chown: %w", err)
			}
		}
	}
	cmd := s.command(ctx, "initdb", "-D", filepath.Join(s.dir, "data"), "-U", "postgres", "--auth=trust",
		"--no-locale", "-E", "UTF8", "--no-instructions")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}
	return nil
}

func (s *Server) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(s.bin, name), args...)
	cmd.Dir = s.dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C", "TZ=UTC"}
	// The server dies with the test binary even if the binary is killed before Stop.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Pdeathsig: syscall.SIGKILL, Setpgid: true}
	return cmd
}

func (s *Server) start(ctx context.Context) error {
	logf, err := os.OpenFile(filepath.Join(s.dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("pgtest: log file: %w", err)
	}
	defer logf.Close()
	// Not CommandContext's ctx: the server must outlive the start-up context.
	cmd := s.command(context.Background(), "postgres", "-D", filepath.Join(s.dir, "data"),
		"-k", filepath.Join(s.dir, "sock"), "-c", "listen_addresses=", "-c", "max_connections=100")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pgtest: start postgres: %w", err)
	}
	s.cmd, s.done = cmd, make(chan error, 1)
	go func() { s.done <- cmd.Wait() }()        // owned by Stop/Kill, which wait on s.done
	deadline := time.Now().Add(3 * time.Minute) // crash recovery on a loaded CI machine is slow
	for {
		c, err := pgx.Connect(ctx, s.DSN("postgres"))
		if err == nil {
			c.Close(ctx)
			return nil
		}
		select {
		case werr := <-s.done:
			s.done <- werr
			return fmt.Errorf("pgtest: postgres exited at start-up (%v):\n%s", werr, s.LogTail())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			s.Kill()
			return fmt.Errorf("pgtest: postgres did not accept connections: %v\n%s", err, s.LogTail())
		}
	}
}

// DSN is the connection string of database db on this server.
func (s *Server) DSN(db string) string {
	return fmt.Sprintf("host=%s user=postgres dbname=%s sslmode=disable", filepath.Join(s.dir, "sock"), db)
}

// CreateDB creates a new empty database and returns its DSN.
func (s *Server) CreateDB(ctx context.Context) (string, error) {
	name := fmt.Sprintf("t%d", s.n.Add(1))
	c, err := pgx.Connect(ctx, s.DSN("postgres"))
	if err != nil {
		return "", fmt.Errorf("pgtest: connect: %w", err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", fmt.Errorf("pgtest: create database %s: %w", name, err)
	}
	return s.DSN(name), nil
}

// Kill stops the server with SIGKILL, as a crash would, and waits for it. The data stay.
func (s *Server) Kill() error {
	if s.cmd == nil {
		return nil
	}
	// Every backend makes itself a session leader (PostgreSQL's InitPostmasterChild calls setsid), so
	// a signal to the postmaster's process group misses them: they are found by their parent and
	// killed one by one, or a restart finds their shared memory still attached ("pre-existing shared
	// memory block is still in use").
	pid := s.cmd.Process.Pid
	kids := childrenOf(pid)
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	for _, k := range kids {
		_ = syscall.Kill(k, syscall.SIGKILL)
	}
	<-s.done
	s.cmd = nil
	// The backends are not our children, so nothing here waits for them: poll until each is gone
	// (or a zombie, which holds no shared memory).
	for deadline := time.Now().Add(30 * time.Second); ; {
		alive := syscall.Kill(-pid, 0) == nil
		for _, k := range kids {
			alive = alive || running(k)
		}
		if !alive {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("pgtest: postgres backends still alive 30 s after SIGKILL")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// childrenOf lists the processes whose parent is pid, from /proc.
func childrenOf(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		k, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, _, ok := procStat(k); ok && ppid == pid {
			out = append(out, k)
		}
	}
	return out
}

// running reports whether pid exists and is not a zombie.
func running(pid int) bool {
	_, state, ok := procStat(pid)
	return ok && state != 'Z' && state != 'X'
}

// procStat reads a process's parent and state from /proc/PID/stat ("pid (comm) S ppid …"; comm
// may hold spaces and parentheses, so the fields are counted after its last ')').
func procStat(pid int) (ppid int, state byte, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, false
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0, 0, false
	}
	ppid, err = strconv.Atoi(f[1])
	return ppid, f[0][0], err == nil
}

// Restart starts the server again on the same data directory (after Kill: crash recovery).
func (s *Server) Restart(ctx context.Context) error {
	if s.cmd != nil {
		return errors.New("pgtest: restart: server still running")
	}
	return s.start(ctx)
}

// Stop shuts the server down (fast shutdown) and removes the temporary directory.
func (s *Server) Stop() error {
	var err error
	if s.cmd != nil {
		_ = s.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-s.done:
		case <-time.After(30 * time.Second):
			err = errors.New("pgtest: postgres did not stop within 30 s; killed")
			_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
			<-s.done
		}
		s.cmd = nil
	}
	if rerr := os.RemoveAll(s.dir); rerr != nil && err == nil {
		err = fmt.Errorf("pgtest: remove %s: %w", s.dir, rerr)
	}
	return err
}

// LogTail returns the end of the server log, for failure messages.
func (s *Server) LogTail() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return strings.TrimSpace(string(b))
}
