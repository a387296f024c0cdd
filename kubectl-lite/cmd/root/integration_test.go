package root_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/kubeconfig"
	"github.com/minik8s/minik8s/internal/pki"
)

func TestIntegrationVersionClusterInfo(t *testing.T) {
	c := startTLSCluster(t)
	out := c.mustRun("", "version")
	if !strings.HasPrefix(out, "Client Version: v") || !strings.Contains(out, "\nServer Version: v") {
		t.Errorf("version output %q", out)
	}
	out = c.mustRun("", "cluster-info")
	if want := "Kubernetes control plane is running at " + c.client.Host(); !strings.HasPrefix(out, want) {
		t.Errorf("cluster-info = %q, want prefix %q", out, want)
	}
	if !strings.HasPrefix(c.client.Host(), "https://") {
		t.Errorf("admin kubeconfig server %q is not https", c.client.Host())
	}

	// Services labelled kubernetes.io/cluster-service in kube-system are
	// listed with their proxy URL, named by kubernetes.io/name.
	ctx := context.Background()
	if _, err := client.Resource[api.Service](c.client).Namespace("kube-system").Create(ctx, &api.Service{
		ObjectMeta: api.ObjectMeta{Name: "kube-dns", Labels: map[string]string{"kubernetes.io/cluster-service": "true", "kubernetes.io/name": "ClusterDNS"}},
		Spec:       api.ServiceSpec{Selector: map[string]string{"k8s-app": "kube-dns"}, Ports: []api.ServicePort{{Name: "dns", Port: 53, Protocol: "UDP"}}},
	}); err != nil {
		t.Fatal(err)
	}
	want := "Kubernetes control plane is running at " + c.client.Host() + "\n" +
		"ClusterDNS is running at " + c.client.Host() + "/api/v1/namespaces/kube-system/services/kube-dns:dns/proxy\n" +
		"\nTo further debug and diagnose cluster problems, use 'kubectl-lite cluster-info dump'.\n"
	if out := c.mustRun("", "cluster-info"); out != want {
		t.Errorf("cluster-info =\n%s\nwant\n%s", out, want)
	}
	// dump: the node list, then per namespace its lists and pod logs (a
	// pod on no node has none, and says so).
	if _, err := client.Resource[api.Pod](c.client).Namespace("default").Create(ctx, &api.Pod{ObjectMeta: api.ObjectMeta{Name: "p"},
		Spec: api.PodSpec{Containers: []api.Container{{Name: "c", Image: "busybox"}}}}); err != nil {
		t.Fatal(err)
	}
	out = c.mustRun("", "cluster-info", "dump", "--namespaces", "default")
	for _, w := range []string{`"kind": "NodeList"`, `"kind": "EventList"`, `"kind": "PodList"`, `"name": "p"`,
		"==== START logs for container c of pod default/p ====\nRequest log error: ", "==== END logs for container c of pod default/p ====\n"} {
		if !strings.Contains(out, w) {
			t.Errorf("cluster-info dump lacks %q", w)
		}
	}
	if strings.Contains(out, "kube-dns") {
		t.Error("cluster-info dump --namespaces default dumped kube-system")
	}
}

