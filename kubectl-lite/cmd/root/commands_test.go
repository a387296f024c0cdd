package root_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
)

const oneCM = `apiVersion: v1
kind: ConfigMap
metadata:
  name: dry
  labels: {app: web}
data:
  a: "1"
`

func TestIntegrationDryRun(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()
	cms := client.Resource[api.ConfigMap](c.client).Namespace("default")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"apply", "-f", "-", "--dry-run=client"}, "configmap/dry created (dry run)\n"},
		{[]string{"apply", "-f", "-", "--dry-run=server"}, "configmap/dry created (server dry run)\n"},
		{[]string{"create", "-f", "-", "--dry-run=server"}, "configmap/dry created (server dry run)\n"},
		{[]string{"create", "-f", "-", "--dry-run"}, "configmap/dry created (dry run)\n"},
	} {
		if out := c.mustRun(oneCM, tc.args...); out != tc.want {
			t.Errorf("%v = %q, want %q", tc.args, out, tc.want)
		}
		if _, err := cms.Get(ctx, "dry"); !apierrors.IsNotFound(err) {
			t.Fatalf("after %v the object exists (err %v)", tc.args, err)
		}
	}
	// A server dry run is checked by the server: an invalid object fails.
	bad := strings.Replace(oneCM, "name: dry", "name: Not_Valid", 1)
	if _, errOut, code := c.run(bad, "apply", "-f", "-", "--dry-run=server"); code != 1 ||
		!strings.HasPrefix(errOut, `The ConfigMap "Not_Valid" is invalid: metadata.name: Invalid value: "Not_Valid": `) || strings.Count(errOut, "\n") != 1 {
		t.Errorf("server dry run of an invalid object: exit %d, stderr %q", code, errOut)
	}
	c.mustRun(oneCM, "apply", "-f", "-")
	changed := strings.Replace(oneCM, `a: "1"`, `a: "2"`, 1)
	if out := c.mustRun(changed, "apply", "-f", "-", "--dry-run=server"); out != "configmap/dry configured (server dry run)\n" {
		t.Errorf("server dry run of a change = %q", out)
	}
	if cm, err := cms.Get(ctx, "dry"); err != nil || cm.Data["a"] != "1" {
		t.Errorf("server dry run changed the object: %v %v", cm, err)
	}
	c.wantFail(`error: Invalid dry-run value (sometimes). Must be "none", "server", or "client".`, "apply", "-f", "x", "--dry-run=sometimes")
}

func TestIntegrationReplace(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()
	cms := client.Resource[api.ConfigMap](c.client).Namespace("default")
	c.wantFailIn(oneCM, `Error from server (NotFound): error when replacing "STDIN": configmaps "dry" not found`, "replace", "-f", "-")
	c.mustRun(oneCM, "create", "-f", "-")
	v2 := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dry\ndata:\n  b: \"2\"\n"
	if out := c.mustRun(v2, "replace", "-f", "-"); out != "configmap/dry replaced\n" {
		t.Errorf("replace = %q", out)
	}
	cm, err := cms.Get(ctx, "dry")
	if err != nil {
		t.Fatal(err)
	}
	if len(cm.Labels) != 0 || cm.Data["b"] != "2" || cm.Data["a"] != "" {
		t.Errorf("after replace: labels %v data %v (replace keeps nothing it was not given)", cm.Labels, cm.Data)
	}
	uid := cm.UID
	if out := c.mustRun(oneCM, "replace", "--force", "-f", "-"); out != "configmap/dry replaced\n" {
		t.Errorf("replace --force = %q", out)
	}
	if cm, err := cms.Get(ctx, "dry"); err != nil || cm.UID == uid || cm.Data["a"] != "1" {
		t.Errorf("replace --force did not re-create: %+v %v", cm, err)
	}
	// create of an existing object is AlreadyExists.
	c.wantFailIn(oneCM, `Error from server (AlreadyExists): error when creating "STDIN": configmaps "dry" already exists`, "create", "-f", "-")
}

