package realcomponents

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/controller-manager/controllermanagertest"
	"github.com/minik8s/minik8s/internal/daemon/daemontest"
)

// controllerRoles are the roles of kube's own controllers that minik8s'
// controller-manager runs (kube-controller-manager gives each controller
// its service account's identity; ours runs them all as one user, so an
// administrator binds that user to the same roles).
var controllerRoles = []string{
	"system:controller:deployment-controller",
	"system:controller:replicaset-controller",
	"system:controller:endpoint-controller",
	"system:controller:endpointslice-controller",
	"system:controller:generic-garbage-collector",
	"system:controller:job-controller",
	"system:controller:namespace-controller",
	"system:controller:node-controller",
	"system:controller:service-account-controller",
	"system:controller:root-ca-cert-publisher",
}

// TestOursOnRealAPIServer: minik8s' scheduler and controller-manager run
// unchanged against the real kube-apiserver v1.37, as the users kube's
// bootstrap policy knows them by: a Deployment applied with the real
// kubectl becomes a ReplicaSet and Running pods that our scheduler bound
// to nodes.
func TestOursOnRealAPIServer(t *testing.T) {
	t.Parallel()
	k := startKubeAPIServer(t)
	adminConfig := k.kubeconfig(t, "kubernetes-admin", "system:masters")
	admin := newClient(t, adminConfig)

	// Generous: in CI this runs beside the package's other kube-apiservers
	// and the other packages' tests (12 s alone, 30 s under load here).
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	for _, role := range controllerRoles {
		kubectl(ctx, t, adminConfig, "", "create", "clusterrolebinding", "minik8s:"+strings.TrimPrefix(role, "system:controller:"),
			"--clusterrole="+role, "--user=system:kube-controller-manager")
	}

	ours := []*component{
		launch(t, "scheduler", daemontest.Build(t, "github.com/minik8s/minik8s/scheduler"),
			"--kubeconfig="+k.kubeconfig(t, "system:kube-scheduler"), "--bind-address=127.0.0.1", "--secure-port=0"),
		launch(t, "controller-manager", daemontest.Build(t, "github.com/minik8s/minik8s/controller-manager"),
			"--kubeconfig="+k.kubeconfig(t, "system:kube-controller-manager"), "--bind-address=127.0.0.1", "--secure-port=0",
			"--allocate-node-cidrs=false"),
	}

	runNodes(t, admin, 2)
	controllermanagertest.RunKubelet(t, admin, controllermanagertest.KubeletOptions{Nodes: 2, LeaveBinding: true})
	if out := kubectl(ctx, t, adminConfig, deployment, "apply", "-f", "-"); !strings.Contains(out, "deployment.apps/web created") {
		t.Fatalf("kubectl apply: %s", out)
	}
	waitWebRunning(ctx, t, admin)
	events := kubectl(ctx, t, adminConfig, "", "get", "events", "-n", "default", "--field-selector=reason=Scheduled", "-o", "jsonpath={range .items[*]}{.source.component}{\"\\n\"}{end}")
	if n := strings.Count(events, "default-scheduler"); n < 3 {
		t.Errorf("%d Scheduled events from default-scheduler, want 3:\n%s", n, events)
	}
	waitFor(ctx, t, "the deployment to have 3 available replicas", func() (bool, string) {
		out := kubectl(ctx, t, adminConfig, "", "get", "deployment", "web", "-o", "jsonpath={.status.availableReplicas}")
		return out == "3", "availableReplicas " + strconv.Quote(out)
	})
	// Nothing they asked for was refused, unknown or in an encoding the
	// real apiserver does not take, and nothing went wrong on their side.
	for _, c := range ours {
		b, err := os.ReadFile(c.LogPath)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, "level=ERROR") || strings.Contains(line, "forbidden") ||
				strings.Contains(line, "could not find the requested resource") || strings.Contains(line, "415") {
				t.Errorf("%s: %s", c.name, line)
			}
		}
	}
}
