package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// UsageError is kubectl's UsageErrorf: the message, then where to get
// help for cmd.
func UsageError(cmd *cobra.Command, msg string) error {
	return fmt.Errorf("%s\nSee '%s -h' for help and examples", msg, cmd.CommandPath())
}

// RecordedCommand is what --record writes in the kubernetes.io/change-cause
// annotation: the command line as typed, under kubectl-lite's name.
func RecordedCommand() string {
	return strings.Join(append([]string{"kubectl-lite"}, os.Args[1:]...), " ")
}
