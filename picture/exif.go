package picture

import (
	"bytes"
	"encoding/binary"
)

// A phone stores a photo the way the sensor read it and says in its EXIF orientation tag how to
// turn it for display; browsers and chat apps apply it, so the model must see the photo turned
// too. Only the one tag is read, walking no more than the bytes the file has.

// maxSegments bounds the JPEG segments read before giving up on finding EXIF: it sits in the
// first few, right after the start of the image.
const maxSegments = 64

// jpegOrientation reads the orientation tag of a JPEG's APP1 Exif segment; 1 when there is none
// or it cannot be read.
func jpegOrientation(b []byte) int {
	if len(b) < 4 || b[0] != 0xFF || b[1] != 0xD8 {
		return 1
	}
	i := 2
	for seg := 0; seg < maxSegments && i+4 <= len(b); seg++ {
		if b[i] != 0xFF {
			return 1
		}
		marker := b[i+1]
		switch {
		case marker == 0xFF: // fill byte
			i++
			continue
		case marker == 0xDA || marker == 0xD9: // start of scan, end of image: no metadata after
			return 1
		case marker >= 0xD0 && marker <= 0xD7 || marker == 0x01: // no length field
			i += 2
			continue
		}
		n := int(b[i+2])<<8 | int(b[i+3])
		if n < 2 || i+2+n > len(b) {
			return 1
		}
		body := b[i+4 : i+2+n]
		if marker == 0xE1 {
			if t, ok := bytes.CutPrefix(body, []byte("Exif\x00\x00")); ok {
				return tiffOrientation(t)
			}
		}
		i += 2 + n
	}
	return 1
}

// webpOrientation reads the orientation tag of a WebP's EXIF chunk; 1 when there is none.
func webpOrientation(b []byte) int {
	if len(b) < 12 {
		return 1
	}
	rest := b[12:]
	for len(rest) >= 8 {
		n := uint64(binary.LittleEndian.Uint32(rest[4:8]))
		if n > uint64(len(rest)-8) {
			return 1
		}
		if string(rest[:4]) == "EXIF" {
			t := rest[8 : 8+n]
			t, _ = bytes.CutPrefix(t, []byte("Exif\x00\x00")) // some writers keep the JPEG prefix
			return tiffOrientation(t)
		}
		rest = rest[8+n:]
		if n%2 == 1 && len(rest) > 0 { // chunks are padded to an even size
			rest = rest[1:]
		}
	}
	return 1
}

// tiffOrientation finds tag 0x0112 (a SHORT, 1–8) in the first IFD of TIFF-structured EXIF data.
func tiffOrientation(t []byte) int {
	if len(t) < 8 {
		return 1
	}
	var bo binary.ByteOrder
	switch string(t[:2]) {
	case "II":
		bo = binary.LittleEndian
	case "MM":
		bo = binary.BigEndian
	default:
		return 1
	}
	if bo.Uint16(t[2:4]) != 42 {
		return 1
	}
	off := uint64(bo.Uint32(t[4:8]))
	if off < 8 || off+2 > uint64(len(t)) {
		return 1
	}
	entries := int(bo.Uint16(t[off:]))
	p := int(off) + 2
	for k := 0; k < entries && p+12 <= len(t); k, p = k+1, p+12 {
		if bo.Uint16(t[p:]) != 0x0112 {
			continue
		}
		if bo.Uint16(t[p+2:]) != 3 || bo.Uint32(t[p+4:]) != 1 { // type SHORT, count 1
			return 1
		}
		if v := int(bo.Uint16(t[p+8:])); v >= 1 && v <= 8 {
			return v
		}
		return 1
	}
	return 1
}
