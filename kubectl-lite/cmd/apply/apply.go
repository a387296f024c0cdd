package apply

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/patch"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/manifest"
	"github.com/minik8s/minik8s/kubectl-lite/printers"
	"github.com/minik8s/minik8s/kubectl-lite/resource"
)

// LastAppliedAnnotation holds the manifest last applied, the "original" of
// the next three-way merge.
const LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// Files are the -f and -R flags of the verbs reading manifests.
type Files struct {
	Filenames []string
	Recursive bool
}

func (f *Files) bind(cmd *cobra.Command, what string) {
	cmd.Flags().StringSliceVarP(&f.Filenames, "filename", "f", nil, "The files that contain the configurations to "+what+".")
	cmd.Flags().BoolVarP(&f.Recursive, "recursive", "R", false, "Process the directory used in -f, --filename recursively.")
}

// DryRun is the --dry-run flag: "none", "client" or "server".
type DryRun string

func (d *DryRun) bind(cmd *cobra.Command) {
	cmd.Flags().StringVar((*string)(d), "dry-run", "none", `Must be "none", "server", or "client". If client strategy, only print the object that would be sent, without sending it. If server strategy, submit server-side request without persisting the resource.`)
	cmd.Flags().Lookup("dry-run").NoOptDefVal = "client"
}

func (d DryRun) validate() error {
	switch d {
	case "none", "client", "server":
		return nil
	}
	return fmt.Errorf(`Invalid dry-run value (%s). Must be "none", "server", or "client".`, string(d))
}

// suffix is what kubectl appends to a result line.
func (d DryRun) suffix() string {
	switch d {
	case "client":
		return " (dry run)"
	case "server":
		return " (server dry run)"
	}
	return ""
}

// writer sends the writes of apply, create and replace, with ?dryRun=All
// for a server dry run and not at all for a client one. It keeps the
// server's answer to the last write (or, for unchanged objects, the live
// object) for -o.
type writer struct {
	c    *client.Client
	dry  DryRun
	resp []byte
}

func (w *writer) send(ctx context.Context, method string, o manifest.Object, name, contentType string, body []byte) ([]byte, error) {
	if w.dry == "client" {
		return nil, nil
	}
	var q url.Values
	if w.dry == "server" {
		q = url.Values{"dryRun": {"All"}}
	}
	resp, err := w.c.Do(ctx, client.Request{Method: method, Path: client.ResourcePath(o.Info, o.Namespace(), name),
		Query: q, Body: body, ContentType: contentType})
	if err == nil {
		w.resp = resp
	}
	return resp, err
}

// create POSTs body and returns the name the server gave the object (the
// manifest's, or one made from generateName).
func (w *writer) create(ctx context.Context, o manifest.Object, body []byte) (string, error) {
	resp, err := w.send(ctx, http.MethodPost, o, "", "", body)
	if err != nil {
		return "", err
	}
	var created struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if json.Unmarshal(resp, &created) == nil && created.Metadata.Name != "" {
		return created.Metadata.Name, nil
	}
	return o.Name(), nil
}

func (w *writer) patch(ctx context.Context, o manifest.Object, body []byte) error {
	_, err := w.send(ctx, http.MethodPatch, o, o.Name(), string(client.StrategicMergePatchType), body)
	return err
}

func (w *writer) replace(ctx context.Context, o manifest.Object, body []byte) error {
	_, err := w.send(ctx, http.MethodPut, o, o.Name(), "", body)
	return err
}

// NewCommand returns the apply command.
func NewCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		f      Files
		dryRun DryRun
		output string
	)
	cmd := &cobra.Command{
		Use:   "apply -f FILENAME",
		Short: "Apply a configuration to a resource by file name or stdin",
		Long: `Apply a configuration to a resource by file name or stdin.

Objects that do not exist are created. Existing ones are patched with a
three-way merge of the last applied configuration (kept in the
kubectl.kubernetes.io/last-applied-configuration annotation), the new
manifest and the live object: fields removed from the manifest are removed,
fields set by others are kept. JSON and YAML formats are accepted.`,
		Example: `  kubectl-lite apply -f ./deploy.yaml
  kubectl-lite apply -R -f ./manifests/
  cat pod.json | kubectl-lite apply -f -
  kubectl-lite apply -f deploy.yaml --dry-run=server`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := dryRun.validate(); err != nil {
				return err
			}
			if err := validOutput(output); err != nil {
				return err
			}
			objs, err := Objects(streams, g, f)
			if err != nil {
				return err
			}
			c, err := g.Client()
			if err != nil {
				return err
			}
			w := &writer{c: c, dry: dryRun}
			return each(streams, "apply", objs, output, w, func(o manifest.Object) (string, error) {
				return applyOne(cmd.Context(), c, w, o, streams.ErrOut)
			})
		},
	}
	f.bind(cmd, "apply")
	dryRun.bind(cmd)
	bindOutput(cmd, &output)
	return cmd
}

