package applyobject

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/patch"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/manifest"
	"github.com/minik8s/minik8s/kubectl-lite/resource"
	"github.com/minik8s/minik8s/kubectl-lite/write"
)

// The field managers kubectl apply writes under, unless --field-manager
// names one.
const (
	// FieldManagerClientSideApply is client-side apply's.
	FieldManagerClientSideApply = "kubectl-client-side-apply"
	// FieldManagerServerSideApply is server-side apply's: "kubectl", which
	// the apiserver keeps the last-applied annotation up to date for.
	FieldManagerServerSideApply = "kubectl"
)

// conflictHelp follows a conflict of a server-side apply, as kubectl words it.
const conflictHelp = `
Please review the fields above--they currently have other managers. Here
are the ways you can resolve this warning:
* If you intend to manage all of these fields, please re-run the apply
  command with the ` + "`--force-conflicts`" + ` flag.
* If you do not intend to manage all of the fields, please edit your
  manifest to remove references to the fields that should keep their
  current managers.
* You may co-own fields by updating your manifest to match the existing
  value; in this case, you'll become the manager if the other manager(s)
  stop managing the field (remove it from their configuration).
See https://kubernetes.io/docs/reference/using-api/server-side-apply/#conflicts`

// ServerSide sends o whole as a server-side apply and says
// "serverside-applied" (with the dry-run suffix). A conflict is explained
// as kubectl explains it.
func ServerSide(ctx context.Context, w *write.Writer, o manifest.Object, force bool) (string, error) {
	if o.Name() == "" {
		if o.GenerateName() != "" {
			return "", fmt.Errorf("from %s: cannot use generate name with apply", o.GenerateName())
		}
		return "", errors.New("resource name may not be empty")
	}
	data, err := json.Marshal(o.Object)
	if err != nil {
		return "", cli.AddSource("serverside-apply", o.Source, err)
	}
	if err := w.Apply(ctx, o, data, force); err != nil {
		if apierrors.IsConflict(err) {
			return "", fmt.Errorf("%v%s", err, conflictHelp)
		}
		return "", err
	}
	return "serverside-applied" + w.DryRun().Suffix(), nil
}

// ClientSide applies o: it creates o when missing, else patches the live object
// with the three-way merge of last-applied, o and live, and says which
// ("created", "configured", "unchanged", with the dry-run suffix).
// Warnings (a live object without the last-applied annotation) go to warn.
func ClientSide(ctx context.Context, c *client.Client, w *write.Writer, o manifest.Object, warn io.Writer) (string, error) {
	if o.Name() == "" {
		if o.GenerateName() != "" {
			return "", fmt.Errorf("from %s: cannot use generate name with apply", o.Source)
		}
		return "", errors.New("resource name may not be empty")
	}
	suffix := w.DryRun().Suffix()
	modified, err := manifest.WithLastApplied(o.Object)
	if err != nil {
		return "", err
	}
	d := c.Dynamic(o.Info).Namespace(o.Namespace())
	live, err := d.Get(ctx, o.Name())
	if apierrors.IsNotFound(err) {
		if _, err := w.Create(ctx, o, modified); err != nil {
			return "", cli.AddSource("creating", o.Source, err)
		}
		return "created" + suffix, nil
	}
	if err != nil {
		return "", cli.AddSource("retrieving current configuration of", o.Source, err)
	}
	if w.DryRun() == cli.DryRunClient {
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
	if last, _ := ann[api.LastAppliedConfigAnnotation].(string); last != "" {
		original = []byte(last)
	} else {
		fmt.Fprintf(warn, "Warning: resource %s/%s is missing the %s annotation which is required by kubectl-lite apply. kubectl-lite apply should only be used on resources created declaratively by either kubectl-lite create --save-config or kubectl-lite apply. The missing annotation will be patched automatically.\n",
			objectResource(o.Info), o.Name(), api.LastAppliedConfigAnnotation)
	}
	// kubectl patches the kinds it knows strategically and any other (a
	// custom resource) with a JSON merge patch.
	pt := client.StrategicMergePatchType
	var p []byte
	if resource.BuiltIn(o.Info) {
		p, err = patch.CreateThreeWayStrategicMergePatch(original, modified, current, patch.KubernetesSchema(o.Info.Kind))
	} else {
		pt = client.MergePatchType
		p, err = patch.CreateThreeWayMergePatch(original, modified, current)
	}
	if err != nil {
		return "", fmt.Errorf("creating patch with:\noriginal:\n%s\nmodified:\n%s\ncurrent:\n%s\nfor: %q: %w", original, modified, current, o.Source, err)
	}
	if isEmptyPatch(p) {
		w.SetResult(current)
		return "unchanged" + suffix, nil
	}
	if err := w.Patch(ctx, o, pt, p); err != nil {
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

func isEmptyPatch(p []byte) bool {
	var m map[string]any
	return json.Unmarshal(p, &m) == nil && len(m) == 0
}
