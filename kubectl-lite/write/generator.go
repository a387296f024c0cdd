package write

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/manifest"
	"github.com/minik8s/minik8s/kubectl-lite/printers"
)

// Generator is what every command that builds one object from its flags
// shares ("create KIND NAME", run, expose): --dry-run, -o and the create
// itself.
type Generator struct {
	DryRun cli.DryRun
	Output string
	// Verb is the result word, "created" unless set ("exposed").
	Verb string
	// Failed, when set, is what a failed create's error starts with, the
	// server's message after it ("failed to create configmap: "): kubectl's
	// create KIND commands say so, as a plain "error:", where run, expose
	// and create namespace pass the server's error on.
	Failed string
	// FieldManager is --field-manager, the manager the server records
	// for the fields the create sets ("kubectl-create" by default).
	FieldManager string
}

// Bind adds --dry-run and -o to cmd.
func (gen *Generator) Bind(cmd *cobra.Command) {
	gen.DryRun.Bind(cmd)
	BindOutput(cmd, &gen.Output)
	// kubectl's managers: kubectl-run and kubectl-expose for those
	// commands, kubectl-create for the create generators.
	manager := "kubectl-create"
	if cmd.Name() == "run" || cmd.Name() == "expose" {
		manager = "kubectl-" + cmd.Name()
	}
	cmd.Flags().StringVar(&gen.FieldManager, "field-manager", manager, "Name of the manager used to track field ownership.")
}

// Create creates obj (or only prints it with --dry-run=client) and reports
// it as kubectl does: "KIND/NAME created", or the object in the -o format.
func (gen *Generator) Create(cmd *cobra.Command, streams cli.Streams, g *cli.Globals, obj map[string]any) error {
	if err := gen.DryRun.Validate(); err != nil {
		return err
	}
	if err := ValidOutput(gen.Output); err != nil {
		return err
	}
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	info, ok := api.LookupKind(apiVersion, kind)
	if !ok {
		return fmt.Errorf("no matches for kind %q in version %q", kind, apiVersion)
	}
	o := manifest.Object{Info: info, Object: obj}
	if info.Namespaced {
		ns, err := g.DefaultNamespace()
		if err != nil {
			return err
		}
		o.SetNamespace(ns)
	}
	body, err := json.Marshal(obj)
	if err != nil {
		return fmt.Errorf("encode %s: %w", o.Name(), err)
	}
	result := obj
	if gen.DryRun == cli.DryRunClient && g.Namespace == "" {
		// kubectl prints a client dry run without the namespace it was
		// not told explicitly, so the output applies to any namespace.
		md, _ := obj["metadata"].(map[string]any)
		delete(md, "namespace")
	}
	if gen.DryRun != cli.DryRunClient {
		c, err := g.Client()
		if err != nil {
			return err
		}
		w := New(c, gen.DryRun)
		if gen.FieldManager == "" {
			gen.FieldManager = "kubectl-create"
		}
		w.SetFieldManager(gen.FieldManager)
		resp, err := w.send(cmd.Context(), http.MethodPost, o, "", "", body, nil)
		if err != nil && gen.Failed != "" {
			return errors.New(gen.Failed + err.Error())
		}
		if err != nil {
			return err
		}
		dec := json.NewDecoder(bytes.NewReader(resp))
		dec.UseNumber()
		if err := dec.Decode(&result); err != nil {
			return fmt.Errorf("decode created %s: %w", o.Name(), err)
		}
	}
	name := printers.ResourceName(info.Kind, info.Group) + "/" + manifest.Object{Object: result}.Name()
	switch gen.Output {
	case "":
		verb := gen.Verb
		if verb == "" {
			verb = "created"
		}
		fmt.Fprintf(streams.Out, "%s %s%s\n", name, verb, gen.DryRun.Suffix())
		return nil
	case "name":
		fmt.Fprintln(streams.Out, name)
		return nil
	}
	var buf bytes.Buffer
	if err := printers.PrintGenerated(&buf, gen.Output, result); err != nil {
		return err
	}
	_, err = streams.Out.Write(buf.Bytes())
	return err
}
