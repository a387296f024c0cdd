package integration

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/oracle"
)

// kubectlRunner runs the real kubectl against a test server.
type kubectlRunner struct {
	t          *testing.T
	path, conf string
}

func newKubectl(t *testing.T, s *apiservertest.Server) *kubectlRunner {
	return &kubectlRunner{t: t, path: oracle.Path(t, "kubectl"), conf: s.Options.WriteKubeconfig}
}

// run runs kubectl and returns its output and error.
func (k *kubectlRunner) run(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, k.path, append([]string{"--kubeconfig", k.conf}, args...)...).CombinedOutput()
	return string(out), err
}

// must runs kubectl and fails the test if it fails.
func (k *kubectlRunner) must(args ...string) string {
	k.t.Helper()
	out, err := k.run(args...)
	if err != nil {
		k.t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// TestCRDKubectl applies the Kubernetes documentation's CronTab CRD and an
// object of it with the real kubectl (its default, strict validation
// included), and reads them back as kubectl prints them.
func TestCRDKubectl(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t, apiservertest.WithTLS)
	k := newKubectl(t, s)
	if out := k.must("apply", "-f", "testdata/crontab-crd.yaml"); out != "customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com created\n" {
		t.Errorf("apply crd: %q", out)
	}
	k.must("wait", "--for=condition=Established", "crd/crontabs.stable.example.com", "--timeout=10s")
	// kube-apiserver v1.37's CRD table (TestCRDTableAsKube compares it).
	if out := k.must("get", "crd"); !strings.HasPrefix(out, "NAME                          SCOPE        VERSIONS      CREATED AT\ncrontabs.stable.example.com   Namespaced   v1(storage)   20") {
		t.Errorf("get crd:\n%s", out)
	}
	if out := k.must("get", "crd", "-o", "custom-columns=NAME:.metadata.name,ACCEPTED:.status.conditions[?(@.type=='NamesAccepted')].reason"); out != "NAME                          ACCEPTED\ncrontabs.stable.example.com   NoConflicts\n" {
		t.Errorf("get crd: %q", out)
	}
	// kubectl asks for strict field validation: the unknown field is refused.
	out, err := k.run("apply", "-f", "testdata/crontab.yaml")
	if err == nil || !strings.Contains(out, `Error from server (BadRequest): error when creating "testdata/crontab.yaml": CronTab in version "v1" cannot be handled as a CronTab: strict decoding error: unknown field "spec.unknownField"`) {
		t.Errorf("strict apply: %v\n%s", err, out)
	}
	if out := k.must("apply", "--validate=warn", "-f", "testdata/crontab.yaml"); out != "Warning: unknown field \"spec.unknownField\"\ncrontab.stable.example.com/my-new-cron-object created\n" {
		t.Errorf("apply crontab: %q", out)
	}
	out = k.must("get", "crontabs")
	lines := strings.Split(out, "\n")
	if len(lines) != 3 || lines[0] != "NAME                 SPEC          REPLICAS   AGE" || !strings.HasPrefix(lines[1], "my-new-cron-object   * * * * */5   2          ") {
		t.Errorf("get crontabs:\n%s", out)
	}
	// The short name, and the unknown field pruned.
	if out := k.must("get", "ct", "my-new-cron-object", "-o", "jsonpath={.spec}"); out != `{"cronSpec":"* * * * */5","image":"my-awesome-cron-image","replicas":2}` {
		t.Errorf("spec = %s", out)
	}

	// A custom resource beside an ordinary kind in one file (configured:
	// its unknown field is in the patch again, and pruned again).
	mixed := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n---\n" + readFile(t, "testdata/crontab.yaml")
	if out := k.mustStdin(mixed, "apply", "--validate=false", "-f", "-"); out != "configmap/cm created\ncrontab.stable.example.com/my-new-cron-object configured\n" {
		t.Errorf("apply mixed: %q", out)
	}
	if out := k.must("patch", "crontab", "my-new-cron-object", "--type=merge", "-p", `{"spec":{"replicas":5}}`); out != "crontab.stable.example.com/my-new-cron-object patched\n" {
		t.Errorf("patch: %q", out)
	}
	if out := k.must("get", "crontab", "my-new-cron-object", "-o", "jsonpath={.spec.replicas} {.metadata.generation}"); out != "5 2" {
		t.Errorf("after patch: %q", out)
	}
	// kubectl explain reads the published OpenAPI v3 schema.
	if out := k.must("explain", "crontabs.spec"); !strings.Contains(out, "cronSpec\t<string>") || !strings.Contains(out, "replicas\t<integer>") {
		t.Errorf("explain:\n%s", out)
	}
	// Deleting the CRD deletes its objects, and then it is gone.
	if out := k.must("delete", "crd", "crontabs.stable.example.com"); out != "customresourcedefinition.apiextensions.k8s.io \"crontabs.stable.example.com\" deleted\n" {
		t.Errorf("delete crd: %q", out)
	}
	if out, err := k.run("get", "crd", "crontabs.stable.example.com"); err == nil {
		t.Errorf("the CRD is still there after kubectl delete waited: %s", out)
	}
}

// TestCRDKubectlWithoutTheKind applies a file whose middle object is of a
// kind no CRD defines: the real kubectl's default validation must not stop
// at it (it lists CRDs to find the kind), so the ordinary objects around it
// are created and only it fails.
func TestCRDKubectlWithoutTheKind(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t, apiservertest.WithTLS)
	k := newKubectl(t, s)
	out, err := k.run("apply", "-f", "testdata/mixed.yaml")
	if err == nil || !strings.Contains(out, "configmap/before-unknown created") || !strings.Contains(out, "configmap/after-unknown created") ||
		!strings.Contains(out, `no matches for kind "Unknown" in version "nowhere.example.com/v1"`) || strings.Contains(out, "failed to list CRDs") {
		t.Errorf("kubectl apply: %v\n%s", err, out)
	}
}

