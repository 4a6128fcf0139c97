package corpus

import "testing"
import "context"

// writeSheets is filled in below.
func writeSheets(ctx context.Context, t *testing.T, dir string, runs []sideBySide) {}
