package root_test

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/apiserver/app"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/kubeconfig"
)

// TestIntegrationApplyInputs feeds apply every input shape kubectl reads: a
// directory with -R, a stream of concatenated JSON objects, a List, and
// stdin; the same files re-applied are all unchanged.
func TestIntegrationApplyInputs(t *testing.T) {
	c := startCluster(t)
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("a.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: team-b}\n")
	// Two JSON objects one after the other, no separator: both are applied.
	write("sub/b.json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b1"}}
{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b2"}}`)
	write("sub/deeper/c.json", `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c1"}},{"apiVersion":"v1","kind":"Secret","metadata":{"name":"c2"},"stringData":{"k":"v"}}]}`)
	write("ignored.txt", "not a manifest")

	// Without -R only the directory's own files are read.
	if out := c.mustRun("", "apply", "-f", dir); out != "configmap/a created\nnamespace/team-b created\n" {
		t.Errorf("apply -f DIR = %q", out)
	}
	want := "configmap/a unchanged\nnamespace/team-b unchanged\nconfigmap/b1 created\nconfigmap/b2 created\nconfigmap/c1 created\nsecret/c2 created\n"
	if out := c.mustRun("", "apply", "-R", "-f", dir); out != want {
		t.Errorf("apply -R -f DIR = %q, want %q", out, want)
	}
	b, err := os.ReadFile(filepath.Join(dir, "sub/b.json"))
	if err != nil {
		t.Fatal(err)
	}
	if out := c.mustRun(string(b), "apply", "-f", "-"); out != "configmap/b1 unchanged\nconfigmap/b2 unchanged\n" {
		t.Errorf("apply -f - of a JSON stream = %q", out)
	}
}