// TestCRDKubectlCategoriesAndScale uses a CRD's categories, short name and
// scale subresource through the real kubectl.
func TestCRDKubectlCategoriesAndScale(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t, apiservertest.WithTLS)
	k := newKubectl(t, s)
	k.mustStdin(widgetCRD, "apply", "-f", "-")
	k.must("wait", "--for=condition=Established", "crd/widgets.example.com", "--timeout=10s")
	k.mustStdin("apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  size: 1m\n  replicas: 1\n", "apply", "-f", "-")
	if out := k.must("get", "all"); !strings.Contains(out, "widget.example.com/w") {
		t.Errorf("get all:\n%s", out)
	}
	if out := k.must("get", "toys"); !strings.HasPrefix(out, "NAME   COLOR   REPLICAS   AGE\nw      red     1          ") {
		t.Errorf("get toys:\n%s", out)
	}
	if out := k.must("scale", "wd/w", "--replicas=3"); out != "widget.example.com/w scaled\n" {
		t.Errorf("scale: %q", out)
	}
	if out := k.must("get", "wd", "w", "-o", "jsonpath={.spec.replicas}"); out != "3" {
		t.Errorf("replicas after scale: %q", out)
	}
	out, err := k.runStdin("apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: bad\nspec:\n  size: huge\n  replicas: 20\n", "apply", "-f", "-")
	if err == nil || !strings.Contains(out, `The Widget "bad" is invalid: `) || !strings.Contains(out, "spec.replicas: Invalid value: 20: spec.replicas in body should be less than or equal to 10") ||
		!strings.Contains(out, `spec.size: Invalid value: "huge": spec.size in body should match '^[0-9]+(cm|m)$'`) {
		t.Errorf("invalid widget: %v\n%s", err, out)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// runStdin runs kubectl with stdin.
func (k *kubectlRunner) runStdin(stdin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, k.path, append([]string{"--kubeconfig", k.conf}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (k *kubectlRunner) mustStdin(stdin string, args ...string) string {
	k.t.Helper()
	out, err := k.runStdin(stdin, args...)
	if err != nil {
		k.t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}
