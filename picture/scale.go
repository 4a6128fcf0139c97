package picture

import (
	"image"
	"image/color"
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
	return orientRGBA(shrink(src, tw, th), orient)
}

// shrink averages src into a tw×th picture (no larger than src) on white. Every source pixel
// falls into exactly one target pixel, which is the mean of those that do (area averaging): a
// thin pen stroke fades rather than vanishes, and nothing aliases. It keeps one row of sums, not
// a copy of the picture: scaling a 12-megapixel photo needs a few hundred kilobytes besides the
// decoded photo and the result (a kernel scaler's float buffer would take about 100 MB).
func shrink(src image.Image, tw, th int) *image.RGBA {
	b := src.Bounds()
	sw, sh := b.Dx(), b.Dy()
	dst := image.NewRGBA(image.Rect(0, 0, tw, th))
	col := make([]int, sw) // the target column of each source column
	for x := range col {
		col[x] = x * tw / sw
	}
	sums := make([]uint64, tw*4) // r, g, b and the count per target pixel of the current row
	row := make([]uint8, sw*3)
	read, ycc := rowReader(src)
	flush := func(ty int) {
		out := dst.Pix[ty*dst.Stride:]
		for x := 0; x < tw; x++ {
			s := sums[x*4 : x*4+4]
			if n := s[3]; n > 0 {
				r, g, b := uint8((s[0]+n/2)/n), uint8((s[1]+n/2)/n), uint8((s[2]+n/2)/n)
				if ycc {
					r, g, b = color.YCbCrToRGB(r, g, b)
				}
				out[x*4], out[x*4+1], out[x*4+2] = r, g, b
			}
			out[x*4+3] = 255
			s[0], s[1], s[2], s[3] = 0, 0, 0, 0
		}
	}
	ty := 0
	for y := 0; y < sh; y++ {
		if t := y * th / sh; t != ty {
			flush(ty)
			ty = t
		}
		read(b.Min.X, b.Min.Y+y, row)
		for x, c := range col {
			c *= 4
			sums[c] += uint64(row[x*3])
			sums[c+1] += uint64(row[x*3+1])
			sums[c+2] += uint64(row[x*3+2])
			sums[c+3]++
		}
	}
	flush(ty)
	return dst
}

// rowReader returns a function that writes one source row as RGB over white into row (3 bytes
// a pixel), reading the decoders' own pixel layouts directly where it can. A photo's row is
// written as Y, Cb, Cr instead (ycc): the conversion to RGB is linear, so the mean is converted
// once per target pixel rather than every source pixel.
func rowReader(src image.Image) (read func(x0, y int, row []uint8), ycc bool) {
	over := func(row []uint8, i int, r, g, b, a uint32) { // premultiplied 8-bit colour over white
		row[i], row[i+1], row[i+2] = uint8(r+255-a), uint8(g+255-a), uint8(b+255-a)
	}
	switch m := src.(type) {
	case *image.YCbCr:
		if hs, vs, ok := chromaShifts(m); ok {
			// The chroma sample of pixel (x, y) is at cbase + x>>hs: the arithmetic of COffset,
			// once per row instead of once per pixel.
			return func(x0, y int, row []uint8) {
				ys := m.Y[m.YOffset(x0, y):]
				cbase := (y>>vs-m.Rect.Min.Y>>vs)*m.CStride - m.Rect.Min.X>>hs
				for i := 0; i < len(row)/3; i++ {
					ci := cbase + (x0+i)>>hs
					row[i*3], row[i*3+1], row[i*3+2] = ys[i], m.Cb[ci], m.Cr[ci]
				}
			}, true
		}
		return func(x0, y int, row []uint8) {
			for i := 0; i < len(row)/3; i++ {
				yi, ci := m.YOffset(x0+i, y), m.COffset(x0+i, y)
				row[i*3], row[i*3+1], row[i*3+2] = m.Y[yi], m.Cb[ci], m.Cr[ci]
			}
		}, true
	case *image.RGBA:
		return func(x0, y int, row []uint8) {
			p := m.Pix[m.PixOffset(x0, y):]
			for i := 0; i < len(row)/3; i++ {
				over(row, i*3, uint32(p[i*4]), uint32(p[i*4+1]), uint32(p[i*4+2]), uint32(p[i*4+3]))
			}
		}, false
	case *image.NRGBA:
		return func(x0, y int, row []uint8) {
			p := m.Pix[m.PixOffset(x0, y):]
			for i := 0; i < len(row)/3; i++ {
				a := uint32(p[i*4+3])
				over(row, i*3, (uint32(p[i*4])*a+127)/255, (uint32(p[i*4+1])*a+127)/255, (uint32(p[i*4+2])*a+127)/255, a)
			}
		}, false
	case *image.Gray:
		return func(x0, y int, row []uint8) {
			p := m.Pix[m.PixOffset(x0, y):]
			for i := 0; i < len(row)/3; i++ {
				row[i*3], row[i*3+1], row[i*3+2] = p[i], p[i], p[i]
			}
		}, false
	}
	return func(x0, y int, row []uint8) { // any other colour model, through its colour conversion
		for i := 0; i < len(row)/3; i++ {
			r, g, b, a := src.At(x0+i, y).RGBA()
			over(row, i*3, r>>8, g>>8, b>>8, a>>8)
		}
	}, false
}

// chromaShifts are the shifts from a pixel's column and row to its chroma sample's, for the
// subsampling ratios JPEG and WebP decode to, when the picture starts at a non-negative origin.
func chromaShifts(m *image.YCbCr) (hs, vs int, ok bool) {
	if m.Rect.Min.X < 0 || m.Rect.Min.Y < 0 {
		return 0, 0, false
	}
	switch m.SubsampleRatio {
	case image.YCbCrSubsampleRatio444:
		return 0, 0, true
	case image.YCbCrSubsampleRatio422:
		return 1, 0, true
	case image.YCbCrSubsampleRatio420:
		return 1, 1, true
	case image.YCbCrSubsampleRatio440:
		return 0, 1, true
	case image.YCbCrSubsampleRatio411:
		return 2, 0, true
	case image.YCbCrSubsampleRatio410:
		return 2, 1, true
	}
	return 0, 0, false
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
