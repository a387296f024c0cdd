package cli

import (
	"fmt"
	"net/url"

	"github.com/spf13/cobra"
)

// DryRun is the --dry-run flag of the verbs that write: "none", "client"
// (send nothing, say what would be done) or "server" (send the request
// with ?dryRun=All, so the server validates and admits it without
// persisting). The zero value behaves as "none".
type DryRun string

// The --dry-run strategies.
const (
	DryRunNone   DryRun = "none"
	DryRunClient DryRun = "client"
	DryRunServer DryRun = "server"
)

// Bind adds --dry-run to cmd; a bare --dry-run means "client", as in
// kubectl.
func (d *DryRun) Bind(cmd *cobra.Command) {
	cmd.Flags().StringVar((*string)(d), "dry-run", string(DryRunNone), `Must be "none", "server", or "client". If client strategy, only print the object that would be sent, without sending it. If server strategy, submit server-side request without persisting the resource.`)
	cmd.Flags().Lookup("dry-run").NoOptDefVal = string(DryRunClient)
}

// Validate refuses a value kubectl refuses, with its message.
func (d DryRun) Validate() error {
	switch d {
	case DryRunNone, DryRunClient, DryRunServer:
		return nil
	}
	return fmt.Errorf(`Invalid dry-run value (%s). Must be "none", "server", or "client".`, string(d))
}

// Suffix is what kubectl appends to a result line: " (dry run)",
// " (server dry run)" or nothing.
func (d DryRun) Suffix() string {
	switch d {
	case DryRunClient:
		return " (dry run)"
	case DryRunServer:
		return " (server dry run)"
	}
	return ""
}

// Query is the query of a write under this strategy: dryRun=All for a
// server dry run, none otherwise.
func (d DryRun) Query() url.Values {
	if d == DryRunServer {
		return url.Values{"dryRun": {"All"}}
	}
	return nil
}
