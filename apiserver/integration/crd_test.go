package integration

import (
	"context"
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
	if out := k.must("get", "crd", "-o", "custom-columns=NAME:.metadata.name,ACCEPTED:.status.conditions[?(@.type=='NamesAccepted')].reason"); out != "NAME                          ACCEPTED\ncrontabs.stable.example.com   NoConflicts\n" {
		t.Errorf("get crd: %q", out)
	}
	if out := k.must("apply", "-f", "testdata/crontab.yaml"); out != "crontab.stable.example.com/my-new-cron-object created\n" {
		t.Errorf("apply crontab: %q", out)
	}
	out := k.must("get", "crontabs")
	lines := strings.Split(out, "\n")
	if len(lines) != 3 || lines[0] != "NAME                 SPEC          REPLICAS   AGE" || !strings.HasPrefix(lines[1], "my-new-cron-object   * * * * */5   2          ") {
		t.Errorf("get crontabs:\n%s", out)
	}
	// The short name, and the unknown field pruned.
	if out := k.must("get", "ct", "my-new-cron-object", "-o", "jsonpath={.spec}"); out != `{"cronSpec":"* * * * */5","image":"my-awesome-cron-image","replicas":2}` {
		t.Errorf("spec = %s", out)
	}
}
