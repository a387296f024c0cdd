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

func TestCRDSmoke(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t, apiservertest.WithTLS)
	k := newKubectl(t, s)
	t.Log(k.must("apply", "-f", "testdata/crontab-crd.yaml"))
	t.Log(k.must("get", "crd"))
	t.Log(k.must("wait", "--for=condition=Established", "crd/crontabs.stable.example.com", "--timeout=10s"))
	t.Log(k.must("apply", "-f", "testdata/crontab.yaml"))
	t.Log(k.must("get", "crontabs"))
	t.Log(k.must("get", "ct", "-o", "yaml"))
}