// NewCreateCommand returns "create -f".
func NewCreateCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		f          Files
		dryRun     DryRun
		saveConfig bool
		output     string
	)
	cmd := &cobra.Command{
		Use:   "create -f FILENAME",
		Short: "Create a resource from a file or from stdin",
		Long:  "Create a resource from a file or from stdin. JSON and YAML formats are accepted; an existing object is an error.",
		Example: `  kubectl-lite create -f ./pod.yaml
  cat pod.json | kubectl-lite create -f -`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := dryRun.validate(); err != nil {
				return err
			}
			if err := validOutput(output); err != nil {
				return err
			}
			objs, err := Objects(streams, g, f)
			if err != nil {
				return err
			}
			c, err := g.Client()
			if err != nil {
				return err
			}
			w := &writer{c: c, dry: dryRun}
			return each(streams, "create", objs, output, w, func(o manifest.Object) (string, error) {
				if saveConfig {
					b, err := withLastApplied(o.Object)
					if err != nil {
						return "", err
					}
					var withAnn map[string]any
					if err := json.Unmarshal(b, &withAnn); err != nil {
						return "", fmt.Errorf("encode %s: %w", o.Name(), err)
					}
					// Same map, so the caller's object sees the change.
					for k := range o.Object {
						delete(o.Object, k)
					}
					for k, v := range withAnn {
						o.Object[k] = v
					}
				}
				body, err := json.Marshal(o.Object)
				if err != nil {
					return "", fmt.Errorf("encode %s: %w", o.Name(), err)
				}
				name, err := w.create(cmd.Context(), o, body)
				if err != nil {
					return "", cli.AddSource("creating", o.Source, err)
				}
				if name != "" {
					o.SetName(name)
				}
				return "created" + dryRun.suffix(), nil
			})
		},
	}
	f.bind(cmd, "create")
	dryRun.bind(cmd)
	bindOutput(cmd, &output)
	addGenerators(cmd, streams, g)
	cmd.Flags().BoolVar(&saveConfig, "save-config", false, "If true, the configuration of current object will be saved in its annotation. Otherwise, the annotation will be unchanged. This flag is useful when you want to perform kubectl apply on this object in the future.")
	return cmd
}

// NewReplaceCommand returns "replace -f": a PUT of each object as given,
// or with --force a delete and re-create.
func NewReplaceCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		f      Files
		dryRun DryRun
		force  bool
		output string
	)
	cmd := &cobra.Command{
		Use:   "replace -f FILENAME",
		Short: "Replace a resource by file name or stdin",
		Long: `Replace a resource by file name or stdin.

The whole object is replaced by the manifest: fields it leaves out are
cleared. The object must exist. With --force it is deleted and re-created.`,
		Example: `  kubectl-lite replace -f ./pod.json
  kubectl-lite get pod mypod -o yaml | sed 's/v1/v2/' | kubectl-lite replace -f -`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := dryRun.validate(); err != nil {
				return err
			}
			if err := validOutput(output); err != nil {
				return err
			}
			objs, err := Objects(streams, g, f)
			if err != nil {
				return err
			}
			c, err := g.Client()
			if err != nil {
				return err
			}
			w := &writer{c: c, dry: dryRun}
			ctx := cmd.Context()
			return each(streams, "replace", objs, output, w, func(o manifest.Object) (string, error) {
				res, err := replaceOne(ctx, c, w, o, force)
				return res, cli.AddSource("replacing", o.Source, err)
			})
		},
	}
	f.bind(cmd, "replace")
	dryRun.bind(cmd)
	bindOutput(cmd, &output)
	cmd.Flags().BoolVar(&force, "force", false, "If true, immediately remove resources from API and bypass graceful deletion, then re-create them.")
	return cmd
}

