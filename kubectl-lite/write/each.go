package write

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/manifest"
	"github.com/minik8s/minik8s/kubectl-lite/printers"
)

// BindOutput adds the -o flag of the verbs that write: json, yaml or name.
func BindOutput(cmd *cobra.Command, v *string) {
	cmd.Flags().StringVarP(v, "output", "o", "", "Output format. One of: (json, yaml, name).")
}

// ValidOutput refuses an -o format the verbs that write do not print.
func ValidOutput(o string) error {
	switch o {
	case "", "json", "yaml", "name":
		return nil
	}
	return fmt.Errorf("unable to match a printer suitable for the output format %q, allowed formats are: json,name,yaml", o)
}

// Flags are the flags of the verbs that send the -f manifests (apply,
// create, replace): -f/-R, --dry-run and -o.
type Flags struct {
	Files  manifest.Files
	DryRun cli.DryRun
	Output string
}

// Bind adds the flags to cmd; verb words -f's help.
func (f *Flags) Bind(cmd *cobra.Command, verb string) {
	f.Files.Bind(cmd, "The files that contain the configurations to "+verb+".")
	f.DryRun.Bind(cmd)
	BindOutput(cmd, &f.Output)
}

// Each validates the flags, reads the -f objects and runs fn on each with
// one Writer under --dry-run, reporting as each does.
func (f *Flags) Each(ctx context.Context, streams cli.Streams, g *cli.Globals, verb string, fn func(c *client.Client, w *Writer, o manifest.Object) (string, error)) error {
	if err := f.DryRun.Validate(); err != nil {
		return err
	}
	if err := ValidOutput(f.Output); err != nil {
		return err
	}
	// Objects of kinds the server does not serve fail first, and the rest
	// are sent, as kubectl's builder maps every object before any is sent.
	objs, unmapped, err := f.Files.Mapped(ctx, streams, g)
	if err != nil {
		return err
	}
	c, err := g.Client()
	if err != nil {
		return err
	}
	w := New(c, f.DryRun)
	// kubectl's field manager of the verb ("kubectl-create",
	// "kubectl-replace"); apply names its own.
	w.SetFieldManager("kubectl-" + verb)
	return each(streams, verb, objs, unmapped, f.Output, w, func(o manifest.Object) (string, error) { return fn(c, w, o) })
}

// each runs fn on every object, printing "kind.group/name RESULT" for
// successes (or, with -o, the object as the server returned it). It goes
// on after a failure, as kubectl does, so the output says which objects
// were changed; every failure but the last is printed here and the last is
// returned for the exit path.
func each(streams cli.Streams, verb string, objs []manifest.Object, unmapped []error, output string, w *Writer, fn func(manifest.Object) (string, error)) error {
	if len(objs) == 0 && len(unmapped) == 0 {
		return fmt.Errorf("no objects passed to %s", verb)
	}
	failures := cli.Failures{Out: streams.ErrOut}
	for _, err := range unmapped {
		failures.Add(err)
	}
	printed := 0
	for _, o := range objs {
		w.SetResult(nil)
		result, err := fn(o)
		if err != nil {
			failures.Add(err)
			continue
		}
		name := printers.ResourceName(o.Info.Kind, o.Info.Group) + "/" + o.Name()
		switch output {
		case "":
			fmt.Fprintf(streams.Out, "%s %s\n", name, result)
		case "name":
			fmt.Fprintln(streams.Out, name)
		default:
			obj := o.Object
			if sent := w.Result(); sent != nil {
				var m map[string]any
				dec := json.NewDecoder(bytes.NewReader(sent))
				dec.UseNumber()
				if err := dec.Decode(&m); err == nil {
					obj = m
				}
			}
			if output == "yaml" && printed > 0 {
				fmt.Fprintln(streams.Out, "---")
			}
			if err := printers.PrintObjects(streams.Out, output, []printers.Obj{obj}, false); err != nil {
				return err
			}
		}
		printed++
	}
	return failures.Last()
}