func TestIntegrationDelete(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()
	cms := client.Resource[api.ConfigMap](c.client).Namespace("default")
	for _, n := range []string{"a1", "a2", "b1"} {
		app := strings.TrimRight(n, "0123456789")
		if _, err := cms.Create(ctx, &api.ConfigMap{ObjectMeta: api.ObjectMeta{Name: n, Labels: map[string]string{"app": app}}}); err != nil {
			t.Fatal(err)
		}
	}
	if out := c.mustRun("", "delete", "cm", "-l", "app=a"); out != "configmap \"a1\" deleted from default namespace\nconfigmap \"a2\" deleted from default namespace\n" {
		t.Errorf("delete -l = %q", out)
	}
	if out := c.mustRun("", "delete", "configmap/b1"); out != "configmap \"b1\" deleted from default namespace\n" {
		t.Errorf("delete TYPE/NAME = %q", out)
	}
	// kubectl prints this one on stdout (get prints it on stderr).
	if out, errOut, code := c.run("", "delete", "cm", "--all"); code != 0 || out != "No resources found\n" || errOut != "" {
		t.Errorf("delete --all of nothing: exit %d stdout %q stderr %q", code, out, errOut)
	}
	c.wantFail("error: setting 'all' parameter but found a non empty selector. ", "delete", "cm", "--all", "-l", "app=a")
	c.wantFail("error: resource(s) were provided, but no name was specified", "delete", "cm")

	// --wait waits for finalizers; --timeout bounds it.
	if _, err := cms.Create(ctx, &api.ConfigMap{ObjectMeta: api.ObjectMeta{Name: "held", Finalizers: []string{"example.com/hold"}}}); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := c.run("", "delete", "cm", "held", "--timeout=1s")
	if code != 1 || out != "configmap \"held\" deleted from default namespace\n" || errOut != "error: timed out waiting for the condition on configmaps/held\n" {
		t.Errorf("delete with a finalizer: exit %d stdout %q stderr %q", code, out, errOut)
	}
	if out := c.mustRun("", "delete", "cm", "held", "--wait=false"); out != "configmap \"held\" deleted from default namespace\n" {
		t.Errorf("delete --wait=false = %q", out)
	}

	// --force --grace-period=0 removes a bound pod at once, with kubectl's warning.
	pods := client.Resource[api.Pod](c.client).Namespace("default")
	if _, err := pods.Create(ctx, &api.Pod{ObjectMeta: api.ObjectMeta{Name: "p"}, Spec: api.PodSpec{NodeName: "n1",
		Containers: []api.Container{{Name: "c", Image: "busybox"}}}}); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = c.run("", "delete", "pod", "p", "--force", "--grace-period=0")
	if code != 0 || out != "pod \"p\" force deleted from default namespace\n" || !strings.HasPrefix(errOut, "Warning: Immediate deletion does not wait") {
		t.Errorf("delete --force: exit %d stdout %q stderr %q", code, out, errOut)
	}
	if _, err := pods.Get(ctx, "p"); !apierrors.IsNotFound(err) {
		t.Errorf("pod still there after a forced delete: %v", err)
	}
}

func TestIntegrationErrors(t *testing.T) {
	c := startCluster(t)
	c.wantFail(`error: the server doesn't have a resource type "foo"`, "get", "foo")
	c.wantFail(`Error from server (NotFound): pods "x" not found`, "get", "pod", "x")
	c.wantFail(`Error from server (NotFound): deployments.apps "x" not found`, "describe", "deploy", "x")
	c.wantFailIn(oneCM, `Error from server (NotFound): error when creating "STDIN": namespaces "nope" not found`, "apply", "-n", "nope", "-f", "-")
	c.wantFail(`error: no objects passed to apply`, "apply", "-f", "-")
	c.wantFail(`error: unable to match a printer suitable for the output format "tsv", allowed formats are: custom-columns,json,jsonpath,name,wide,yaml`,
		"get", "pods", "-o", "tsv")
	c.wantFail(`error: the path "/does/not/exist.yaml" does not exist`, "apply", "-f", "/does/not/exist.yaml")

	// A multi-document apply says which objects were created before the
	// one that failed, and exits 1.
	docs := oneCM + "---\n" + strings.Replace(oneCM, "name: dry", "name: Bad_Name", 1) + "---\n" + strings.Replace(oneCM, "name: dry", "name: after", 1)
	out, errOut, code := c.run(docs, "apply", "-f", "-")
	if code != 1 || out != "configmap/dry created\nconfigmap/after created\n" ||
		!strings.HasPrefix(errOut, `The ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": `) || strings.Count(errOut, "\n") != 1 {
		t.Errorf("partial apply: exit %d stdout %q stderr %q", code, out, errOut)
	}
}

