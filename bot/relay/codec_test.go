package relay

import (
	"bytes"
	"os"
	"testing"
)

// TestSignsEncoding pins what the outbox keeps of a run's working signs: rows written by an
// earlier program must read back.
func TestSignsEncoding(t *testing.T) {
	got := encodeSigns("4217")
	want, err := os.ReadFile("testdata/signs.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, bytes.TrimSpace(want)) {
		t.Errorf("signs encoded as %s, want %s", got, want)
	}
	if sign, err := decodeSigns(want); err != nil || sign != "4217" {
		t.Errorf("read back %q, %v; want 4217", sign, err)
	}
	if _, err := decodeSigns([]byte(`{"sign":"4217"}`)); err == nil {
		t.Error("a row without a version was read")
	}
}
