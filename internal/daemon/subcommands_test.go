package daemon_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/internal/daemon"
)

// TestSubcommands: a daemon's other verbs parse their own flags, print
// cobra's help, and fail as the daemon does: one line, exit 2 for the
// command line, 1 otherwise; the daemon's help lists them.
func TestSubcommands(t *testing.T) {
	t.Parallel()
	newCmd := func() daemon.Command {
		var fail bool
		verb := &cobra.Command{Use: "verb FILE", Short: "Does a thing",
			Args: func(_ *cobra.Command, args []string) error {
				if len(args) != 1 {
					return daemon.UsageError(errors.New("want one FILE"))
				}
				return nil
			},
			RunE: func(cmd *cobra.Command, args []string) error {
				if fail {
					return errors.New("it broke\nbadly")
				}
				cmd.Println("did", args[0])
				return nil
			}}
		verb.Flags().BoolVar(&fail, "fail", false, "fail")
		return daemon.Command{Name: "fake", Subcommands: []*cobra.Command{verb},
			Run: func(context.Context, *slog.Logger) error { return errors.New("the daemon ran") }}
	}
	for _, tc := range []struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		{[]string{"verb", "x"}, 0, "did x", ""},
		{[]string{"verb", "--fail", "x"}, daemon.ExitFailure, "", "fake: it broke; badly\n"},
		{[]string{"verb"}, daemon.ExitUsage, "", "fake: want one FILE\n"},
		{[]string{"verb", "--nope", "x"}, daemon.ExitUsage, "", "fake: unknown flag: --nope\n"},
		{[]string{"verb", "--help"}, 0, "--fail", ""},
		{[]string{"--help"}, 0, "Available Commands:\n  verb         Does a thing", ""},
		{[]string{"other"}, daemon.ExitUsage, "", `fake: unexpected argument "other"`},
	} {
		var stdout, stderr bytes.Buffer
		code := newCmd().Execute(tc.args, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stdout.String(), tc.stdout) || !strings.HasPrefix(stderr.String(), tc.stderr) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %d, %q in stdout, stderr starting %q", tc.args, code, stdout.String(), stderr.String(), tc.code, tc.stdout, tc.stderr)
		}
	}
}