func TestIntegrationWatch(t *testing.T) {
	c := startCluster(t)
	c.mustRun(oneCM, "apply", "-f", "-")
	w := c.start("get", "cm", "dry", "-w")
	head := w.waitLine(0, "the table header", func(l string) bool { return strings.HasPrefix(l, "NAME") })
	first := w.waitLine(head+1, "the first row", func(l string) bool { return strings.HasPrefix(l, "dry ") })
	if f := strings.Fields(w.output()[first]); f[1] != "1" {
		t.Fatalf("first row %q", w.output()[first])
	}
	cms := client.Resource[api.ConfigMap](c.client).Namespace("default")
	if _, err := cms.Patch(context.Background(), "dry", client.MergePatchType, []byte(`{"data":{"b":"2"}}`)); err != nil {
		t.Fatal(err)
	}
	w.waitLine(first+1, "a row for the update", func(l string) bool {
		f := strings.Fields(l)
		return len(f) == 3 && f[0] == "dry" && f[1] == "2"
	})

	// --watch-only with -o name prints only changes. When the watch starts
	// is not observable from outside, so change the object until a change
	// shows.
	if _, err := cms.Create(context.Background(), &api.ConfigMap{ObjectMeta: api.ObjectMeta{Name: "late"}}); err != nil {
		t.Fatal(err)
	}
	wo := c.start("get", "cm", "late", "--watch-only", "-o", "name")
	stop := make(chan struct{})
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(300 * time.Millisecond):
			}
			cms.Patch(context.Background(), "late", client.MergePatchType, fmt.Appendf(nil, `{"data":{"n":"%d"}}`, i))
		}
	}()
	wo.waitLine(0, "a change", func(l string) bool { return l == "configmap/late" })
	close(stop)
	for _, l := range wo.output() {
		if l != "configmap/late" {
			t.Errorf("--watch-only printed %q", l)
		}
	}

	// --output-watch-events: an EVENT column, ADDED for what exists, then
	// the event types as they come; -o json wraps objects in events.
	we := c.start("get", "cm", "dry", "-w", "--output-watch-events")
	head = we.waitLine(0, "the table header", func(l string) bool { return strings.HasPrefix(l, "EVENT ") })
	if f := strings.Fields(we.output()[head]); strings.Join(f, " ") != "EVENT NAME DATA AGE" {
		t.Errorf("watch events header %q", we.output()[head])
	}
	we.waitLine(head+1, "the ADDED row", func(l string) bool { return strings.HasPrefix(l, "ADDED ") && strings.Fields(l)[1] == "dry" })
	wj := c.start("get", "cm", "dry", "-w", "--output-watch-events", "-o", "json")
	wj.waitLine(0, "the ADDED event", func(l string) bool { return strings.TrimSpace(l) == `"type": "ADDED"` })
	if err := cms.Delete(context.Background(), "dry", nil); err != nil {
		t.Fatal(err)
	}
	we.waitLine(head+2, "the DELETED row", func(l string) bool { return strings.HasPrefix(l, "DELETED ") && strings.Fields(l)[1] == "dry" })
	wj.waitLine(0, "the DELETED event", func(l string) bool { return strings.TrimSpace(l) == `"type": "DELETED"` })
	c.wantFail("error: watch is only supported on individual resources and resource collections, but 2 resources were found", "get", "cm", "a", "b", "-w")
}

