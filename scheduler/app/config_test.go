package app

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestConfigFile: a KubeSchedulerConfiguration's fields set the options,
// and flags on the command line win over them.
func TestConfigFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "scheduler.yaml")
	err := os.WriteFile(file, []byte(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
parallelism: 4
percentageOfNodesToScore: 30
podInitialBackoffSeconds: 2
podMaxBackoffSeconds: 20
clientConnection:
  kubeconfig: /etc/kubernetes/scheduler.conf
  qps: 100
  burst: 200
  contentType: application/vnd.kubernetes.protobuf
leaderElection:
  leaderElect: false
  leaseDuration: 30s
  resourceLock: leases
  resourceName: my-scheduler
profiles:
- schedulerName: default-scheduler
`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (Options, string) {
		t.Helper()
		var got Options
		cmd := newCommand(func(_ context.Context, o Options, _ *slog.Logger) error { got = o; return nil })
		var stdout, stderr bytes.Buffer
		if code := cmd.Execute(args, &stdout, &stderr); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr.String())
		}
		return got, stderr.String()
	}

	o, logs := run("--config", file)
	le := o.LeaderElection
	if o.Parallelism != 4 || o.PercentageOfNodesToScore != 30 || o.PodInitialBackoff != 2*time.Second || o.PodMaxBackoff != 20*time.Second ||
		o.Client.Kubeconfig != "/etc/kubernetes/scheduler.conf" || o.Client.QPS != 100 || o.Client.Burst != 200 ||
		le.LeaderElect || le.LeaseDuration != 30*time.Second || le.ResourceName != "my-scheduler" || le.ResourceNamespace != "kube-system" {
		t.Errorf("the file's fields did not take effect: %+v", o)
	}
	if !bytes.Contains([]byte(logs), []byte("clientConnection.contentType profiles")) {
		t.Errorf("no warning naming the fields ignored: %q", logs)
	}

	o, _ = run("--parallelism=8", "--config="+file, "--leader-elect=true", "--kube-api-qps=5")
	if o.Parallelism != 8 || !o.LeaderElection.LeaderElect || o.Client.QPS != 5 || o.Client.Burst != 200 || o.PercentageOfNodesToScore != 30 {
		t.Errorf("flags did not override the file: %+v", o)
	}
}
