package cli

import (
	"testing"

	"github.com/spf13/cobra"
)

func TestUsageError(t *testing.T) {
	t.Parallel()
	root := &cobra.Command{Use: "kubectl-lite"}
	pf := &cobra.Command{Use: "port-forward"}
	root.AddCommand(pf)
	want := "bad port\nSee 'kubectl-lite port-forward -h' for help and examples"
	if got := UsageError(pf, "bad port").Error(); got != want {
		t.Errorf("UsageError = %q, want %q", got, want)
	}
}