// replaceOne PUTs o over the live object, or with force deletes it and
// creates o.
func replaceOne(ctx context.Context, c *client.Client, w *writer, o manifest.Object, force bool) (string, error) {
	if o.Name() == "" {
		return "", errors.New("resource name may not be empty")
	}
	suffix := w.dry.suffix()
	d := c.Dynamic(o.Info).Namespace(o.Namespace())
	live, err := d.Get(ctx, o.Name())
	if err != nil {
		return "", err
	}
	if force {
		if w.dry == "none" {
			if err := d.Delete(ctx, o.Name(), nil); err != nil {
				return "", err
			}
			if err := resource.WaitGone(ctx, d, o.Name(), resource.UID(live)); err != nil {
				return "", err
			}
		}
		body, err := json.Marshal(o.Object)
		if err != nil {
			return "", fmt.Errorf("encode %s: %w", o.Name(), err)
		}
		if _, err := w.create(ctx, o, body); err != nil {
			return "", err
		}
		return "replaced" + suffix, nil
	}
	obj := o.Object
	md, _ := obj["metadata"].(map[string]any)
	if md != nil && md["resourceVersion"] == nil {
		// Replace the version read just now, so a concurrent change is a
		// Conflict rather than lost.
		md["resourceVersion"] = live.GetResourceVersion()
	}
	body, err := json.Marshal(obj)
	if err != nil {
		return "", fmt.Errorf("encode %s: %w", o.Name(), err)
	}
	if err := w.replace(ctx, o, body); err != nil {
		return "", err
	}
	return "replaced" + suffix, nil
}

// Refs are the objects -f names, read as Objects does, for verbs that act
// on the live objects rather than send the manifests.
func Refs(streams cli.Streams, g *cli.Globals, f Files) ([]resource.Ref, error) {
	objs, err := Objects(streams, g, f)
	if err != nil {
		return nil, err
	}
	refs := make([]resource.Ref, 0, len(objs))
	for _, o := range objs {
		refs = append(refs, resource.Ref{Info: o.Info, Namespace: o.Namespace(), Name: o.Name()})
	}
	return refs, nil
}

// Objects reads the -f objects and gives namespaced ones the namespace of
// -n or the context, refusing a manifest namespace that contradicts -n.
func Objects(streams cli.Streams, g *cli.Globals, f Files) ([]manifest.Object, error) {
	objs, err := manifest.Read(f.Filenames, f.Recursive, streams.In)
	if err != nil {
		return nil, err
	}
	ns, err := g.DefaultNamespace()
	if err != nil {
		return nil, err
	}
	for _, o := range objs {
		if !o.Info.Namespaced {
			continue
		}
		switch {
		case o.Namespace() == "":
			o.SetNamespace(ns)
		case g.Namespace != "" && o.Namespace() != g.Namespace:
			return nil, fmt.Errorf("the namespace from the provided object %q does not match the namespace %q. You must pass '--namespace=%s' to perform this operation.",
				o.Namespace(), g.Namespace, o.Namespace())
		}
	}
	return objs, nil
}

func bindOutput(cmd *cobra.Command, v *string) {
	cmd.Flags().StringVarP(v, "output", "o", "", "Output format. One of: (json, yaml, name).")
}

func validOutput(o string) error {
	switch o {
	case "", "json", "yaml", "name":
		return nil
	}
	return fmt.Errorf("unable to match a printer suitable for the output format %q, allowed formats are: json,name,yaml", o)
}

