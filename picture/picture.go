// Package picture turns an untrusted image (a phone photo of a whiteboard, a screenshot) into what
// a vision model is sent: bounded before anything is decoded (bytes, then the pixel size and the
// memory its decoding takes, read from the header), PNG, JPEG or WebP only, EXIF orientation
// applied, transparency flattened onto white, scaled to a longest side and encoded again as PNG
// or JPEG. A PNG that carries an Excalidraw scene is a diagram to import, not a picture to read:
// Prepare refuses it with ErrScene and HasScene tells it beforehand.
package picture

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"slices"
	"strings"

	"golang.org/x/image/webp"

	"github.com/excalibot/excalibot/scene"
)

// Limits bound one picture. Zero fields take the defaults of DefaultLimits.
type Limits struct {
	// MaxBytes bounds the file as sent.
	MaxBytes int64
	// MaxPixels bounds width × height as the header declares them.
	MaxPixels int64
	// MaxDecoded bounds the memory the decoded picture takes (pixels × bytes per pixel of its
	// colour model), so a 16-bit picture is held to fewer pixels than an 8-bit one.
	MaxDecoded int64
	// LongSide is the longest side of the picture the model gets; larger pictures are scaled
	// down to it, smaller ones are left as they are.
	LongSide int
	// Quality is the JPEG quality of photos as sent (1–100).
	Quality int
}

// DefaultLimits: a 48-megapixel phone photo is refused, a 24-megapixel one is read; 1024 px is
// about what vision models read a picture at (Gemma 3 takes 896, Qwen2.5-VL tiles 28-px patches,
// so 1024 × 768 is about a thousand image tokens).
var DefaultLimits = Limits{MaxBytes: 20 << 20, MaxPixels: 40_000_000, MaxDecoded: 160 << 20, LongSide: 1024, Quality: 85}

// MinSide is the smallest width or height read: anything smaller cannot show a diagram.
const MinSide = 8

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	if l.MaxBytes <= 0 {
		l.MaxBytes = d.MaxBytes
	}
	if l.MaxPixels <= 0 {
		l.MaxPixels = d.MaxPixels
	}
	if l.MaxDecoded <= 0 {
		l.MaxDecoded = d.MaxDecoded
	}
	if l.LongSide <= 0 {
		l.LongSide = d.LongSide
	}
	if l.Quality <= 0 || l.Quality > 100 {
		l.Quality = d.Quality
	}
	return l
}

// Picture is an image as the model gets it.
type Picture struct {
	Data   []byte // PNG or JPEG
	MIME   string // "image/png" or "image/jpeg"
	Width  int    // of Data, after orientation and scaling
	Height int
	// Format is what was sent: "png", "jpeg" or "webp".
	Format string
	// SourceWidth and SourceHeight are the pixel size as sent, before orientation.
	SourceWidth  int
	SourceHeight int
	// Orientation is the EXIF orientation applied (1: none; 6: turned a quarter clockwise…).
	Orientation int
}

// Kinds of refusal; every refusal Prepare returns matches one of them with errors.Is, and its
// UserMessage reads as a phrase to put after the file's name ("photo.jpg: the file is 31.0 MB; …").
var (
	ErrTooLarge   = errors.New("picture too large")         // bytes, pixels or the memory to decode it
	ErrTooSmall   = errors.New("picture too small")         // a side under MinSide
	ErrFormat     = errors.New("not a picture I read")      // not PNG, JPEG or WebP
	ErrUnreadable = errors.New("picture cannot be read")    // cut short or corrupt
	ErrScene      = errors.New("PNG with a scene embedded") // import it as a diagram instead
)

// Error is a refusal: Kind is one of the Err values, UserMessage says what is wrong in words for
// the person who sent the picture. A decoder's own words are only in Error, for the log.
type Error struct {
	Kind  error
	msg   string
	cause error // the decoder's error; nil when the refusal is this package's own
}

func (e *Error) Error() string {
	if e.cause != nil {
		return e.msg + ": " + e.cause.Error()
	}
	return e.msg
}

func (e *Error) UserMessage() string { return e.msg }
func (e *Error) Unwrap() error       { return e.Kind }

func refuse(kind error, format string, a ...any) error {
	return &Error{Kind: kind, msg: fmt.Sprintf(format, a...)}
}

// HasScene reports whether data is a PNG exported from Excalidraw with its scene embedded: the
// caller imports it as a diagram (scene.EmbeddedScene) instead of sending it to a model.
func HasScene(data []byte) bool { return scene.HasEmbeddedScene(data) }

// codec is one format this package reads.
type codec struct {
	name   string // "png", "jpeg", "webp"
	title  string // for messages: "PNG"
	config func(io.Reader) (image.Config, error)
	decode func(io.Reader) (image.Image, error)
}

