package dotproc

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// The worker's protocol, over its stdin and stdout. The parent sends a request: a 4-byte
// big-endian length, then that many bytes of dot source. The worker answers each with a status
// byte, a 4-byte big-endian length and the payload: Graphviz's json output, or an error's text.
// Before any request the worker sends statusReady with the protocol's name, once its module has
// laid out a first graph.
const (
	statusOK     byte = 'o' // payload: dot's json output
	statusError  byte = 'e' // payload: an error about the source (a bad source)
	statusBroken byte = 'b' // payload: an error that says the module is broken (ErrBroken)
	statusReady  byte = 'r' // payload: protocolName
)

// protocolName is what a worker says when it is ready: a parent started with another program (or
// another version of this protocol) learns it at once.
const protocolName = "excalibot dot-worker 1"

// maxFrame bounds a frame: far above the json of MaxNodes boxes, and it keeps a garbled stream
// from making either side allocate gigabytes.
const maxFrame = 64 << 20

// warmSource is laid out before a worker says it is ready, so that a worker that cannot run dot
// fails at its start and not at the first diagram.
const warmSource = "digraph G { a -> b }"

func writeFrame(w io.Writer, status byte, payload []byte) error {
	var head [5]byte
	head[0] = status
	binary.BigEndian.PutUint32(head[1:], uint32(len(payload)))
	if _, err := w.Write(head[:]); err != nil {
		return err
	}
	_, err := w.Write(payload)
	return err
}

func writeRequest(w io.Writer, src []byte) error {
	if len(src) > maxFrame {
		return fmt.Errorf("dot source of %d bytes, more than %d", len(src), maxFrame)
	}
	var head [4]byte
	binary.BigEndian.PutUint32(head[:], uint32(len(src)))
	if _, err := w.Write(head[:]); err != nil {
		return err
	}
	_, err := w.Write(src)
	return err
}

func readLength(r io.Reader) (int, error) {
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return 0, err
	}
	n := binary.BigEndian.Uint32(head[:])
	if n > maxFrame {
		return 0, fmt.Errorf("frame of %d bytes, more than %d", n, maxFrame)
	}
	return int(n), nil
}

func readRequest(r io.Reader) ([]byte, error) {
	n, err := readLength(r)
	if err != nil {
		return nil, err
	}
	src := make([]byte, n)
	if _, err := io.ReadFull(r, src); err != nil {
		return nil, unexpected(err)
	}
	return src, nil
}

func readReply(r io.Reader) (status byte, payload []byte, err error) {
	var s [1]byte
	if _, err := io.ReadFull(r, s[:]); err != nil {
		return 0, nil, err
	}
	n, err := readLength(r)
	if err != nil {
		return 0, nil, unexpected(err)
	}
	payload = make([]byte, n)
	if _, err := io.ReadFull(r, payload); err != nil {
		return 0, nil, unexpected(err)
	}
	return s[0], payload, nil
}

// unexpected turns the end of the stream inside a frame into io.ErrUnexpectedEOF.
func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Serve is the worker's side of the protocol: it lays out each request read from in with
// InProcess and writes the answer to out, until in ends (the parent closed it or died). It
// returns nil then, also in the middle of a run: a run cannot be interrupted, and the process is
// expected to exit when Serve returns. A malformed request or a failed write is an error.
func Serve(in io.Reader, out io.Writer) error {
	return serve(in, out, InProcess{}.Run)
}

// runFunc lays out one source, as InProcess.Run does.
type runFunc func(ctx context.Context, src []byte) ([]byte, error)

func serve(in io.Reader, out io.Writer, run runFunc) error {
	ctx := context.Background()
	if _, err := run(ctx, []byte(warmSource)); err != nil {
		return fmt.Errorf("lay out a first graph: %w", err)
	}
	w := bufio.NewWriter(out)
	if err := writeFrame(w, statusReady, []byte(protocolName)); err != nil {
		return fmt.Errorf("say ready: %w", err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("say ready: %w", err)
	}
	// Requests are read on their own goroutine, so that the end of in is seen during a run as
	// well as between runs: a worker whose parent died mid-run exits instead of running on.
	reqs := make(chan []byte)
	ended := make(chan error, 1)
	go func() {
		r := bufio.NewReader(in)
		for {
			src, err := readRequest(r)
			if err != nil {
				ended <- err
				return
			}
			reqs <- src
		}
	}()
	type answer struct {
		out []byte
		err error
	}
	for {
		var src []byte
		select {
		case src = <-reqs:
		case err := <-ended:
			return endOf(err)
		}
		done := make(chan answer, 1)
		go func() {
			out, err := run(ctx, src)
			done <- answer{out, err}
		}()
		var a answer
		select {
		case a = <-done:
		case err := <-ended:
			return endOf(err) // the run goes on until the process exits
		}
		status, payload := statusOK, a.out
		if a.err != nil {
			status, payload = statusError, []byte(a.err.Error())
			if errors.Is(a.err, ErrBroken) {
				status = statusBroken
			}
		}
		if err := writeFrame(w, status, payload); err != nil {
			return fmt.Errorf("write answer: %w", err)
		}
		if err := w.Flush(); err != nil {
			return fmt.Errorf("write answer: %w", err)
		}
	}
}

// endOf is what Serve returns when reading requests stopped: nil at the stream's clean end.
func endOf(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return fmt.Errorf("read request: %w", err)
}
