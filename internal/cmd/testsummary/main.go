package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
)

func main() {
	args := os.Args[1:]
	if len(args) == 0 || !slices.Contains(args, "-json") {
		fmt.Fprintln(os.Stderr, "testsummary: usage: testsummary go test -json [flags] [packages]")
		os.Exit(2)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(2)
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(2)
	}
	r := NewReport(os.Stdout, slices.Contains(args, "-v"))
	if err := r.Read(stdout); err != nil {
		fmt.Fprintln(os.Stderr, "testsummary: reading go test's output:", err)
	}
	_, _ = io.Copy(io.Discard, stdout)
	waitErr := cmd.Wait()
	r.Summary(os.Stdout)
	var ee *exec.ExitError
	switch {
	case errors.As(waitErr, &ee):
		os.Exit(ee.ExitCode())
	case waitErr != nil:
		fmt.Fprintln(os.Stderr, "testsummary:", waitErr)
		os.Exit(2)
	case r.Failed():
		os.Exit(1)
	}
}
