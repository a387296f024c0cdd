package root_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
)

const ssaDeploy = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: app
        image: nginx:1
        ports:
        - containerPort: 80
`

// managers returns "manager/operation" of every managedFields entry.
func managers(mf []api.ManagedFieldsEntry) string {
	var out []string
	for _, e := range mf {
		s := e.Manager + "/" + string(e.Operation)
		if e.Subresource != "" {
			s += "/" + e.Subresource
		}
		out = append(out, s)
	}
	return strings.Join(out, ",")
}

// TestIntegrationApplyServerSide runs apply --server-side as kubectl does:
// "serverside-applied" lines, the "kubectl" field manager by default, a
// conflict with another manager explained as kubectl explains it, taken
// over with --force-conflicts, --field-manager, a server dry run, the
// flag combinations kubectl refuses, and client-side apply's own manager.
func TestIntegrationApplyServerSide(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()
	deploys := client.Resource[api.Deployment](c.client).Namespace("default")

	if out := c.mustRun(ssaDeploy, "apply", "--server-side", "-f", "-"); out != "deployment.apps/web serverside-applied\n" {
		t.Errorf("apply --server-side = %q", out)
	}
	d, err := deploys.Get(ctx, "web")
	if err != nil {
		t.Fatal(err)
	}
	if got := managers(d.ManagedFields); got != "kubectl/Apply" {
		t.Errorf("managers after apply --server-side: %s", got)
	}
	if out := c.mustRun(ssaDeploy, "apply", "--server-side", "-f", "-"); out != "deployment.apps/web serverside-applied\n" {
		t.Errorf("re-apply = %q", out)
	}

	// Another manager takes the replicas; kubectl's apply then conflicts.
	c.mustRun("", "scale", "deployment/web", "--replicas=5")
	out, errOut, code := c.run(ssaDeploy, "apply", "--server-side", "-f", "-")
	if code != 1 || out != "" || !strings.HasPrefix(errOut, "error: Apply failed with 1 conflict: conflict with ") ||
		!strings.Contains(errOut, ": .spec.replicas\nPlease review the fields above--they currently have other managers.") ||
		!strings.Contains(errOut, "re-run the apply\n  command with the `--force-conflicts` flag.") {
		t.Errorf("conflicting apply: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if d, _ := deploys.Get(ctx, "web"); *d.Spec.Replicas != 5 {
		t.Errorf("a conflicting apply changed replicas to %d", *d.Spec.Replicas)
	}
	if out := c.mustRun(ssaDeploy, "apply", "--server-side", "--force-conflicts", "-f", "-"); out != "deployment.apps/web serverside-applied\n" {
		t.Errorf("apply --force-conflicts = %q", out)
	}
	if d, _ := deploys.Get(ctx, "web"); *d.Spec.Replicas != 2 {
		t.Errorf("replicas %d after --force-conflicts", *d.Spec.Replicas)
	}

	// A server dry run changes nothing; --field-manager names the manager.
	more := strings.Replace(ssaDeploy, "image: nginx:1", "image: nginx:2", 1)
	before, _ := deploys.Get(ctx, "web")
	if out := c.mustRun(more, "apply", "--server-side", "--field-manager=ci", "--force-conflicts", "--dry-run=server", "-f", "-"); out != "deployment.apps/web serverside-applied (server dry run)\n" {
		t.Errorf("server dry run = %q", out)
	}
	if d, _ := deploys.Get(ctx, "web"); d.ResourceVersion != before.ResourceVersion {
		t.Errorf("a server dry run was stored")
	}
	c.mustRun(more, "apply", "--server-side", "--field-manager=ci", "--force-conflicts", "-f", "-")
	if d, _ := deploys.Get(ctx, "web"); !strings.Contains(managers(d.ManagedFields), "ci/Apply") || d.Spec.Template.Spec.Containers[0].Image != "nginx:2" {
		t.Errorf("apply --field-manager=ci: %s %s", managers(d.ManagedFields), d.Spec.Template.Spec.Containers[0].Image)
	}

	// -o yaml leaves managedFields out, as kubectl; get --show-managed-fields keeps them.
	if y := c.mustRun("", "get", "deployment", "web", "-o", "yaml"); strings.Contains(y, "managedFields") {
		t.Errorf("get -o yaml printed managedFields")
	}
	if y := c.mustRun("", "get", "deployment", "web", "-o", "yaml", "--show-managed-fields"); !strings.Contains(y, "managedFields:") || !strings.Contains(y, "manager: ci") {
		t.Errorf("get -o yaml --show-managed-fields:\n%s", y)
	}

	// Flags kubectl refuses together.
	c.wantFailIn(ssaDeploy, "error: --force-conflicts only works with --server-side", "apply", "--force-conflicts", "-f", "-")
	c.wantFailIn(ssaDeploy, "error: --dry-run=client doesn't work with --server-side (did you mean --dry-run=server instead?)",
		"apply", "--server-side", "--dry-run=client", "-f", "-")

	// create writes as kubectl-create, as kubectl does.
	c.mustRun(strings.Replace(oneCM, "name: dry", "name: made", 1), "create", "-f", "-")
	if made, err := client.Resource[api.ConfigMap](c.client).Namespace("default").Get(ctx, "made"); err != nil || managers(made.ManagedFields) != "kubectl-create/Update" {
		t.Errorf("managers after create: %v %v", made, err)
	}

	// Client-side apply writes as kubectl-client-side-apply.
	c.mustRun(oneCM, "apply", "-f", "-")
	cm, err := client.Resource[api.ConfigMap](c.client).Namespace("default").Get(ctx, "dry")
	if err != nil {
		t.Fatal(err)
	}
	if got := managers(cm.ManagedFields); got != "kubectl-client-side-apply/Update" {
		t.Errorf("managers after client-side apply: %s", got)
	}
	// ... and server-side apply with the default manager takes over from it.
	if out := c.mustRun(strings.Replace(oneCM, `a: "1"`, `a: "2"`, 1), "apply", "--server-side", "-f", "-"); out != "configmap/dry serverside-applied\n" {
		t.Errorf("server-side apply after client-side apply = %q", out)
	}
	cm, _ = client.Resource[api.ConfigMap](c.client).Namespace("default").Get(ctx, "dry")
	if cm.Data["a"] != "2" || !strings.Contains(cm.Annotations[api.LastAppliedConfigAnnotation], `"a":"2"`) {
		t.Errorf("after migration: data %v, last-applied %s", cm.Data, cm.Annotations[api.LastAppliedConfigAnnotation])
	}
}

// TestIntegrationRealKubectlServerSide runs the real kubectl v1.37's
// server-side apply against the apiserver: create, conflict with another
// manager and --force-conflicts, and the move from client-side apply, in
// which kubectl rewrites managedFields with a JSON patch and the server
// keeps the last-applied annotation in step.
func TestIntegrationRealKubectlServerSide(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()
	deploys := client.Resource[api.Deployment](c.client).Namespace("default")
	file := filepath.Join(t.TempDir(), "web.yaml")
	writeManifest := func(s string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	kubectl := func(args ...string) (string, string, error) {
		t.Helper()
		out, errOut, code := c.kubectl(args...)
		if code != 0 {
			return out, errOut, fmt.Errorf("exit status %d", code)
		}
		return out, errOut, nil
	}
	writeManifest(ssaDeploy)
	if out, errOut, err := kubectl("apply", "--server-side", "-f", file); err != nil || out != "deployment.apps/web serverside-applied\n" {
		t.Fatalf("kubectl apply --server-side: %v %q %q", err, out, errOut)
	}
	if out, errOut, err := kubectl("scale", "deployment/web", "--replicas=4"); err != nil {
		t.Fatalf("kubectl scale: %v %q %q", err, out, errOut)
	}
	_, errOut, err := kubectl("apply", "--server-side", "-f", file)
	if err == nil || !strings.HasPrefix(errOut, `error: Apply failed with 1 conflict: conflict with "kubectl" with subresource "scale" using apps/v1: .spec.replicas`) {
		t.Errorf("conflicting kubectl apply: %v %q", err, errOut)
	}
	if out, errOut, err := kubectl("apply", "--server-side", "--force-conflicts", "-f", file); err != nil || out != "deployment.apps/web serverside-applied\n" {
		t.Fatalf("kubectl apply --force-conflicts: %v %q %q", err, out, errOut)
	}
	if d, _ := deploys.Get(ctx, "web"); *d.Spec.Replicas != 2 {
		t.Errorf("replicas %d after --force-conflicts", *d.Spec.Replicas)
	}

	// Client-side apply, then server-side apply: kubectl migrates the
	// client-side manager's fields to its own and nothing conflicts.
	csa := strings.Replace(ssaDeploy, "name: web", "name: csa", 1)
	writeManifest(csa)
	if out, errOut, err := kubectl("apply", "-f", file); err != nil || out != "deployment.apps/csa created\n" {
		t.Fatalf("kubectl apply: %v %q %q", err, out, errOut)
	}
	writeManifest(strings.Replace(csa, "replicas: 2", "replicas: 3", 1))
	if out, errOut, err := kubectl("apply", "--server-side", "-f", file); err != nil || out != "deployment.apps/csa serverside-applied\n" || errOut != "" {
		t.Fatalf("kubectl apply --server-side after client-side apply: %v %q %q", err, out, errOut)
	}
	d, err := deploys.Get(ctx, "csa")
	if err != nil {
		t.Fatal(err)
	}
	if *d.Spec.Replicas != 3 || !strings.Contains(d.Annotations[api.LastAppliedConfigAnnotation], `"replicas":3`) {
		t.Errorf("after the move: replicas %d, last-applied %s", *d.Spec.Replicas, d.Annotations[api.LastAppliedConfigAnnotation])
	}
	if got := managers(d.ManagedFields); strings.Contains(got, "kubectl-client-side-apply") || !strings.Contains(got, "kubectl/Apply") {
		t.Errorf("managers after the move: %s", got)
	}
	// A field dropped from the configuration is now removed.
	writeManifest(strings.Replace(strings.Replace(csa, "replicas: 2", "replicas: 3", 1), "        ports:\n        - containerPort: 80\n", "", 1))
	if _, errOut, err := kubectl("apply", "--server-side", "-f", file); err != nil {
		t.Fatalf("re-apply: %v %q", err, errOut)
	}
	if d, _ := deploys.Get(ctx, "csa"); len(d.Spec.Template.Spec.Containers[0].Ports) != 0 {
		t.Errorf("ports kept after removal from the configuration: %+v", d.Spec.Template.Spec.Containers[0].Ports)
	}
}
