package manifest

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/resource"
)

// Files are the -f and -R flags of the verbs that read manifests.
type Files struct {
	Filenames []string
	Recursive bool
}

// Bind adds -f (described by usage, which each verb words as kubectl
// does) and -R to cmd.
func (f *Files) Bind(cmd *cobra.Command, usage string) {
	cmd.Flags().StringSliceVarP(&f.Filenames, "filename", "f", nil, usage)
	cmd.Flags().BoolVarP(&f.Recursive, "recursive", "R", false, "Process the directory used in -f, --filename recursively.")
}

// Objects reads the -f objects and gives namespaced ones the namespace of
// -n or the context, refusing a manifest namespace that contradicts -n.
func (f Files) Objects(streams cli.Streams, g *cli.Globals) ([]Object, error) {
	objs, err := Read(f.Filenames, f.Recursive, streams.In)
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

// Refs are the objects -f names, read as Objects does, for verbs that act
// on the live objects rather than send the manifests (get, describe,
// patch, scale, wait).
func (f Files) Refs(streams cli.Streams, g *cli.Globals) ([]resource.Ref, error) {
	objs, err := f.Objects(streams, g)
	if err != nil {
		return nil, err
	}
	refs := make([]resource.Ref, 0, len(objs))
	for _, o := range objs {
		refs = append(refs, o.Ref())
	}
	return refs, nil
}