var (
	pngCodec  = codec{"png", "PNG", png.DecodeConfig, png.Decode}
	jpegCodec = codec{"jpeg", "JPEG", jpeg.DecodeConfig, jpeg.Decode}
	webpCodec = codec{"webp", "WebP", webp.DecodeConfig, webp.Decode}
)

// Prepare checks data and returns the picture the model gets. Nothing is decoded before the
// bytes, the format and the header's size have passed lim; the error says which check failed.
func Prepare(data []byte, lim Limits) (Picture, error) {
	lim = lim.withDefaults()
	if len(data) == 0 {
		return Picture{}, refuse(ErrFormat, "the file is empty")
	}
	if int64(len(data)) > lim.MaxBytes {
		return Picture{}, refuse(ErrTooLarge, "the file is %s; I read pictures of up to %s", scene.ByteSize(int64(len(data))), scene.ByteSize(lim.MaxBytes))
	}
	c, err := sniff(data)
	if err != nil {
		return Picture{}, err
	}
	if c.name == "png" && HasScene(data) {
		return Picture{}, refuse(ErrScene, "the PNG carries an Excalidraw scene; import it as a diagram instead of reading it as a picture")
	}
	cfg, err := c.config(bytes.NewReader(data))
	if err != nil {
		return Picture{}, unreadable(c, "header", err)
	}
	if err := checkSize(cfg, lim); err != nil {
		return Picture{}, err
	}
	img, err := c.decode(bytes.NewReader(data))
	if err != nil {
		return Picture{}, unreadable(c, "picture", err)
	}
	// The decoder must not hand back more than the header promised (it is what was bounded).
	if b := img.Bounds(); b.Dx() != cfg.Width || b.Dy() != cfg.Height {
		return Picture{}, refuse(ErrUnreadable, "the %s declares %d×%d pixels but holds %d×%d", c.title, cfg.Width, cfg.Height, b.Dx(), b.Dy())
	}
	orient := 1
	switch c.name {
	case "jpeg":
		orient = jpegOrientation(data)
	case "webp":
		orient = webpOrientation(data)
	}
	out := fit(img, lim.LongSide, orient)
	p := Picture{Width: out.Bounds().Dx(), Height: out.Bounds().Dy(), Format: c.name,
		SourceWidth: cfg.Width, SourceHeight: cfg.Height, Orientation: orient}
	var buf bytes.Buffer
	if photo(img) {
		// Photos stay JPEG: as PNG a 1024-px photo is several times larger and reads no better.
		err = jpeg.Encode(&buf, out, &jpeg.Options{Quality: lim.Quality})
		p.MIME = "image/jpeg"
	} else {
		// Screenshots and drawings keep their sharp edges as PNG.
		err = (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, out)
		p.MIME = "image/png"
	}
	if err != nil {
		return Picture{}, fmt.Errorf("encode the picture for the model: %w", err)
	}
	p.Data = buf.Bytes()
	return p, nil
}

// checkSize bounds the header's pixel size and the memory decoding it would take.
func checkSize(cfg image.Config, lim Limits) error {
	w, h := int64(cfg.Width), int64(cfg.Height)
	if w < MinSide || h < MinSide {
		return refuse(ErrTooSmall, "the picture is %d×%d pixels, too small to show a diagram", w, h)
	}
	if px := w * h; px > lim.MaxPixels {
		return refuse(ErrTooLarge, "the picture is %d×%d pixels (%s megapixels); I read pictures of up to %s megapixels",
			w, h, mega(px), mega(lim.MaxPixels))
	}
	if need := w * h * int64(bytesPerPixel(cfg)); need > lim.MaxDecoded {
		return refuse(ErrTooLarge, "the picture would take %s of memory to read (%d×%d pixels of %d bytes each); I read pictures that take up to %s",
			scene.ByteSize(need), w, h, bytesPerPixel(cfg), scene.ByteSize(lim.MaxDecoded))
	}
	return nil
}

// cutShort are what the decoders say of a file that ends early without saying io.ErrUnexpectedEOF:
// image/jpeg for a scan cut off, image/png for image data cut off.
var cutShort = []string{"short Huffman data", "missing SOS marker", "not enough pixel data"}

// unreadable words a decoder's error: a file that ends early says so, other errors are named.
func unreadable(c codec, part string, err error) error {
	msg := err.Error()
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || slices.ContainsFunc(cutShort, func(s string) bool {
		return strings.Contains(msg, s)
	}) {
		return refuse(ErrUnreadable, "the %s is cut short: the file ends before the picture does; send it again", c.title)
	}
	return &Error{Kind: ErrUnreadable, msg: fmt.Sprintf("the %s's %s cannot be read (the file may be damaged); save it again and send it", c.title, part), cause: err}
}

func mega(px int64) string {
	if px >= 10_000_000 {
		return fmt.Sprintf("%d", (px+500_000)/1_000_000)
	}
	return fmt.Sprintf("%.1f", float64(px)/1e6)
}