func TestIntegrationLabelAnnotateScaleSetImage(t *testing.T) {
	c := startCluster(t)
	c.mustRun(deployV1, "apply", "-f", "-")
	ctx := context.Background()
	deps := client.Resource[api.Deployment](c.client).Namespace("default")
	get := func() *api.Deployment {
		t.Helper()
		d, err := deps.Get(ctx, "web")
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	steps := []struct {
		args []string
		want string
	}{
		{[]string{"label", "deploy", "web", "tier=front"}, "deployment.apps/web labeled\n"},
		{[]string{"label", "deploy/web", "tier=front"}, "deployment.apps/web not labeled\n"},
		{[]string{"label", "deploy", "web", "--overwrite", "tier=back"}, "deployment.apps/web labeled\n"},
		{[]string{"annotate", "deploy", "web", "note=hello world"}, "deployment.apps/web annotated\n"},
		{[]string{"scale", "deploy/web", "--replicas=5"}, "deployment.apps/web scaled\n"},
		{[]string{"scale", "deploy/web", "--current-replicas=5", "--replicas=4"}, "deployment.apps/web scaled\n"},
		{[]string{"set", "image", "deployment/web", "app=busybox:9"}, "deployment.apps/web image updated\n"},
		{[]string{"rollout", "restart", "deployment/web"}, "deployment.apps/web restarted\n"},
	}
	for _, s := range steps {
		if out := c.mustRun("", s.args...); out != s.want {
			t.Errorf("%v = %q, want %q", s.args, out, s.want)
		}
	}
	d := get()
	if d.Labels["tier"] != "back" || d.Annotations["note"] != "hello world" || *d.Spec.Replicas != 4 ||
		d.Spec.Template.Spec.Containers[0].Image != "busybox:9" ||
		d.Spec.Template.Annotations["kubectl.kubernetes.io/restartedAt"] == "" {
		t.Errorf("after the steps: labels %v annotations %v replicas %d image %q template annotations %v",
			d.Labels, d.Annotations, *d.Spec.Replicas, d.Spec.Template.Spec.Containers[0].Image, d.Spec.Template.Annotations)
	}
	if len(d.Spec.Template.Spec.Containers[0].Env) != 2 {
		t.Errorf("set image lost the env: %+v", d.Spec.Template.Spec.Containers[0].Env)
	}
	c.wantFail("error: 'tier' already has a value (back), and --overwrite is false", "label", "deploy", "web", "tier=x")
	c.wantFail("error: --overwrite is false but found the following declared annotation(s): 'note' already has a value (hello world)", "annotate", "deploy", "web", "note=x")
	c.wantFail("error: Expected replicas to be 3, was 4", "scale", "deploy/web", "--current-replicas=3", "--replicas=1")
	c.wantFail(`error: unable to find container named "nope"`, "set", "image", "deploy/web", "nope=busybox")
	if out := c.mustRun("", "label", "deploy", "web", "tier-"); out != "deployment.apps/web unlabeled\n" {
		t.Errorf("label tier- = %q", out)
	}
	if out := c.mustRun("", "annotate", "deploy", "web", "note-"); out != "deployment.apps/web annotated\n" {
		t.Errorf("annotate note- = %q", out)
	}
	if d := get(); d.Labels["tier"] != "" || d.Annotations["note"] != "" {
		t.Errorf("removal left labels %v annotations %v", d.Labels, d.Annotations)
	}
}

func TestIntegrationEdit(t *testing.T) {
	c := startCluster(t)
	c.mustRun(oneCM, "apply", "-f", "-")
	dir := t.TempDir()
	script := filepath.Join(dir, "editor.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nsed -i 's/a: \"1\"/a: \"edited\"/' \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	c.env = []string{"KUBE_EDITOR=" + script, "EDITOR=false"}
	if out := c.mustRun("", "edit", "cm/dry"); out != "configmap/dry edited\n" {
		t.Errorf("edit = %q", out)
	}
	cm, err := client.Resource[api.ConfigMap](c.client).Namespace("default").Get(context.Background(), "dry")
	if err != nil || cm.Data["a"] != "edited" || cm.Labels["app"] != "web" {
		t.Errorf("after edit: %+v %v", cm, err)
	}
	c.env = []string{"KUBE_EDITOR=", "EDITOR=true"}
	if out, errOut, code := c.run("", "edit", "configmap", "dry"); code != 0 || out != "" || errOut != "Edit cancelled, no changes made.\n" {
		t.Errorf("edit without change: exit %d stdout %q stderr %q", code, out, errOut)
	}
}

func TestIntegrationLogsExecErrors(t *testing.T) {
	c := startCluster(t)
	pods := client.Resource[api.Pod](c.client).Namespace("default")
	if _, err := pods.Create(context.Background(), &api.Pod{ObjectMeta: api.ObjectMeta{Name: "p"}, Spec: api.PodSpec{NodeName: "n1",
		Containers: []api.Container{{Name: "c", Image: "busybox"}}}}); err != nil {
		t.Fatal(err)
	}
	c.wantFail(`Error from server (NotFound): pods "nope" not found`, "logs", "nope")
	c.wantFail("error: exec [POD] [COMMAND] is not supported anymore. Use exec [POD] -- [COMMAND] instead", "exec", "p", "ls")
	c.wantFail("error: you must specify at least one command for the container", "exec", "p")
	// Whatever the server answers (today the kubelet proxy is missing), it
	// is one kubectl-style line and exit code 1.
	for _, args := range [][]string{{"logs", "p", "--tail=5"}, {"exec", "p", "--", "ls"}} {
		_, errOut, code := c.run("", args...)
		if code != 1 || !strings.HasPrefix(errOut, "Error from server (") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d stderr %q", args, code, errOut)
		}
	}
}

func TestIntegrationCompletionHelp(t *testing.T) {
	c := startCluster(t)
	if out := c.mustRun("", "completion", "bash"); !strings.Contains(out, "# bash completion V2 for kubectl-lite") {
		t.Errorf("completion bash = %.80q", out)
	}
	if out := c.mustRun("", "completion", "zsh"); !strings.HasPrefix(out, "#compdef kubectl-lite") {
		t.Errorf("completion zsh = %.80q", out)
	}
	// Completion of resource names asks the binary itself.
	if out := c.mustRun("", "__complete", "rollout", ""); !strings.Contains(out, "status") || !strings.Contains(out, "undo") {
		t.Errorf("__complete rollout = %q", out)
	}
	// Types, then live names from the server, as kubectl completes them.
	c.mustRun(oneCM, "apply", "-f", "-")
	c.mustRun(strings.Replace(oneCM, "name: dry", "name: other", 1), "apply", "-f", "-")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"get", "dep"}, "deployments.apps\n:4\n"},
		{[]string{"get", "cm", ""}, "dry\nother\n:4\n"},
		{[]string{"delete", "configmap", "dry", ""}, "other\n:4\n"},
		{[]string{"describe", "cm/o"}, "cm/other\n:4\n"},
		{[]string{"get", "-n", "kube-"}, "kube-node-lease\nkube-public\nkube-system\n:4\n"},
		{[]string{"-n", "kube-system", "get", "cm", ""}, "kube-apiserver-legacy-service-account-token-tracking\n:4\n"},
		{[]string{"scale", ""}, "deployments.apps\nreplicasets.apps\n:4\n"},
	} {
		if out := c.mustRun("", append([]string{"__complete"}, tc.args...)...); out != tc.want {
			t.Errorf("__complete %q = %q, want %q", tc.args, out, tc.want)
		}
	}
	if out := c.mustRun("", "rollout", "status", "--help"); !strings.Contains(out, "Usage:\n  kubectl-lite rollout status (TYPE NAME | TYPE/NAME)") ||
		!strings.Contains(out, "--timeout duration") {
		t.Errorf("rollout status --help = %q", out)
	}
}

