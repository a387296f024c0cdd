package root_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/root"
)

// TestHelpEverywhere runs "--help" on every command of the tree.
func TestHelpEverywhere(t *testing.T) {
	t.Parallel()
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" {
				continue
			}
			p := append(append([]string(nil), path...), sub.Name())
			paths = append(paths, p)
			walk(sub, p)
		}
	}
	walk(root.NewCommand(cli.Streams{}), nil)
	if len(paths) < 35 {
		t.Fatalf("only %d commands: %v", len(paths), paths)
	}
	for _, p := range paths {
		var out, errOut bytes.Buffer
		code := root.Run(context.Background(), cli.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, append(p, "--help"))
		if code != 0 || errOut.Len() != 0 || !strings.Contains(out.String(), "Usage:\n  kubectl-lite "+strings.Join(p, " ")) {
			t.Errorf("%v --help: exit %d stderr %q stdout %.120q", p, code, errOut.String(), out.String())
		}
		cmd, _, err := root.NewCommand(cli.Streams{}).Find(p)
		if err != nil || cmd.Short == "" {
			t.Errorf("%v has no short description", p)
		}
	}
}
