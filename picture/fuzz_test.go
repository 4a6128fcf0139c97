package picture

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/excalibot/excalibot/internal/fuzzbound"
)

// fuzzBudget bounds one fuzz input: under fuzzLimits a picture decodes in well under a second,
// so anything near this is a hang, reported as a crasher instead of a stuck worker.
const fuzzBudget = 10 * time.Second

// fuzzLimits keep each input small enough for many executions a second, with the same checks.
var fuzzLimits = Limits{MaxBytes: 1 << 20, MaxPixels: 4_000_000, MaxDecoded: 16 << 20, LongSide: 256}

// FuzzPrepare feeds arbitrary bytes to Prepare, as the bot does with an uploaded picture.
// Nothing may panic or hang; a refusal is a *picture.Error of a known kind; what is accepted
// decodes as its MIME type says, at the size it says, within the longest side.
func FuzzPrepare(f *testing.F) {
	jpg := jpegOf(f, quadrants(64, 48))
	f.Add(pngOf(f, quadrants(64, 48)))
	f.Add(jpg)
	f.Add(withExif(jpg, 6, binary.BigEndian))
	f.Add(withExif(jpg, 8, binary.LittleEndian))
	f.Add(jpg[:len(jpg)/2])
	f.Add(readTestdata(f, "blue-purple-pink.lossy.webp"))
	f.Add(webpWithExif(readTestdata(f, "gopher-doc.with-alpha.lossless.webp"), 5))
	f.Add(pngHeader(50000, 50000, 8, 6))
	f.Add(pngHeader(2000, 2000, 16, 6))
	f.Add(zipBomb(f, 1<<20))
	kinds := []error{ErrTooLarge, ErrTooSmall, ErrFormat, ErrUnreadable, ErrScene}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := fuzzbound.Within(fuzzBudget, "prepare picture", func() error {
			p, err := Prepare(data, fuzzLimits)
			if err != nil {
				var pe *Error
				if !errors.As(err, &pe) || !slices.Contains(kinds, pe.Kind) {
					return fmt.Errorf("refusal %q (%T) is not a *picture.Error of a known kind", err, err)
				}
				return nil
			}
			if max(p.Width, p.Height) > fuzzLimits.LongSide {
				return fmt.Errorf("accepted at %d×%d, over the longest side %d", p.Width, p.Height, fuzzLimits.LongSide)
			}
			decodeOut(t, p)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}