func TestIntegrationTokenCreate(t *testing.T) {
	c := startTLSCluster(t)
	before := time.Now()
	out := c.mustRun("", "token", "create", "--ttl", "2h", "--description", "for node-a")
	tok := strings.TrimSpace(out)
	id, secret, err := pki.ParseBootstrapToken(tok)
	if err != nil {
		t.Fatalf("token create printed %q: %v", out, err)
	}
	s, err := client.Resource[api.Secret](c.client).Namespace("kube-system").Get(context.Background(), "bootstrap-token-"+id)
	if err != nil {
		t.Fatal(err)
	}
	if s.Type != api.SecretTypeBootstrapToken {
		t.Errorf("type = %q", s.Type)
	}
	if got := string(s.Data["token-secret"]); got != secret {
		t.Errorf("token-secret = %q, want %q", got, secret)
	}
	exp, err := time.Parse(time.RFC3339, string(s.Data["expiration"]))
	if err != nil {
		t.Fatalf("expiration %q: %v", s.Data["expiration"], err)
	}
	if d := exp.Sub(before); d < 2*time.Hour-time.Second || d > 2*time.Hour+time.Minute {
		t.Errorf("expiration %v is %v after creation, want 2h", exp, d)
	}
	if got := string(s.Data["auth-extra-groups"]); got != pki.BootstrapDefaultNodeGroup {
		t.Errorf("groups = %q", got)
	}

	list := c.mustRun("", "token", "list")
	lines := strings.Split(strings.TrimSpace(list), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "TOKEN") || !strings.Contains(lines[0], "EXTRA GROUPS") {
		t.Fatalf("token list = %q", list)
	}
	for _, want := range []string{tok, "authentication,signing", "for node-a", pki.BootstrapDefaultNodeGroup} {
		if !strings.Contains(lines[1], want) {
			t.Errorf("token list row %q lacks %q", lines[1], want)
		}
	}

	join := c.mustRun("", "token", "create", "--print-join-command")
	hash, err := pki.CAHash(mustCA(t, c))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(join)
	if len(f) != 7 || f[0] != "kubelet" || f[2] != c.client.Host() || f[6] != hash {
		t.Errorf("join command %q, want server %s and hash %s", join, c.client.Host(), hash)
	}
	if _, _, err := pki.ParseBootstrapToken(f[4]); err != nil {
		t.Errorf("join command token %q: %v", f[4], err)
	}

	if out := c.mustRun("", "token", "delete", id); !strings.Contains(out, id) {
		t.Errorf("token delete = %q", out)
	}
	if _, errOut, code := c.run("", "token", "delete", id); code != 1 ||
		errOut != "Error from server (NotFound): secrets \"bootstrap-token-"+id+"\" not found\n" {
		t.Errorf("second delete: code %d, stderr %q", code, errOut)
	}
}

