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

// TestConfigFile: a KubeletConfiguration's fields set the options, and
// flags on the command line win over them.
func TestConfigFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "kubelet.yaml")
	err := os.WriteFile(file, []byte(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: 10350
serverTLSBootstrap: true
authentication:
  x509:
    clientCAFile: /etc/kubernetes/pki/ca.crt
  webhook:
    enabled: false
    cacheTTL: 30s
cgroupDriver: systemd
containerRuntimeEndpoint: unix:///run/containerd/other.sock
imageServiceEndpoint: unix:///run/containerd/images.sock
clusterDNS: [10.96.0.10, 10.96.0.11]
clusterDomain: cluster.example
maxPods: 50
syncFrequency: 30s
evictionHard:
  memory.available: 200Mi
  nodefs.available: 5%
systemReserved:
  cpu: 100m
  memory: 100Mi
registerWithTaints:
- key: dedicated
  value: infra
  effect: NoSchedule
- key: gpu
  effect: NoExecute
crashLoopBackOff:
  maxContainerRestartPeriod: 1m
nodeLeaseDurationSeconds: 20
logging:
  verbosity: 4
`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (Options, *slog.Logger, string) {
		t.Helper()
		var got Options
		var log *slog.Logger
		cmd := newCommand(func(_ context.Context, o Options, l *slog.Logger) error { got, log = o, l; return nil })
		var stdout, stderr bytes.Buffer
		if code := cmd.Execute(args, &stdout, &stderr); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr.String())
		}
		return got, log, stderr.String()
	}

	o, log, logs := run("--config", file)
	if o.Server.Address != "127.0.0.1" || o.Server.Port != 10350 || o.Server.ClientCAFile != "/etc/kubernetes/pki/ca.crt" ||
		o.ContainerRuntimeEndpoint != "unix:///run/containerd/other.sock" || o.ImageServiceEndpoint != "unix:///run/containerd/images.sock" || o.ClusterDNS != "10.96.0.10,10.96.0.11" || o.ClusterDomain != "cluster.example" ||
		o.Node.MaxPods != 50 || o.SyncFrequency != 30*time.Second || o.BackoffMax != time.Minute || o.Node.NodeLeaseDurationSeconds != 20 ||
		o.Node.EvictionHard != "memory.available<200Mi,nodefs.available<5%" || o.Node.SystemReserved != "cpu=100m,memory=100Mi" ||
		o.Node.RegisterWithTaints != "dedicated=infra:NoSchedule,gpu:NoExecute" || !o.Server.RotateServerCertificates ||
		o.Server.AuthenticationTokenWebhook || o.Server.TokenWebhookCacheTTL != 30*time.Second {
		t.Errorf("the file's fields did not take effect: %+v", o)
	}
	if !log.Enabled(context.Background(), slog.LevelDebug) {
		t.Error("logging.verbosity 4 did not enable debug records")
	}
	if !bytes.Contains([]byte(logs), []byte("fields=[cgroupDriver]")) {
		t.Errorf("no warning naming the fields ignored: %q", logs)
	}

	o, log, _ = run("--max-pods=30", "--config="+file, "--cluster-dns=10.0.0.10", "--v=0")
	if o.Node.MaxPods != 30 || o.ClusterDNS != "10.0.0.10" || o.SyncFrequency != 30*time.Second {
		t.Errorf("flags did not override the file: %+v", o)
	}
	if log.Enabled(context.Background(), slog.LevelDebug) {
		t.Error("--v=0 did not override logging.verbosity")
	}
}
