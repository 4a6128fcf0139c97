package picture

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"image/png"
	"os"
	"testing"
)

var (
	red    = color.RGBA{220, 30, 30, 255}
	blue   = color.RGBA{30, 30, 220, 255}
	green  = color.RGBA{30, 200, 30, 255}
	yellow = color.RGBA{240, 220, 20, 255}
)

// quadrants is a w×h picture whose corners can be told apart after any turn: red top left, blue
// top right, green bottom left, yellow bottom right.
func quadrants(w, h int) *image.RGBA {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	fill := func(r image.Rectangle, c color.Color) { draw.Draw(m, r, image.NewUniform(c), image.Point{}, draw.Src) }
	fill(image.Rect(0, 0, w/2, h/2), red)
	fill(image.Rect(w/2, 0, w, h/2), blue)
	fill(image.Rect(0, h/2, w/2, h), green)
	fill(image.Rect(w/2, h/2, w, h), yellow)
	return m
}

func pngOf(tb testing.TB, m image.Image) []byte {
	tb.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, m); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

func jpegOf(tb testing.TB, m image.Image) []byte {
	tb.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, m, &jpeg.Options{Quality: 90}); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

// tiff is EXIF's TIFF structure holding one IFD with the orientation tag.
func tiff(bo binary.ByteOrder, orientation uint16) []byte {
	var t bytes.Buffer
	if bo == binary.LittleEndian {
		t.WriteString("II")
	} else {
		t.WriteString("MM")
	}
	w := func(v any) { _ = binary.Write(&t, bo, v) }
	w(uint16(42))
	w(uint32(8))      // IFD0 right after the header
	w(uint16(2))      // two entries: another tag first, so the reader has to walk
	w(uint16(0x010F)) // Make, ASCII, 4 bytes inline
	w(uint16(2))
	w(uint32(4))
	t.WriteString("Cam\x00")
	w(uint16(0x0112)) // Orientation, SHORT, 1
	w(uint16(3))
	w(uint32(1))
	w(orientation)
	w(uint16(0))
	w(uint32(0)) // no next IFD
	return t.Bytes()
}

// withExif puts an APP1 Exif segment holding orientation right after the JPEG's start marker,
// where cameras write it.
func withExif(jpg []byte, orientation uint16, bo binary.ByteOrder) []byte {
	body := append([]byte("Exif\x00\x00"), tiff(bo, orientation)...)
	seg := []byte{0xFF, 0xE1, byte((len(body) + 2) >> 8), byte(len(body) + 2)}
	out := append([]byte{}, jpg[:2]...)
	out = append(out, seg...)
	out = append(out, body...)
	return append(out, jpg[2:]...)
}

// webpWithExif appends an EXIF chunk to a WebP and fixes the RIFF size, as writers put it after
// the image data.
func webpWithExif(wp []byte, orientation uint16) []byte {
	t := tiff(binary.LittleEndian, orientation)
	chunk := append([]byte("EXIF"), binary.LittleEndian.AppendUint32(nil, uint32(len(t)))...)
	chunk = append(chunk, t...)
	if len(t)%2 == 1 {
		chunk = append(chunk, 0)
	}
	out := append(append([]byte{}, wp...), chunk...)
	binary.LittleEndian.PutUint32(out[4:8], uint32(len(out)-8))
	return out
}

// pngHeader is a PNG that is only a signature and an IHDR declaring w×h at the given bit depth
// and colour type, then IEND: what a decompression bomb shows before its data.
func pngHeader(w, h uint32, depth, colorType byte) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	chunk := func(typ string, data []byte) {
		_ = binary.Write(&b, binary.BigEndian, uint32(len(data)))
		b.WriteString(typ)
		b.Write(data)
		crc := crc32.NewIEEE()
		crc.Write([]byte(typ))
		crc.Write(data)
		_ = binary.Write(&b, binary.BigEndian, crc.Sum32())
	}
	ihdr := binary.BigEndian.AppendUint32(nil, w)
	ihdr = binary.BigEndian.AppendUint32(ihdr, h)
	ihdr = append(ihdr, depth, colorType, 0, 0, 0)
	chunk("IHDR", ihdr)
	chunk("IEND", nil)
	return b.Bytes()
}

// zipBomb is a ZIP of one file of n zero bytes: a few kilobytes that inflate to n.
func zipBomb(tb testing.TB, n int) []byte {
	tb.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	f, err := zw.Create("zeros.png")
	if err != nil {
		tb.Fatal(err)
	}
	zero := make([]byte, 1<<20)
	for n > 0 {
		k := min(n, len(zero))
		if _, err := f.Write(zero[:k]); err != nil {
			tb.Fatal(err)
		}
		n -= k
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

func readTestdata(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// decodeOut decodes what Prepare returned, checking it is what its MIME type says.
func decodeOut(tb testing.TB, p Picture) image.Image {
	tb.Helper()
	var m image.Image
	var err error
	switch p.MIME {
	case "image/png":
		m, err = png.Decode(bytes.NewReader(p.Data))
	case "image/jpeg":
		m, err = jpeg.Decode(bytes.NewReader(p.Data))
	default:
		tb.Fatalf("MIME %q", p.MIME)
	}
	if err != nil {
		tb.Fatalf("the %s Prepare returned does not decode: %v", p.MIME, err)
	}
	if b := m.Bounds(); b.Dx() != p.Width || b.Dy() != p.Height {
		tb.Fatalf("picture is %d×%d, Picture says %d×%d", b.Dx(), b.Dy(), p.Width, p.Height)
	}
	return m
}

// nearest names the test colour c is closest to.
func nearest(c color.Color) string {
	r, g, b, _ := c.RGBA()
	best, name := uint32(1<<31), ""
	for n, k := range map[string]color.RGBA{"red": red, "blue": blue, "green": green, "yellow": yellow, "white": {255, 255, 255, 255}, "black": {0, 0, 0, 255}} {
		kr, kg, kb, _ := k.RGBA()
		d := sq(r, kr) + sq(g, kg) + sq(b, kb)
		if d < best {
			best, name = d, n
		}
	}
	return name
}

func sq(a, b uint32) uint32 {
	d := int64(a>>8) - int64(b>>8)
	return uint32(d * d)
}

// corners are the colours near the four corners of m: top left, top right, bottom left, bottom right.
func corners(m image.Image) [4]string {
	b := m.Bounds()
	in := max(2, min(b.Dx(), b.Dy())/8)
	return [4]string{nearest(m.At(b.Min.X+in, b.Min.Y+in)), nearest(m.At(b.Max.X-1-in, b.Min.Y+in)),
		nearest(m.At(b.Min.X+in, b.Max.Y-1-in)), nearest(m.At(b.Max.X-1-in, b.Max.Y-1-in))}
}

func crc(b []byte) uint32 { return crc32.ChecksumIEEE(b) }
