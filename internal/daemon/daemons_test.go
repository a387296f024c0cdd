package daemon_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	apiserver "github.com/minik8s/minik8s/apiserver/app"
	controllermanager "github.com/minik8s/minik8s/controller-manager/app"
	"github.com/minik8s/minik8s/internal/clusterdns"
	"github.com/minik8s/minik8s/internal/daemon"
	"github.com/minik8s/minik8s/internal/ingress"
	"github.com/minik8s/minik8s/internal/version"
	kubeproxy "github.com/minik8s/minik8s/kube-proxy/app"
	kubelet "github.com/minik8s/minik8s/kubelet/app"
	"github.com/minik8s/minik8s/kubelet/hollow"
	scheduler "github.com/minik8s/minik8s/scheduler/app"
)

// daemons are the real binaries' commands and the --help sections each
// prints, in order.
var daemons = []struct {
	name     string
	command  func() daemon.Command
	sections []string
}{
	{"apiserver", apiserver.NewCommand, []string{"Generic", "Etcd", "Secure serving", "Insecure serving", "Auditing", "Authentication", "Aggregation", "Admission", "Misc", "Logs", "Global"}},
	{"scheduler", scheduler.NewCommand, []string{"Misc", "Scheduling", "Secure serving", "Authentication", "Authorization", "Leader election", "Logs", "Global"}},
	{"controller-manager", controllermanager.NewCommand, []string{"Generic", "Secure serving", "Authentication", "Authorization", "Daemonset controller",
		"Deployment controller", "Endpoint controller", "Endpointslice controller", "Endpointslicemirroring controller", "Garbagecollector controller", "Job controller",
		"Namespace controller", "Horizontalpodautoscaling controller", "Nodeipam controller", "Nodelifecycle controller",
		"Local-path-provisioner controller", "Persistentvolume-binder controller", "Podgc controller", "Replicaset controller", "Replicationcontroller controller", "Resourcequota controller", "Serviceaccount controller", "Statefulset controller", "Leader election", "Misc", "Logs", "Global"}},
	{"kubelet", kubelet.NewCommand, []string{"Misc", "Bootstrap", "Node", "Serving", "Container runtime", "Pods", "Networking", "Logs", "Global"}},
	{"kube-proxy", kubeproxy.NewCommand, []string{"Misc", "Proxy", "Network", "Logs", "Global"}},
	{"hollow-nodes", hollow.NewCommand, []string{"Misc", "Nodes", "Serving", "Logs", "Global"}},
	{"cluster-dns", clusterdns.NewCommand, []string{"Misc", "DNS", "Serving", "Logs", "Global"}},
	{"ingress-controller", ingress.NewCommand, []string{"Misc", "Ingress", "Secure serving", "Authentication", "Authorization", "Logs", "Global"}},
}

// TestDaemonsHelp: every daemon prints its flags grouped in sections on
// stdout, with the same logs and global flags, and exits 0.
func TestDaemonsHelp(t *testing.T) {
	for _, d := range daemons {
		t.Run(d.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := d.command().Execute([]string{"--help"}, &stdout, &stderr); code != 0 || stderr.Len() > 0 {
				t.Fatalf("--help: exit %d, stderr %q", code, stderr.String())
			}
			help := stdout.String()
			if !strings.Contains(help, "\nUsage:\n  "+d.name+" [flags]\n") {
				t.Errorf("no usage line for %s:\n%s", d.name, help)
			}
			if got := sections(help); !slices.Equal(got, d.sections) {
				t.Errorf("sections %q, want %q", got, d.sections)
			}
			logs := help[strings.Index(help, "\nLogs flags:"):strings.Index(help, "\nGlobal flags:")]
			for _, flag := range []string{"-v, --v Level", "--log-level string", "--logging-format string"} {
				if !strings.Contains(logs, flag) {
					t.Errorf("Logs flags lack %q:\n%s", flag, logs)
				}
			}
			hasConfig := strings.Contains(help, "--config string")
			if want := d.name == "kubelet" || d.name == "scheduler"; hasConfig != want {
				t.Errorf("--config listed: %v, want %v", hasConfig, want)
			}
		})
	}
}

// TestDaemonsTakeKubeVerbosity: --v=2, as Kubernetes manifests pass it,
// parses on every daemon (here with --version, which then stops it), and
// --version prints the version.
func TestDaemonsTakeKubeVerbosity(t *testing.T) {
	for _, d := range daemons {
		for _, args := range [][]string{{"--v=2", "--version"}, {"-v", "2", "--log-level=info", "--version"}} {
			var stdout, stderr bytes.Buffer
			if code := d.command().Execute(args, &stdout, &stderr); code != 0 || stderr.Len() > 0 || stdout.String() != "minik8s "+version.Release()+" (Kubernetes "+version.Kubernetes()+")\n" {
				t.Errorf("%s %v: exit %d, stdout %q, stderr %q", d.name, args, code, stdout.String(), stderr.String())
			}
		}
	}
}
