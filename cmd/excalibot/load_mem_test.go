package main

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// vmHWM is the peak resident set size of this process, from /proc (Linux); 0 elsewhere.
func vmHWM() uint64 { return statusKB("/proc/self/status", "VmHWM:") }

// statusKB reads a "Name:  123 kB" line of a /proc status file, in bytes.
func statusKB(path, field string) uint64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// descendantsRSS sums the proportional resident memory (PSS: shared pages split among the
// processes sharing them, so Chromium's shared libraries count once) of every process descended
// from pid — Chromium and its renderers under the test process — from /proc (Linux); 0 elsewhere.
func descendantsRSS(pid int) uint64 {
	parent := processParents()
	var sum uint64
	for id := range parent {
		for p := parent[id]; p > 1; p = parent[p] {
			if p == pid {
				sum += statusKB("/proc/"+strconv.Itoa(id)+"/smaps_rollup", "Pss:")
				break
			}
		}
	}
	return sum
}

// processParents maps every process id to its parent's, from /proc (Linux); empty elsewhere.
func processParents() map[int]int {
	parent := map[int]int{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// The command name in parentheses may hold spaces: fields start after its ')'.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 2 {
			continue
		}
		id, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		pp, _ := strconv.Atoi(f[1])
		parent[id] = pp
	}
	return parent
}
