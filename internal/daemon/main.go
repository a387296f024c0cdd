package daemon

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/minik8s/minik8s/internal/logging"
)

// Exit codes of every daemon.
const (
	// ExitFailure: the command line was fine but the daemon could not start
	// or stopped with an error (a file a flag names is missing or
	// malformed, a port is taken, etcd died...).
	ExitFailure = 1
	// ExitUsage: the command line is wrong (an unknown flag, a value that
	// does not parse, is out of range or conflicts with another flag, a
	// positional argument).
	ExitUsage = 2
)

// Command is what a daemon's main wires: its flags, their validation and
// the daemon itself.
type Command struct {
	// Name prefixes the error line ("scheduler").
	Name string
	// AddFlags registers the daemon's flags.
	AddFlags func(*flag.FlagSet)
	// Validate checks the parsed flags: ranges, formats, conflicts. It
	// reads no file: what a flag points at is Run's to load (first, before
	// it logs anything).
	Validate func() error
	// LogLevel returns the level the flags asked for (logging.New's names).
	LogLevel func() string
	// Run runs the daemon until ctx ends (SIGINT or SIGTERM).
	Run func(ctx context.Context, log *slog.Logger) error
}

// Main parses args, validates them and runs the daemon; it returns the exit
// code. Every failure is one line on stderr, "NAME: reason", naming the
// flag or file at fault, with ExitUsage for a wrong command line and
// ExitFailure for the rest; no usage dump. -h and --help print the flags on
// stdout and return 0.
func (c Command) Main(args []string) int {
	return c.main(args, os.Stdout, os.Stderr)
}

func (c Command) main(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(c.Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c.AddFlags(fs)
	fail := func(code int, err error) int {
		fmt.Fprintf(stderr, "%s: %s\n", c.Name, oneLine(err.Error()))
		return code
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout)
			fmt.Fprintf(stdout, "Usage of %s:\n", c.Name)
			fs.PrintDefaults()
			return 0
		}
		return fail(ExitUsage, err)
	}
	if fs.NArg() > 0 {
		return fail(ExitUsage, fmt.Errorf("unexpected argument %q: %s takes only flags", fs.Arg(0), c.Name))
	}
	if c.Validate != nil {
		if err := c.Validate(); err != nil {
			return fail(ExitUsage, err)
		}
	}
	log, err := logging.New(c.LogLevel(), c.Name)
	if err != nil {
		return fail(ExitUsage, err)
	}
	ctx, stop := SignalContext()
	defer stop()
	if err := c.Run(ctx, log); err != nil {
		return fail(ExitFailure, err)
	}
	return 0
}

// oneLine keeps an error on one line: errors.Join and multi-line messages
// become "; "-separated.
func oneLine(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			if i+1 < len(s) {
				out = append(out, "; "...)
			}
			continue
		}
		out = append(out, s[i])
	}
	return string(out)
}
