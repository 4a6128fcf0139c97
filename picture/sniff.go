package picture

import (
	"bytes"
	"image"
	"image/color"
)

// sniff tells the format by the file's first bytes, never by its name or MIME type (both come
// from the sender). Formats this package does not read are named, so the reply can say what to
// send instead.
func sniff(b []byte) (codec, error) {
	switch {
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return pngCodec, nil
	case bytes.HasPrefix(b, []byte{0xFF, 0xD8, 0xFF}):
		return jpegCodec, nil
	case len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP":
		return webpCodec, nil
	}
	if name := otherFormat(b); name != "" {
		return codec{}, refuse(ErrFormat, "this is %s, not a picture I read; send a PNG, JPEG or WebP", name)
	}
	return codec{}, refuse(ErrFormat, "this is not a PNG, JPEG or WebP picture (it starts with the bytes % x)", b[:min(len(b), 4)])
}

// otherFormat names well-known formats people send instead of a picture, or "".
func otherFormat(b []byte) string {
	has := func(p string) bool { return bytes.HasPrefix(b, []byte(p)) }
	switch {
	case has("PK\x03\x04"), has("PK\x05\x06"):
		return "a ZIP archive"
	case has("\x1f\x8b"):
		return "a gzip archive"
	case has("7z\xbc\xaf\x27\x1c"):
		return "a 7-Zip archive"
	case has("GIF87a"), has("GIF89a"):
		return "a GIF picture"
	case has("BM"):
		return "a BMP picture"
	case has("II*\x00"), has("MM\x00*"):
		return "a TIFF picture"
	case has("%PDF"):
		return "a PDF document"
	case len(b) >= 12 && string(b[4:8]) == "ftyp":
		switch string(b[8:12]) {
		case "heic", "heix", "hevc", "heim", "heis", "mif1", "msf1":
			return "a HEIC picture (an iPhone photo: share it as JPEG, or set Camera → Formats → Most Compatible)"
		case "avif", "avis":
			return "an AVIF picture"
		}
		return "a video or an ISO media file"
	}
	head := bytes.ToLower(bytes.TrimSpace(b[:min(len(b), 256)]))
	if bytes.HasPrefix(head, []byte("<svg")) || bytes.HasPrefix(head, []byte("<?xml")) && bytes.Contains(head, []byte("<svg")) {
		return "an SVG drawing"
	}
	if bytes.HasPrefix(head, []byte("{")) {
		return "a JSON file (an .excalidraw file is imported as a diagram, not read as a picture)"
	}
	return ""
}

// bytesPerPixel is what one pixel of the decoded picture takes, by the colour model the header
// declares: the decoders allocate one buffer of this many bytes per pixel.
func bytesPerPixel(cfg image.Config) int {
	switch cfg.ColorModel {
	case color.GrayModel, color.AlphaModel:
		return 1
	case color.Gray16Model, color.Alpha16Model:
		return 2
	case color.RGBA64Model, color.NRGBA64Model:
		return 8
	case color.YCbCrModel:
		return 3 // at most (4:4:4); a 4:2:0 photo takes half of it
	case color.NYCbCrAModel, color.CMYKModel, color.RGBAModel, color.NRGBAModel:
		return 4
	}
	if _, ok := cfg.ColorModel.(color.Palette); ok {
		return 1
	}
	return 8 // unknown: assume the widest
}

// photo reports whether the decoded picture is a photograph's (YCbCr or CMYK, as JPEG and lossy
// WebP decode), which goes to the model as JPEG; everything else goes as PNG.
func photo(img image.Image) bool {
	switch img.(type) {
	case *image.YCbCr, *image.NYCbCrA, *image.CMYK:
		return true
	}
	return false
}
