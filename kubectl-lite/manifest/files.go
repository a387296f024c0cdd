package manifest

import (
	"context"
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
// -n or the context, refusing a manifest namespace that contradicts -n. A
// kind that is neither built in nor served is an error.
func (f Files) Objects(ctx context.Context, streams cli.Streams, g *cli.Globals) ([]Object, error) {
	objs, unmapped, err := f.Mapped(ctx, streams, g)
	if err != nil {
		return nil, err
	}
	if len(unmapped) > 0 {
		return nil, unmapped[0]
	}
	return objs, nil
}

// Mapped is Objects that goes on past the objects whose kind the server
// does not serve, returning kubectl's mapping error for each, for the
// verbs that act on the rest (apply, create, replace, delete).
func (f Files) Mapped(ctx context.Context, streams cli.Streams, g *cli.Globals) ([]Object, []error, error) {
	read, err := Read(f.Filenames, f.Recursive, streams.In)
	if err != nil {
		return nil, nil, err
	}
	objs, unmapped := read, []error(nil)
	for _, o := range read {
		if !o.Resolved() {
			m, err := g.Mapper(ctx)
			if err != nil {
				return nil, nil, err
			}
			objs, unmapped = Resolve(read, m.FindKind)
			break
		}
	}
	ns, err := g.DefaultNamespace()
	if err != nil {
		return nil, nil, err
	}
	for _, o := range objs {
		if !o.Info.Namespaced {
			continue
		}
		switch {
		case o.Namespace() == "":
			o.SetNamespace(ns)
		case g.Namespace != "" && o.Namespace() != g.Namespace:
			return nil, nil, fmt.Errorf("the namespace from the provided object %q does not match the namespace %q. You must pass '--namespace=%s' to perform this operation.",
				o.Namespace(), g.Namespace, o.Namespace())
		}
	}
	return objs, unmapped, nil
}

// Refs are the objects -f names, read as Objects does, for verbs that act
// on the live objects rather than send the manifests (get, describe,
// patch, scale, wait).
func (f Files) Refs(ctx context.Context, streams cli.Streams, g *cli.Globals) ([]resource.Ref, error) {
	objs, err := f.Objects(ctx, streams, g)
	if err != nil {
		return nil, err
	}
	refs := make([]resource.Ref, 0, len(objs))
	for _, o := range objs {
		refs = append(refs, o.Ref())
	}
	return refs, nil
}