// each runs fn on every object, printing "kind.group/name RESULT" for
// successes (or, with -o, the object as the server returned it). It goes
// on after a failure, as kubectl does, so the output says which objects
// were changed; every failure but the last is printed here and the last is
// returned for the exit path.
func each(streams cli.Streams, verb string, objs []manifest.Object, output string, w *writer, fn func(manifest.Object) (string, error)) error {
	if len(objs) == 0 {
		return fmt.Errorf("no objects passed to %s", verb)
	}
	var last error
	printed := 0
	for _, o := range objs {
		w.resp = nil
		result, err := fn(o)
		if err != nil {
			if last != nil {
				fmt.Fprintln(streams.ErrOut, cli.FormatError(last))
			}
			last = err
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
			if w.resp != nil {
				var m map[string]any
				dec := json.NewDecoder(bytes.NewReader(w.resp))
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
	return last
}

// applyOne creates o when missing, else patches the live object with the
// three-way merge of last-applied, o and live.
func applyOne(ctx context.Context, c *client.Client, w *writer, o manifest.Object, warn io.Writer) (string, error) {
	if o.Name() == "" {
		if o.GenerateName() != "" {
			return "", fmt.Errorf("from %s: cannot use generate name with apply", o.Source)
		}
		return "", errors.New("resource name may not be empty")
	}
	suffix := w.dry.suffix()
	modified, err := withLastApplied(o.Object)
	if err != nil {
		return "", err
	}
	d := c.Dynamic(o.Info).Namespace(o.Namespace())
	live, err := d.Get(ctx, o.Name())
	if apierrors.IsNotFound(err) {
		if _, err := w.create(ctx, o, modified); err != nil {
			return "", cli.AddSource("creating", o.Source, err)
		}
		return "created" + suffix, nil
	}
	if err != nil {
		return "", cli.AddSource("retrieving current configuration of", o.Source, err)
	}
	if w.dry == "client" {
		// As kubectl: a client dry run does not compute the patch, so an
		// existing object is always reported as configured.
		return "configured" + suffix, nil
	}
	current, err := json.Marshal(live)
	if err != nil {
		return "", fmt.Errorf("encode live %s: %w", o.Name(), err)
	}
	original := []byte("{}")
	md, _ := live.Object["metadata"].(map[string]any)
	ann, _ := md["annotations"].(map[string]any)
	if last, _ := ann[LastAppliedAnnotation].(string); last != "" {
		original = []byte(last)
	} else {
		fmt.Fprintf(warn, "Warning: resource %s/%s is missing the %s annotation which is required by kubectl-lite apply. kubectl-lite apply should only be used on resources created declaratively by either kubectl-lite create --save-config or kubectl-lite apply. The missing annotation will be patched automatically.\n",
			objectResource(o.Info), o.Name(), LastAppliedAnnotation)
	}
	p, err := patch.CreateThreeWayStrategicMergePatch(original, modified, current, patch.KubernetesSchema(o.Info.Kind))
	if err != nil {
		return "", fmt.Errorf("creating patch with:\noriginal:\n%s\nmodified:\n%s\ncurrent:\n%s\nfor: %q: %w", original, modified, current, o.Source, err)
	}
	if isEmptyPatch(p) {
		w.resp = current
		return "unchanged" + suffix, nil
	}
	if err := w.patch(ctx, o, p); err != nil {
		return "", cli.AddSource("patching", o.Source, err)
	}
	return "configured" + suffix, nil
}

// objectResource is kubectl's "resource.group" of an object name in
// messages: "deployments.apps", "pods".
func objectResource(info api.ResourceInfo) string {
	if info.Group == "" {
		return info.Resource
	}
	return info.Resource + "." + info.Group
}

// withLastApplied returns obj as JSON with the last-applied annotation set
// to obj itself (without that annotation), as kubectl stores it.
func withLastApplied(obj map[string]any) ([]byte, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode manifest: %w", err)
	}
	var cp map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&cp); err != nil {
		return nil, fmt.Errorf("copy manifest: %w", err)
	}
	md, _ := cp["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		cp["metadata"] = md
	}
	// kubectl records the manifest with an (often empty) annotations map:
	// the same bytes here keep the two tools' applies interchangeable.
	ann, _ := md["annotations"].(map[string]any)
	if ann == nil {
		ann = map[string]any{}
	}
	delete(ann, LastAppliedAnnotation)
	md["annotations"] = ann
	last, err := json.Marshal(cp)
	if err != nil {
		return nil, fmt.Errorf("encode manifest: %w", err)
	}
	ann[LastAppliedAnnotation] = string(last) + "\n"
	md["annotations"] = ann
	return json.Marshal(cp)
}

func isEmptyPatch(p []byte) bool {
	var m map[string]any
	return json.Unmarshal(p, &m) == nil && len(m) == 0
}
