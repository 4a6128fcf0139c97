package picture

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// BenchmarkPrepare times Prepare on a 12-megapixel phone photo (4032 × 3024 JPEG with grain, EXIF-turned)
// and a phone screenshot (1080 × 2400 PNG), each against the bare decode of the same file in the
// same run: what checking, scaling, turning and encoding add to reading the picture at all.
// prepare-alloc-MB is what one Prepare allocates with the collector off (a bound of its peak
// heap); out-KB is the picture the run then holds.
//
//	go test ./picture -run '^$' -bench Prepare -benchtime 10x
func BenchmarkPrepare(b *testing.B) {
	board := image.NewRGBA(image.Rect(0, 0, 4032, 3024)) // a whiteboard with a photo's grain
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < len(board.Pix); i += 4 {
		v := uint8(225 + rng.IntN(20))
		board.Pix[i], board.Pix[i+1], board.Pix[i+2], board.Pix[i+3] = v, v, v-6, 255
	}
	draw.Draw(board, image.Rect(800, 900, 1800, 1500), image.NewUniform(color.RGBA{30, 30, 40, 255}), image.Point{}, draw.Src)
	shot := image.NewNRGBA(image.Rect(0, 0, 1080, 2400))
	draw.Draw(shot, shot.Bounds(), image.White, image.Point{}, draw.Src)
	draw.Draw(shot, image.Rect(100, 300, 980, 500), image.NewUniform(color.NRGBA{20, 90, 200, 255}), image.Point{}, draw.Src)
	for _, tc := range []struct {
		name   string
		data   []byte
		decode func([]byte) error
	}{
		{"photo-12MP-jpeg", withExif(jpegOf(b, board), 6, binary.BigEndian), func(d []byte) error {
			_, err := jpeg.Decode(bytes.NewReader(d))
			return err
		}},
		{"screenshot-png", pngOf(b, shot), func(d []byte) error {
			_, err := png.Decode(bytes.NewReader(d))
			return err
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var prep, dec time.Duration
			var out int
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				p, err := Prepare(tc.data, Limits{})
				if err != nil {
					b.Fatal(err)
				}
				prep += time.Since(t0)
				out = len(p.Data)
				t1 := time.Now()
				if err := tc.decode(tc.data); err != nil {
					b.Fatal(err)
				}
				dec += time.Since(t1)
			}
			b.ReportMetric(float64(prep.Microseconds())/1000/float64(b.N), "prepare-ms")
			b.ReportMetric(float64(dec.Microseconds())/1000/float64(b.N), "decode-ms")
			b.ReportMetric(float64(prep)/float64(dec), "prepare/decode")
			b.ReportMetric(float64(out)/1024, "out-KB")
			b.ReportMetric(float64(allocOf(func() { _, _ = Prepare(tc.data, Limits{}) }))/(1<<20), "prepare-alloc-MB")
			b.ReportMetric(float64(allocOf(func() { _ = tc.decode(tc.data) }))/(1<<20), "decode-alloc-MB")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// allocOf is what fn allocates with the collector off: nothing is freed, so it bounds its peak.
func allocOf(fn func()) uint64 {
	runtime.GC()
	old := debug.SetGCPercent(-1)
	defer debug.SetGCPercent(old)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
