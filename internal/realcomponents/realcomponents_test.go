package realcomponents

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/controller-manager/controllermanagertest"
	"github.com/minik8s/minik8s/internal/client"
)

// response is one request a component logged at -v=6.
type response struct {
	verb, url, status string
}

var responseLine = regexp.MustCompile(`"Response" verb="([A-Z]+)" url="([^"]+)" status="([^"]*)"`)

// responses reads the requests the component has logged so far.
func (c *component) responses(t *testing.T) []response {
	t.Helper()
	f, err := os.Open(c.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rs []response
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if m := responseLine.FindStringSubmatch(sc.Text()); m != nil {
			rs = append(rs, response{m[1], m[2], m[3]})
		}
	}
	return rs
}

// unserved returns the requests answered 404 on a collection (what an
// informer lists and watches: the kind is not served) or 415 (an encoding
// refused); a 404 for one named object is an ordinary NotFound.
func unserved(rs []response) []string {
	var bad []string
	for _, r := range rs {
		path, _, _ := strings.Cut(r.url, "?")
		switch {
		case strings.HasPrefix(r.status, "415"), strings.HasPrefix(r.status, "403"):
			bad = append(bad, r.verb+" "+path+" "+r.status)
		case strings.HasPrefix(r.status, "404") && isCollection(path):
			bad = append(bad, r.verb+" "+path+" "+r.status)
		}
	}
	return bad
}

// isCollection reports whether an API path names a resource collection:
// /api/v1/RES, /api/v1/namespaces/NS/RES, /apis/G/V/RES,
// /apis/G/V/namespaces/NS/RES. A group-version document (/apis/G/V) is not
// one: the controller-manager probes versions it may use.
func isCollection(path string) bool {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	var rest []string
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		rest = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		rest = parts[3:]
	default:
		return false
	}
	if len(rest) >= 2 && rest[0] == "namespaces" {
		rest = rest[2:]
		if len(rest) == 0 {
			return false // a namespace itself
		}
	}
	return len(rest) == 1
}

// runNodes registers n Ready nodes ("node-0" ...) with room for pods, and
// renews their Leases until the test ends, as kubelets do.
func runNodes(t *testing.T, c *client.Client, n int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	for i := range n {
		name := fmt.Sprintf("node-%d", i)
		now := api.Now()
		res := api.ResourceList{
			api.ResourceCPU:    resource.MustParse("4"),
			api.ResourceMemory: resource.MustParse("8Gi"),
			api.ResourcePods:   resource.MustParse("110"),
		}
		node := &api.Node{
			ObjectMeta: api.ObjectMeta{Name: name, Labels: map[string]string{api.LabelHostname: name, "kubernetes.io/os": "linux"}},
			Status: api.NodeStatus{
				Capacity: res, Allocatable: res,
				Conditions: []api.NodeCondition{{Type: api.NodeReady, Status: api.ConditionTrue, Reason: "KubeletReady",
					Message: "kubelet is posting ready status", LastHeartbeatTime: now, LastTransitionTime: now}},
				Addresses: []api.NodeAddress{{Type: api.NodeInternalIP, Address: fmt.Sprintf("10.0.0.%d", i+1)}},
			},
		}
		if _, err := client.Resource[api.Node](c).Create(ctx, node); err != nil {
			t.Fatalf("register %s: %v", name, err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			leases := client.Resource[api.Lease](c).Namespace(api.NamespaceNodeLease)
			tick := time.NewTicker(2 * time.Second)
			defer tick.Stop()
			for {
				now := api.NowMicro()
				if l, err := leases.Get(ctx, name); err == nil {
					l.Spec.RenewTime = &now
					_, _ = leases.Update(ctx, l)
				} else {
					secs, holder := int32(40), name
					_, _ = leases.Create(ctx, &api.Lease{ObjectMeta: api.ObjectMeta{Namespace: api.NamespaceNodeLease, Name: name},
						Spec: api.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &secs, RenewTime: &now}})
				}
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
			}
		}()
	}
}

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: registry.k8s.io/pause:3.10
        resources:
          requests: {cpu: 100m, memory: 64Mi}
