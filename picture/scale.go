package picture

import (
	"image"
	stddraw "image/draw"

	"golang.org/x/image/draw"
)

// fit returns src scaled so its longest side is at most long, on white where it is transparent
// (models read transparent pixels as black, which hides dark ink), then turned by the EXIF
// orientation. Scaling comes first so that turning moves only the small picture's pixels.
func fit(src image.Image, long, orient int) *image.RGBA {
	b := src.Bounds()
	w, h := b.Dx(), b.Dy()
	tw, th := w, h
	if w >= h && w > long {
		tw, th = long, max(1, (h*long+w/2)/w)
	} else if h > w && h > long {
		tw, th = max(1, (w*long+h/2)/h), long
	}
	dst := image.NewRGBA(image.Rect(0, 0, tw, th))
	op := draw.Src
	if o, ok := src.(interface{ Opaque() bool }); !ok || !o.Opaque() {
		stddraw.Draw(dst, dst.Bounds(), image.White, image.Point{}, draw.Src)
		op = draw.Over
	}
	if tw == w && th == h {
		stddraw.Draw(dst, dst.Bounds(), src, b.Min, op)
	} else {
		// BiLinear widens its kernel with the scale, so a large photo is averaged, not sampled:
		// thin pen strokes survive being made four times smaller.
		draw.BiLinear.Scale(dst, dst.Bounds(), src, b, op, nil)
	}
	return orientRGBA(dst, orient)
}

// orientRGBA turns or mirrors m as EXIF orientation o says a viewer shows it (1: as stored;
// 2 mirrored; 3 half a turn; 4 flipped; 5 transposed; 6 a quarter turn clockwise; 7 transversed;
// 8 a quarter turn anticlockwise).
func orientRGBA(m *image.RGBA, o int) *image.RGBA {
	if o < 2 || o > 8 {
		return m
	}
	w, h := m.Bounds().Dx(), m.Bounds().Dy()
	dw, dh := w, h
	if o >= 5 {
		dw, dh = h, w
	}
	out := image.NewRGBA(image.Rect(0, 0, dw, dh))
	for y := 0; y < dh; y++ {
		row := out.Pix[y*out.Stride : y*out.Stride+dw*4]
		for x := 0; x < dw; x++ {
			var sx, sy int
			switch o {
			case 2:
				sx, sy = w-1-x, y
			case 3:
				sx, sy = w-1-x, h-1-y
			case 4:
				sx, sy = x, h-1-y
			case 5:
				sx, sy = y, x
			case 6:
				sx, sy = y, h-1-x
			case 7:
				sx, sy = w-1-y, h-1-x
			case 8:
				sx, sy = w-1-y, x
			}
			i := sy*m.Stride + sx*4
			copy(row[x*4:x*4+4], m.Pix[i:i+4])
		}
	}
	return out
}
