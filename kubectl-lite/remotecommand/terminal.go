package remotecommand

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"
)

// LocalStreams are the command line's side of a session (exec, attach).
type LocalStreams struct {
	In          io.Reader
	Out, ErrOut io.Writer
	// Stdin and TTY are the -i and -t wishes; Quiet is -q.
	Stdin, TTY, Quiet bool
}

// Setup turns -i/-t into a session's Options and the stdin, stdout,
// stderr and tty query flags, as kubectl does: a TTY needs stdin to be a
// terminal (otherwise "Unable to use a TTY ..." and none); with one, the
// local terminal goes raw, its size is sent at once and on SIGWINCH, and
// stderr is merged into stdout. restore gives the terminal back (call it
// once the session ends; it may be called more than once).
func Setup(l LocalStreams) (opts Options, q url.Values, restore func(), err error) {
	q = url.Values{}
	restore = func() {}
	q.Set("stdout", "true")
	opts.Stdout = l.Out
	if l.Stdin {
		q.Set("stdin", "true")
		opts.Stdin = l.In
	}
	tty := l.TTY
	inFile, isFile := l.In.(*os.File)
	if tty {
		if !l.Stdin {
			fmt.Fprintln(l.ErrOut, "Unable to use a TTY - input is not a terminal or the right kind of file")
			tty = false
		} else if !isFile || !term.IsTerminal(int(inFile.Fd())) {
			if !l.Quiet {
				fmt.Fprintln(l.ErrOut, "Unable to use a TTY - input is not a terminal or the right kind of file")
			}
			tty = false
		}
	}
	if !tty {
		q.Set("stderr", "true")
		opts.Stderr = l.ErrOut
		return opts, q, restore, nil
	}
	q.Set("tty", "true")
	opts.TTY = true
	fd := int(inFile.Fd())
	old, err := term.MakeRaw(fd)
	if err != nil {
		return opts, q, restore, fmt.Errorf("set terminal raw mode: %w", err)
	}
	sizes := make(chan Size, 1)
	if w, h, err := term.GetSize(fd); err == nil {
		sizes <- Size{Width: uint16(w), Height: uint16(h)}
	}
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-winch:
				if w, h, err := term.GetSize(fd); err == nil {
					select {
					case sizes <- Size{Width: uint16(w), Height: uint16(h)}:
					default:
					}
				}
			}
		}
	}()
	opts.Resize = sizes
	done := false
	restore = func() {
		if done {
			return
		}
		done = true
		signal.Stop(winch)
		close(stop)
		_ = term.Restore(fd, old)
	}
	return opts, q, restore, nil
}