func mustCA(t *testing.T, c *cluster) []byte {
	cfg, err := kubeconfig.Load(c.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := cfg.ClientConfig("")
	if err != nil {
		t.Fatal(err)
	}
	return cc.CAData
}

const cmV1 = `apiVersion: v1
kind: ConfigMap
metadata:
  name: app
  labels:
    app: web
    tier: front
data:
  a: "1"
---
apiVersion: v1
kind: Namespace
metadata:
  name: team-a
`

const cmV2 = `apiVersion: v1
kind: ConfigMap
metadata:
  name: app
  labels:
    app: web
data:
  a: "2"
`

func TestIntegrationApplyGetDelete(t *testing.T) {
	c := startCluster(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "app.yaml")
	if err := os.WriteFile(file, []byte(cmV1), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := c.mustRun("", "apply", "-f", file); out != "configmap/app created\nnamespace/team-a created\n" {
		t.Fatalf("first apply = %q", out)
	}
	if out := c.mustRun("", "apply", "-f", file); out != "configmap/app unchanged\nnamespace/team-a unchanged\n" {
		t.Fatalf("second apply = %q", out)
	}

	// Another writer's label must survive the next apply.
	ctx := context.Background()
	cms := client.Resource[api.ConfigMap](c.client).Namespace("default")
	if _, err := cms.Patch(ctx, "app", client.MergePatchType, []byte(`{"metadata":{"labels":{"owner":"ops"}}}`)); err != nil {
		t.Fatal(err)
	}
	if out := c.mustRun(cmV2, "apply", "-f", "-"); out != "configmap/app configured\n" {
		t.Fatalf("apply of changed manifest = %q", out)
	}
	cm, err := cms.Get(ctx, "app")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cm.Labels["tier"]; ok {
		t.Errorf("label tier removed from the manifest is still there: %v", cm.Labels)
	}
	if cm.Labels["owner"] != "ops" || cm.Labels["app"] != "web" || cm.Data["a"] != "2" {
		t.Errorf("after apply: labels %v data %v", cm.Labels, cm.Data)
	}

	out := c.mustRun("", "get", "cm", "app")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || strings.Join(strings.Fields(lines[0]), " ") != "NAME DATA AGE" ||
		strings.Fields(lines[1])[0] != "app" || strings.Fields(lines[1])[1] != "1" {
		t.Errorf("get cm app = %q", out)
	}
	if out := c.mustRun("", "get", "ns", "team-a", "-o", "name"); out != "namespace/team-a\n" {
		t.Errorf("get -o name = %q", out)
	}
	if out := c.mustRun("", "get", "configmaps", "-l", "app=web", "-o", "yaml"); !strings.Contains(out, "kind: List") ||
		!strings.Contains(out, "name: app") {
		t.Errorf("get -o yaml = %q", out)
	}
	if _, errOut, code := c.run("", "get", "pods"); code != 0 || errOut != "No resources found in default namespace.\n" {
		t.Errorf("get pods on empty: code %d stderr %q", code, errOut)
	}

	if _, errOut, code := c.run("", "delete", "pod", "x"); code != 1 ||
		errOut != "Error from server (NotFound): pods \"x\" not found\n" {
		t.Errorf("delete missing pod: code %d, stderr %q", code, errOut)
	}
	if out := c.mustRun("", "delete", "configmap", "app"); out != "configmap \"app\" deleted from default namespace\n" {
		t.Errorf("delete = %q", out)
	}
	if _, errOut, code := c.run("", "get", "cm", "app"); code != 1 ||
		errOut != "Error from server (NotFound): configmaps \"app\" not found\n" {
		t.Errorf("get deleted: code %d, stderr %q", code, errOut)
	}
}

// TestIntegrationUnknownKindAppliesTheRest: as kubectl's builder, an
// object of a kind the server does not serve fails with the mapping error
// and the others are still applied (TestIntegrationCustomResourcesAsKubectl
// compares the same with the real kubectl).
func TestIntegrationUnknownKindAppliesTheRest(t *testing.T) {
	c := startCluster(t)
	bad := cmV1 + "---\napiVersion: v1\nkind: Frobnicator\nmetadata:\n  name: x\n"
	out, errOut, code := c.run(bad, "apply", "-f", "-")
	if code != 1 || out != "configmap/app created\nnamespace/team-a created\n" ||
		errOut != "error: resource mapping not found for name: \"x\" namespace: \"\" from \"STDIN\": no matches for kind \"Frobnicator\" in version \"v1\"\nensure CRDs are installed first\n" {
		t.Errorf("unknown kind: code %d stdout %q stderr %q", code, out, errOut)
	}
	if _, err := client.Resource[api.ConfigMap](c.client).Namespace("default").Get(context.Background(), "app"); err != nil {
		t.Errorf("the known object was not applied: %v", err)
	}
}

const deployV1 = `apiVersion: apps/v1
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
        image: busybox:1
        env:
        - {name: A, value: "1"}
        - {name: B, value: "2"}
`

func TestIntegrationApplyDeployment(t *testing.T) {
	c := startCluster(t)
	if out := c.mustRun(deployV1, "apply", "-f", "-"); out != "deployment.apps/web created\n" {
		t.Fatalf("apply = %q", out)
	}
	if out := c.mustRun(deployV1, "apply", "-f", "-"); out != "deployment.apps/web unchanged\n" {
		t.Fatalf("re-apply = %q", out)
	}
	v2 := strings.Replace(strings.Replace(deployV1, "busybox:1", "busybox:2", 1), "        - {name: B, value: \"2\"}\n", "", 1)
	if out := c.mustRun(v2, "apply", "-f", "-"); out != "deployment.apps/web configured\n" {
		t.Fatalf("apply v2 = %q", out)
	}
	d, err := client.Resource[api.Deployment](c.client).Namespace("default").Get(context.Background(), "web")
	if err != nil {
		t.Fatal(err)
	}
	ctr := d.Spec.Template.Spec.Containers[0]
	if ctr.Image != "busybox:2" || len(ctr.Env) != 1 || ctr.Env[0].Name != "A" {
		t.Errorf("after apply v2: image %q env %+v", ctr.Image, ctr.Env)
	}
	out := c.mustRun("", "get", "deploy,cm")
	if !strings.Contains(out, "deployment.apps/web ") || !strings.Contains(out, "UP-TO-DATE") {
		t.Errorf("get deploy,cm = %q", out)
	}
	if out := c.mustRun(v2, "delete", "-f", "-"); out != "deployment.apps \"web\" deleted from default namespace\n" {
		t.Errorf("delete -f = %q", out)
	}
}

func TestIntegrationConfig(t *testing.T) {
	c := startTLSCluster(t)
	view := c.mustRun("", "config", "view")
	if !strings.Contains(view, "certificate-authority-data: DATA+OMITTED") || !strings.Contains(view, "REDACTED") {
		t.Errorf("config view does not redact: %q", view)
	}
	if raw := c.mustRun("", "config", "view", "--raw"); strings.Contains(raw, "DATA+OMITTED") {
		t.Errorf("config view --raw redacts: %q", raw)
	}
	cur := strings.TrimSpace(c.mustRun("", "config", "current-context"))
	ctxs := c.mustRun("", "config", "get-contexts")
	if !strings.HasPrefix(ctxs, "CURRENT") || !strings.Contains(ctxs, "*         "+cur) {
		t.Errorf("get-contexts = %q (current %q)", ctxs, cur)
	}
	if _, errOut, code := c.run("", "config", "use-context", "nope"); code != 1 ||
		errOut != "error: no context exists with the name: \"nope\"\n" {
		t.Errorf("use-context nope: code %d stderr %q", code, errOut)
	}
	if out := c.mustRun("", "config", "use-context", cur); out != "Switched to context \""+cur+"\".\n" {
		t.Errorf("use-context = %q", out)
	}
	c.mustRun("", "version")

	// set-context --current --namespace changes where namespaced verbs go.
	if out := c.mustRun("", "config", "set-context", "--current", "--namespace=kube-system"); out != "Context \""+cur+"\" modified.\n" {
		t.Errorf("set-context --current = %q", out)
	}
	if out := c.mustRun("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: here}\n", "apply", "-f", "-"); out != "configmap/here created\n" {
		t.Errorf("apply = %q", out)
	}
	if _, err := client.Resource[api.ConfigMap](c.client).Namespace("kube-system").Get(context.Background(), "here"); err != nil {
		t.Errorf("the context's namespace was not used: %v", err)
	}
	if out := c.mustRun("", "config", "view", "--minify", "-o", "jsonpath={.contexts[*].context.namespace}"); out != "kube-system" {
		t.Errorf("config view --minify -o jsonpath = %q", out)
	}
	// A second context, then --context picks it for one command only.
	cfgUser := strings.TrimSpace(c.mustRun("", "config", "view", "-o", "jsonpath={.contexts[0].context.user}"))
	cfgCluster := strings.TrimSpace(c.mustRun("", "config", "view", "-o", "jsonpath={.contexts[0].context.cluster}"))
	if out := c.mustRun("", "config", "set-context", "other", "--cluster="+cfgCluster, "--user="+cfgUser, "--namespace=team-x"); out != "Context \"other\" created.\n" {
		t.Errorf("set-context other = %q", out)
	}
	if _, errOut, code := c.run("", "--context", "other", "get", "cm"); code != 0 || errOut != "No resources found in team-x namespace.\n" {
		t.Errorf("--context other get cm: exit %d stderr %q", code, errOut)
	}
	if out := c.mustRun("", "config", "view", "--minify", "--context", "other", "-o", "jsonpath={.contexts[*].name}"); out != "other" {
		t.Errorf("config view --minify --context other = %q", out)
	}
	if got := fields(c.mustRun("", "config", "get-contexts")); len(got) != 3 || got[2] != "other "+cfgCluster+" "+cfgUser+" team-x" {
		t.Errorf("get-contexts after set-context: %q", got)
	}
	if out := c.mustRun("", "config", "get-contexts", "-o", "name"); out != cur+"\nother\n" {
		t.Errorf("get-contexts -o name = %q", out)
	}
	if got := fields(c.mustRun("", "config", "get-contexts", "other", "--no-headers")); len(got) != 1 || got[0] != "other "+cfgCluster+" "+cfgUser+" team-x" {
		t.Errorf("get-contexts other --no-headers: %q", got)
	}
	c.wantFail("error: context nope not found", "config", "get-contexts", "nope")
}

// TestIntegrationKubeconfigPrecedence runs the binary without --kubeconfig:
// $KUBECONFIG files are merged (the first definition wins), and
// ~/.kube/config is read only when $KUBECONFIG is empty.
func TestIntegrationKubeconfigPrecedence(t *testing.T) {
	c := startTLSCluster(t)
	cfg, err := kubeconfig.Load(c.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	run := func(env []string, args ...string) (string, string, int) {
		t.Helper()
		cmd := exec.Command(binary, args...)
		cmd.Env = append(os.Environ(), env...)
		var out, errOut strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errOut.String(), code
	}

	// ~/.kube/config when $KUBECONFIG is empty.
	home := t.TempDir()
	if err := kubeconfig.Write(filepath.Join(home, ".kube", "config"), cfg); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := run([]string{"HOME=" + home, "KUBECONFIG="}, "get", "ns", "default", "-o", "name"); code != 0 || out != "namespace/default\n" {
		t.Errorf("with ~/.kube/config: exit %d stdout %q stderr %q", code, out, errOut)
	}

	// $KUBECONFIG: a file with only a context (namespace kube-system) that
	// names the cluster and user of a second file; a missing file is skipped.
	dir := t.TempDir()
	ctxOnly := &kubeconfig.Config{CurrentContext: "mine", Contexts: []kubeconfig.NamedContext{{Name: "mine",
		Context: kubeconfig.Context{Cluster: cfg.Contexts[0].Context.Cluster, AuthInfo: cfg.Contexts[0].Context.AuthInfo, Namespace: "kube-system"}}}}
	first := filepath.Join(dir, "first")
	if err := kubeconfig.Write(first, ctxOnly); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + t.TempDir(), "KUBECONFIG=" + first + string(filepath.ListSeparator) + filepath.Join(dir, "missing") + string(filepath.ListSeparator) + c.kubeconfig}
	if out, _, code := run(env, "config", "current-context"); code != 0 || out != "mine\n" {
		t.Errorf("merged current-context: exit %d %q", code, out)
	}
	// (kube-system holds the apiserver's extension-apiserver-authentication
	// ConfigMap, as in Kubernetes, but no Deployment.)
	if _, errOut, code := run(env, "get", "deploy"); code != 0 || errOut != "No resources found in kube-system namespace.\n" {
		t.Errorf("merged kubeconfig get deploy: exit %d stderr %q", code, errOut)
	}
	// --kubeconfig wins over $KUBECONFIG.
	if out, _, code := run(env, "--kubeconfig", c.kubeconfig, "config", "current-context"); code != 0 || out != cfg.CurrentContext+"\n" {
		t.Errorf("--kubeconfig over $KUBECONFIG: exit %d %q", code, out)
	}
	// Nothing anywhere: kubectl's message.
	if _, errOut, code := run([]string{"HOME=" + t.TempDir(), "KUBECONFIG="}, "get", "pods"); code != 1 ||
		errOut != "error: invalid configuration: no configuration has been provided\n" {
		t.Errorf("no kubeconfig: exit %d stderr %q", code, errOut)
	}
}

// TestIntegrationConfigEntries builds a kubeconfig from nothing with
// set-cluster, set-credentials and set-context, uses it, then renames and
// deletes the context.
func TestIntegrationConfigEntries(t *testing.T) {
	c := startTLSCluster(t)
	pkiDir := filepath.Dir(c.kubeconfig)
	path := filepath.Join(t.TempDir(), "new", "config")
	k := func(args ...string) string {
		t.Helper()
		return c.mustRun("", append([]string{"--kubeconfig", path}, args...)...)
	}
	steps := []struct {
		args []string
		want string
	}{
		{[]string{"config", "set-cluster", "local", "--server=" + c.client.Host(), "--certificate-authority=" + filepath.Join(pkiDir, "ca.crt"), "--embed-certs"}, "Cluster \"local\" set.\n"},
		{[]string{"config", "set-credentials", "admin", "--client-certificate=" + filepath.Join(pkiDir, "admin.crt"), "--client-key=" + filepath.Join(pkiDir, "admin.key")}, "User \"admin\" set.\n"},
		{[]string{"config", "set-context", "work", "--cluster=local", "--user=admin", "--namespace=kube-system"}, "Context \"work\" created.\n"},
		{[]string{"config", "use-context", "work"}, "Switched to context \"work\".\n"},
		{[]string{"get", "ns", "kube-system", "-o", "name"}, "namespace/kube-system\n"},
		{[]string{"config", "rename-context", "work", "play"}, "Context \"work\" renamed to \"play\".\n"},
		{[]string{"config", "current-context"}, "play\n"},
	}
	for _, s := range steps {
		if out := k(s.args...); out != s.want {
			t.Errorf("%v = %q, want %q", s.args, out, s.want)
		}
	}
	// The certificate was embedded, the key left as a path.
	cfg, err := kubeconfig.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Clusters[0].Cluster.CertificateAuthorityData) == 0 || cfg.Users[0].User.ClientKey != filepath.Join(pkiDir, "admin.key") {
		t.Errorf("written config: %+v %+v", cfg.Clusters, cfg.Users)
	}
	out, errOut, code := c.run("", "--kubeconfig", path, "config", "delete-context", "play")
	if code != 0 || out != "deleted context play from "+path+"\n" || !strings.HasPrefix(errOut, "warning: this removed your active context") {
		t.Errorf("delete-context: exit %d stdout %q stderr %q", code, out, errOut)
	}
	c.wantFail("error: cannot delete context play, not in "+path, "--kubeconfig", path, "config", "delete-context", "play")
}