// TestIntegrationApplyLastApplied checks the annotation apply records is
// the one kubectl records (an "annotations":{} included), so the two tools
// can take turns on the same objects, and that apply adopts an object
// created without it, with kubectl's warning.
func TestIntegrationApplyLastApplied(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()
	cms := client.Resource[api.ConfigMap](c.client).Namespace("default")
	c.mustRun(oneCM, "apply", "-f", "-")
	cm, err := cms.Get(ctx, "dry")
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"apiVersion":"v1","data":{"a":"1"},"kind":"ConfigMap","metadata":{"annotations":{},"labels":{"app":"web"},"name":"dry","namespace":"default"}}` + "\n"
	if got := cm.Annotations["kubectl.kubernetes.io/last-applied-configuration"]; got != want {
		t.Errorf("last-applied = %q, want kubectl's %q", got, want)
	}

	// A client dry run does not compute the patch: kubectl reports an
	// existing object as configured.
	if out := c.mustRun(oneCM, "apply", "-f", "-", "--dry-run=client"); out != "configmap/dry configured (dry run)\n" {
		t.Errorf("client dry run on an existing object = %q", out)
	}

	// create without --save-config leaves no annotation; apply warns and
	// adds it.
	plain := strings.Replace(oneCM, "name: dry", "name: plain", 1)
	c.mustRun(plain, "create", "-f", "-")
	out, errOut, code := c.run(plain, "apply", "-f", "-")
	if code != 0 || out != "configmap/plain configured\n" ||
		errOut != "Warning: resource configmaps/plain is missing the kubectl.kubernetes.io/last-applied-configuration annotation which is required by kubectl-lite apply. kubectl-lite apply should only be used on resources created declaratively by either kubectl-lite create --save-config or kubectl-lite apply. The missing annotation will be patched automatically.\n" {
		t.Errorf("apply over create: exit %d stdout %q stderr %q", code, out, errOut)
	}
	if out := c.mustRun(plain, "apply", "-f", "-"); out != "configmap/plain unchanged\n" {
		t.Errorf("apply after adoption = %q", out)
	}
	saved := strings.Replace(oneCM, "name: dry", "name: saved", 1)
	c.mustRun(saved, "create", "--save-config", "-f", "-")
	if out, errOut, _ := c.run(saved, "apply", "-f", "-"); out != "configmap/saved unchanged\n" || errOut != "" {
		t.Errorf("apply after create --save-config: stdout %q stderr %q", out, errOut)
	}

	// generateName: create makes a name up, apply refuses as kubectl does.
	gen := "apiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: gen-}\n"
	if out := c.mustRun(gen, "create", "-f", "-"); !strings.HasPrefix(out, "configmap/gen-") {
		t.Errorf("create with generateName = %q", out)
	}
	c.wantFailIn(gen, "error: from STDIN: cannot use generate name with apply", "apply", "-f", "-")
}

// TestIntegrationPartialApplyNamesFailures checks that a multi-document
// apply whose middle object fails reports every success, then the failure
// with the file it came from, and exits 1; delete -f does the same.
func TestIntegrationPartialApplyNamesFailures(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "three.yaml")
	docs := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: one}\n---\n" +
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: two, namespace: missing}\n---\n" +
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: three}\n"
	if err := os.WriteFile(file, []byte(docs), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := c.run("", "apply", "-f", file)
	if code != 1 || out != "configmap/one created\nconfigmap/three created\n" ||
		errOut != `Error from server (NotFound): error when creating "`+file+`": namespaces "missing" not found`+"\n" {
		t.Errorf("partial apply: exit %d stdout %q stderr %q", code, out, errOut)
	}
	cms := client.Resource[api.ConfigMap](c.client).Namespace("default")
	for _, n := range []string{"one", "three"} {
		if _, err := cms.Get(ctx, n); err != nil {
			t.Errorf("configmap %s reported created: %v", n, err)
		}
	}

	// Dry runs delete nothing.
	for _, mode := range []string{"client", "server"} {
		suffix := map[string]string{"client": " (dry run)", "server": " (server dry run)"}[mode]
		out, _, code := c.run("", "delete", "-f", file, "--dry-run="+mode)
		if code != 1 || out != `configmap "one" deleted from default namespace`+suffix+"\n"+`configmap "three" deleted from default namespace`+suffix+"\n" {
			t.Errorf("delete --dry-run=%s: exit %d stdout %q", mode, code, out)
		}
		if _, err := cms.Get(ctx, "one"); err != nil {
			t.Errorf("delete --dry-run=%s deleted: %v", mode, err)
		}
	}
	out, errOut, code = c.run("", "delete", "-f", file)
	if code != 1 || out != "configmap \"one\" deleted from default namespace\nconfigmap \"three\" deleted from default namespace\n" ||
		errOut != `Error from server (NotFound): error when deleting "`+file+`": namespaces "missing" not found`+"\n" &&
			errOut != `Error from server (NotFound): error when deleting "`+file+`": configmaps "two" not found`+"\n" {
		t.Errorf("partial delete -f: exit %d stdout %q stderr %q", code, out, errOut)
	}
	if _, err := cms.Get(ctx, "three"); !apierrors.IsNotFound(err) {
		t.Errorf("configmap three after delete -f: %v", err)
	}
}

// TestIntegrationConnectionErrors checks kubectl's lines for a rejected
// credential and for a server that is not there.
func TestIntegrationConnectionErrors(t *testing.T) {
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte("bob-token,bob,uid-bob,\"devs\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := apiservertest.Start(t, apiservertest.WithTLS, func(o *app.Options) { o.TokenAuthFile = tokens })
	c := newCluster(t, s.Options.WriteKubeconfig)
	cfg, err := kubeconfig.Load(c.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	// An authenticated user without permission: the server's Forbidden.
	bob := filepath.Join(dir, "bob")
	if err := kubeconfig.Write(bob, kubeconfig.NewForCluster(c.client.Host(), cfg.Clusters[0].Cluster.CertificateAuthorityData,
		"bob", kubeconfig.AuthInfo{Token: "bob-token"}, "")); err != nil {
		t.Fatal(err)
	}
	c.wantFail(`Error from server (Forbidden): pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "default"`,
		"--kubeconfig", bob, "get", "pods")
	c.wantFailIn(oneCM, `Error from server (Forbidden): error when retrieving current configuration of "STDIN": configmaps "dry" is forbidden: User "bob" cannot get resource "configmaps" in API group "" in the namespace "default"`,
		"--kubeconfig", bob, "apply", "-f", "-")

	bad := filepath.Join(dir, "bad-token")
	if err := kubeconfig.Write(bad, kubeconfig.NewForCluster(c.client.Host(), cfg.Clusters[0].Cluster.CertificateAuthorityData,
		"mallory", kubeconfig.AuthInfo{Token: "not-a-token"}, "")); err != nil {
		t.Fatal(err)
	}
	c.wantFail("error: You must be logged in to the server (Unauthorized)", "--kubeconfig", bad, "get", "pods")

	// Global flags override the kubeconfig: --token replaces the admin
	// certificate, --server the address (with --insecure-skip-tls-verify
	// as the CA no longer matters for a bare address).
	c.wantFail(`Error from server (Forbidden): pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "default"`,
		"--token", "bob-token", "get", "pods")
	if out := c.mustRun("", "--server", c.client.Host(), "--insecure-skip-tls-verify", "--request-timeout=10s", "get", "ns", "default", "-o", "name"); out != "namespace/default\n" {
		t.Errorf("--server --insecure-skip-tls-verify = %q", out)
	}
	c.wantFail("error: invalid timeout value. Timeout must be a single integer in seconds, or an integer followed by a corresponding time unit (e.g. 1s | 2m | 3h)",
		"--request-timeout=soon", "get", "pods")

	// A port nothing listens on: take one, then free it.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	down := filepath.Join(dir, "down")
	if err := kubeconfig.Write(down, kubeconfig.NewForCluster("https://"+addr, nil, "admin", kubeconfig.AuthInfo{Token: "x"}, "")); err != nil {
		t.Fatal(err)
	}
	c.wantFail("The connection to the server "+addr+" was refused - did you specify the right host or port?", "--kubeconfig", down, "get", "pods")
	c.wantFail("The connection to the server "+addr+" was refused - did you specify the right host or port?", "--server", "https://"+addr, "get", "pods")
}

// TestIntegrationApplyOutput checks -o on apply, create -f and replace: the
// object as the server returned it (a server dry run shows the result it
// would store), or its name.
func TestIntegrationApplyOutput(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()
	if out := c.mustRun(oneCM, "create", "-f", "-", "-o", "name"); out != "configmap/dry\n" {
		t.Errorf("create -o name = %q", out)
	}
	changed := strings.Replace(oneCM, `a: "1"`, `a: "2"`, 1)
	var got struct {
		Data     map[string]string
		Metadata struct {
			UID         string
			Annotations map[string]string
		}
	}
	if err := json.Unmarshal([]byte(c.mustRun(changed, "apply", "-f", "-", "--dry-run=server", "-o", "json")), &got); err != nil {
		t.Fatal(err)
	}
	if got.Data["a"] != "2" || got.Metadata.UID == "" || got.Metadata.Annotations["kubectl.kubernetes.io/last-applied-configuration"] == "" {
		t.Errorf("apply --dry-run=server -o json = %+v", got)
	}
	cm, err := client.Resource[api.ConfigMap](c.client).Namespace("default").Get(ctx, "dry")
	if err != nil || cm.Data["a"] != "1" {
		t.Errorf("server dry run changed the object: %v %v", cm, err)
	}
	two := changed + "---\n" + strings.Replace(oneCM, "name: dry", "name: second", 1)
	out := c.mustRun(two, "apply", "-f", "-", "-o", "yaml")
	if docs := strings.Split(out, "\n---\n"); len(docs) != 2 || !strings.Contains(docs[0], "name: dry") || !strings.Contains(docs[0], `a: "2"`) ||
		!strings.Contains(docs[1], "name: second") || !strings.Contains(docs[1], "uid: ") {
		t.Errorf("apply -o yaml of two objects:\n%s", out)
	}
	// An unchanged object prints as it is on the server.
	if out := c.mustRun(changed, "apply", "-f", "-", "-o", "json"); !strings.Contains(out, `"resourceVersion"`) {
		t.Errorf("apply -o json of an unchanged object = %q", out)
	}
	if out := c.mustRun(changed, "replace", "-f", "-", "-o", "name"); out != "configmap/dry\n" {
		t.Errorf("replace -o name = %q", out)
	}
	c.wantFailIn(changed, `error: unable to match a printer suitable for the output format "wide", allowed formats are: json,name,yaml`, "apply", "-f", "-", "-o", "wide")
}

// TestIntegrationDiff checks diff -f: exit 0 when apply would change
// nothing, else 1 with a unified diff of the live and the dry-run-applied
// object, the server left as it was.
func TestIntegrationDiff(t *testing.T) {
	c := startCluster(t)
	c.mustRun(oneCM, "apply", "-f", "-")
	if out, errOut, code := c.run(oneCM, "diff", "-f", "-"); code != 0 || out != "" || errOut != "" {
		t.Errorf("diff of an applied manifest: exit %d stdout %q stderr %q", code, out, errOut)
	}
	changed := strings.Replace(oneCM, `a: "1"`, `a: "2"`, 1) + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: fresh}\n"
	out, errOut, code := c.run(changed, "diff", "-f", "-")
	for _, w := range []string{"/LIVE/v1.ConfigMap.default.dry", "/MERGED/v1.ConfigMap.default.dry", "-  a: \"1\"\n", "+  a: \"2\"\n",
		"/MERGED/v1.ConfigMap.default.fresh", "+  name: fresh\n"} {
		if !strings.Contains(out, w) {
			t.Errorf("diff output lacks %q", w)
		}
	}
	if code != 1 || errOut != "" {
		t.Errorf("diff with changes: exit %d stderr %q stdout\n%s", code, errOut, out)
	}
	cm, err := client.Resource[api.ConfigMap](c.client).Namespace("default").Get(context.Background(), "dry")
	if err != nil || cm.Data["a"] != "1" {
		t.Errorf("diff changed the object: %v %v", cm, err)
	}
	if _, err := client.Resource[api.ConfigMap](c.client).Namespace("default").Get(context.Background(), "fresh"); !apierrors.IsNotFound(err) {
		t.Errorf("diff created the new object: %v", err)
	}
}