`

// workloads are objects of the served kinds the real controllers act on.
const workloads = `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: default}
spec:
  serviceName: db
  replicas: 2
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: pg, image: postgres:16}]}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: default}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: a, image: agent:1}]}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: db, namespace: default}
spec: {minAvailable: 1, selector: {matchLabels: {app: db}}}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv0}
spec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], hostPath: {path: /tmp/pv0}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: default}
spec: {accessModes: [ReadWriteOnce], storageClassName: "", resources: {requests: {storage: 1Gi}}}
`

// TestRealSchedulerAndControllerManager: the real kube-scheduler and
// kube-controller-manager, authorized by the bootstrap RBAC policy as
// themselves, turn a Deployment applied with the real kubectl into a
// ReplicaSet and Running pods on simulated nodes; their StatefulSet,
// DaemonSet, volume binding and disruption controllers work on the kinds
// served for them.
func TestRealSchedulerAndControllerManager(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the real kube-scheduler and kube-controller-manager (skipped with -short)")
	}
	s := apiservertest.Start(t, apiservertest.WithTLS)
	admin := s.AdminClient(t)
	pki := s.Options.CertDir
	sched := startKube(t, "kube-scheduler", filepath.Join(pki, "scheduler.kubeconfig"))
	kcm := startKube(t, "kube-controller-manager", filepath.Join(pki, "controller-manager.kubeconfig"))
	runNodes(t, admin, 2)
	controllermanagertest.RunKubelet(t, admin, controllermanagertest.KubeletOptions{Nodes: 2, LeaveBinding: true})

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if out := kubectl(ctx, t, s.Options.WriteKubeconfig, deployment, "apply", "-f", "-"); !strings.Contains(out, "deployment.apps/web created") {
		t.Fatalf("kubectl apply: %s", out)
	}
	waitWebRunning(ctx, t, admin)

	// The pods are the real controllers' and the real scheduler's work.
	rss, err := client.Resource[api.ReplicaSet](admin).Namespace("default").List(ctx, client.ListOptions{LabelSelector: "app=web"})
	if err != nil || len(rss.Items) != 1 {
		t.Fatalf("replica sets: %v %+v", err, rss)
	}
	events, err := client.Resource[api.Event](admin).Namespace("default").List(ctx, client.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	scheduled := 0
	for _, e := range events.Items {
		if e.Reason == "Scheduled" && (e.ReportingController == "default-scheduler" || e.Source.Component == "default-scheduler") {
			scheduled++
		}
	}
	if scheduled < 3 {
		t.Errorf("%d Scheduled events of default-scheduler, want 3", scheduled)
	}
	waitFor(ctx, t, "the deployment's status to say 3 ready and available", func() (bool, string) {
		d, err := client.Resource[api.Deployment](admin).Namespace("default").Get(ctx, "web")
		if err != nil {
			return false, err.Error()
		}
		return d.Status.ReadyReplicas == 3 && d.Status.AvailableReplicas == 3, fmt.Sprintf("%+v", d.Status)
	})

	// The real controllers of the other served kinds work through their
	// status subresources and owned objects: the StatefulSet and
	// DaemonSet controllers make ControllerRevisions and pods (one per
	// node), the volume binder binds the claim to the volume, the
	// disruption controller counts the budget's healthy pods.
	kubectl(ctx, t, s.Options.WriteKubeconfig, workloads, "apply", "-f", "-")
	waitFor(ctx, t, "the StatefulSet's 2 pods, the DaemonSet's pod on each node, the claim bound, the budget counted", func() (bool, string) {
		var states []string
		running := map[string]int{}
		list, err := client.Resource[api.Pod](admin).Namespace("default").List(ctx, client.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, p := range list.Items {
			if p.Status.Phase == api.PodRunning {
				running[p.Labels["app"]]++
			}
		}
		states = append(states, fmt.Sprintf("running %v", running))
		pvc, err := client.Resource[api.PersistentVolumeClaim](admin).Namespace("default").Get(ctx, "data")
		if err != nil {
			return false, err.Error()
		}
		pv, err := client.Resource[api.PersistentVolume](admin).Get(ctx, "pv0")
		if err != nil {
			return false, err.Error()
		}
		states = append(states, "claim "+string(pvc.Status.Phase)+" to "+pvc.Spec.VolumeName, "volume "+string(pv.Status.Phase))
		pdb, err := client.Resource[api.PodDisruptionBudget](admin).Namespace("default").Get(ctx, "db")
		if err != nil {
			return false, err.Error()
		}
		states = append(states, fmt.Sprintf("budget %d healthy, %d allowed", pdb.Status.CurrentHealthy, pdb.Status.DisruptionsAllowed))
		revs, err := client.Resource[api.ControllerRevision](admin).Namespace("default").List(ctx, client.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		states = append(states, fmt.Sprintf("%d revisions", len(revs.Items)))
		return running["db"] == 2 && running["agent"] == 2 && pvc.Status.Phase == api.ClaimBound && pvc.Spec.VolumeName == "pv0" &&
			pv.Status.Phase == api.VolumeBound && pdb.Status.CurrentHealthy == 2 && pdb.Status.DisruptionsAllowed == 1 &&
			len(revs.Items) == 2, strings.Join(states, "; ")
	})

	// The scheduler bound pods, so every informer it waits for had
	// synced; the controller-manager's quota controller lists (as
	// metadata) every resource discovery shows, once it has synced.
	waitFor(ctx, t, "the controller-manager's quota controller to sync", func() (bool, string) {
		return kcm.logged(t, "synced quota controller"), "not logged"
	})
	for _, c := range []*component{sched, kcm} {
		code, body, err := c.healthz()
		if err != nil || code != 200 || body != "ok" {
			t.Errorf("%s /healthz: %d %q %v", c.name, code, body, err)
		}
		if c.logged(t, "kube-apiserver-legacy-service-account-token-tracking\\\" not found") {
			t.Errorf("%s did not find the apiserver's legacy token tracking ConfigMap", c.name)
		}
		if bad := unserved(c.responses(t)); len(bad) > 0 {
			t.Errorf("%s asked for what the apiserver does not serve:\n%s", c.name, strings.Join(bad, "\n"))
		}
	}
}

func TestIsCollection(t *testing.T) {
	t.Parallel()
	for path, want := range map[string]bool{
		"/api/v1/pods":                             true,
		"/api/v1/namespaces/default/pods":          true,
		"/api/v1/namespaces/default/pods/x":        false,
		"/api/v1/namespaces/default":               false,
		"/apis/apps/v1/statefulsets":               true,
		"/apis/apps/v1/namespaces/ns/statefulsets": true,
		"/apis/events.k8s.io/v1":                   false,
		"/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler": false,
	} {
		if got := isCollection(path); got != want {
			t.Errorf("isCollection(%s) = %t, want %t", path, got, want)
		}
	}
}
