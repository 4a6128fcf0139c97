package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/excalibot/excalibot/config"
)

// cmdConfig prints the effective settings, secrets redacted, and names anything missing or invalid.
func cmdConfig(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("config", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: excalibot config [settings flags]

Prints the effective settings serve would use (flags, environment, config file), secrets
redacted, with where each value came from; exits 1 when a setting is invalid.

`)
		fs.PrintDefaults()
	}
	l, err := config.Load(fs, args, os.Environ(), settingsOf("config")...)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if l == nil {
		fmt.Fprintf(stderr, "excalibot config: %v\n", err)
		return 2
	}
	l.Print(stdout)
	if msg := l.MissingChat(); msg != "" {
		fmt.Fprintf(stdout, "\nnote: %s\n", msg)
	}
	if err != nil {
		var ve *config.ValidationError
		if errors.As(err, &ve) {
			fmt.Fprintf(stderr, "\n%v\n", err)
			return 1
		}
		fmt.Fprintf(stderr, "excalibot config: %v\n", err)
		return 2
	}
	return 0
}