// TestIntegrationPatch covers patch's three types, a subresource, "no
// change", a dry run, and a failing JSON patch's message.
func TestIntegrationPatch(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()
	c.mustRun(deployV1, "apply", "-f", "-")
	c.mustRun(oneCM, "apply", "-f", "-")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"patch", "deploy", "web", "-p", `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"busybox:3"}]}}}}`}, "deployment.apps/web patched\n"},
		{[]string{"patch", "deploy/web", "-p", "spec: {template: {spec: {containers: [{name: app, image: 'busybox:3'}]}}}"}, "deployment.apps/web patched (no change)\n"},
		{[]string{"patch", "cm", "dry", "--type=merge", "-p", `{"data":{"b":"2"}}`}, "configmap/dry patched\n"},
		{[]string{"patch", "cm", "dry", "--type=json", "-p", `[{"op":"remove","path":"/data/a"}]`}, "configmap/dry patched\n"},
		{[]string{"patch", "cm", "dry", "--type=merge", "-p", `{"data":{"c":"3"}}`, "--dry-run=server"}, "configmap/dry patched (server dry run)\n"},
		{[]string{"patch", "deploy", "web", "--subresource=scale", "--type=merge", "-p", `{"spec":{"replicas":4}}`}, "deployment.apps/web patched\n"},
	} {
		if out := c.mustRun("", tc.args...); out != tc.want {
			t.Errorf("%v = %q, want %q", tc.args, out, tc.want)
		}
	}
	d, err := client.Resource[api.Deployment](c.client).Namespace("default").Get(ctx, "web")
	if err != nil {
		t.Fatal(err)
	}
	// The strategic merge kept the env of the container it matched by name.
	if ctr := d.Spec.Template.Spec.Containers[0]; ctr.Image != "busybox:3" || len(ctr.Env) != 2 || *d.Spec.Replicas != 4 {
		t.Errorf("after patches: image %q env %v replicas %d", ctr.Image, ctr.Env, *d.Spec.Replicas)
	}
	cm, err := client.Resource[api.ConfigMap](c.client).Namespace("default").Get(ctx, "dry")
	if err != nil || len(cm.Data) != 1 || cm.Data["b"] != "2" {
		t.Errorf("configmap after patches: %v %v", cm, err)
	}
	// kube-apiserver answers a JSON patch that does not apply with one
	// generic 422, whatever failed (TestJSONPatchLimitsAsKube compares it).
	c.wantFail("The request is invalid: the server rejected our request due to an error in our request", "patch", "cm", "dry", "--type=json", "-p", `[{"op":"remove","path":"/data/zz"}]`)
}

// TestIntegrationSetEnv sets, lists and removes environment variables of a
// deployment's containers.
func TestIntegrationSetEnv(t *testing.T) {
	c := startCluster(t)
	c.mustRun(deployV1, "apply", "-f", "-")
	if out := c.mustRun("", "set", "env", "deployment/web", "C=3", "A=10"); out != "deployment.apps/web env updated\n" {
		t.Errorf("set env = %q", out)
	}
	if out := c.mustRun("", "set", "env", "deployment/web", "--list"); out != "# Deployment web, container app\nA=10\nB=2\nC=3\n" {
		t.Errorf("set env --list = %q", out)
	}
	if out := c.mustRun("", "set", "env", "deployment/web", "-c", "app", "B-"); out != "deployment.apps/web env updated\n" {
		t.Errorf("set env B- = %q", out)
	}
	d, err := client.Resource[api.Deployment](c.client).Namespace("default").Get(context.Background(), "web")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		got = append(got, e.Name+"="+e.Value)
	}
	if strings.Join(got, " ") != "A=10 C=3" {
		t.Errorf("env after set env: %v", got)
	}
	c.wantFail("error: unable to find container named nope", "set", "env", "deployment/web", "-c", "nope", "X=1")
}
