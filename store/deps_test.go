package store_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDeps: the store treats scenes and memory as bytes, so it imports no other package of the
// project (the bot and web import it, never the other way round). storetest, the suite every store
// passes, may use the project's test helper for waiting.
func TestDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "./...").Output()
	if err != nil {
		t.Skipf("go list: %v", err) // no go tool in this environment
	}
	const mod = "github.com/excalibot/excalibot/"
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, mod) && !strings.HasPrefix(p, mod+"store") && p != mod+"internal/waitfor" {
			t.Errorf("store depends on %s", p)
		}
	}
}
