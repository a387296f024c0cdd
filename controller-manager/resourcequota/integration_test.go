package resourcequota_test

import (
	"encoding/json"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/resource"
	"github.com/minik8s/minik8s/controller-manager/app"
	"github.com/minik8s/minik8s/controller-manager/controllermanagertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/quota"
)

func rl(kv ...string) api.ResourceList {
	out := api.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[api.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func pod(name, cpu string) *api.Pod {
	c := api.Container{Name: "c", Image: "busybox"}
	if cpu != "" {
		c.Resources.Requests = rl("cpu", cpu)
	}
	return &api.Pod{ObjectMeta: api.ObjectMeta{Name: name}, Spec: api.PodSpec{Containers: []api.Container{c}}}
}

// usedIs compares a quota's status.used with want, entry by entry.
func usedIs(q *api.ResourceQuota, want api.ResourceList) bool {
	return q != nil && quota.Equals(q.Status.Used, want)
}

// TestQuotaAdmissionAndController: the controller computes a new quota's
// status; admission refuses what exceeds it with kube's messages, charges
// what it admits at once (dry runs excepted); deletions and pods turning
// terminal are given back by the controller; count/RESOURCE.GROUP quotas
// work for other kinds; scopes select the pods a quota counts.
func TestQuotaAdmissionAndController(t *testing.T) {
	cl := controllermanagertest.Start(t, []string{"resourcequota"}, func(o *app.Options) {
		o.Controller.ResourceQuotaSyncPeriod = time.Hour // only events may replenish here
	})
	ctx := cl.Context(2 * time.Minute)
	cl.Namespace("q")
	quotas := client.Resource[api.ResourceQuota](cl.Client).Namespace("q")
	pods := client.Resource[api.Pod](cl.Client).Namespace("q")
	get := func(name string) *api.ResourceQuota {
		q, err := quotas.Get(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	hard := rl("pods", "2", "requests.cpu", "1", "count/replicasets.apps", "1", "resourcequotas", "2", "services.nodeports", "1")
	if _, err := quotas.Create(ctx, &api.ResourceQuota{ObjectMeta: api.ObjectMeta{Name: "compute"}, Spec: api.ResourceQuotaSpec{Hard: hard}}); err != nil {
		t.Fatal(err)
	}
	zero := rl("pods", "0", "requests.cpu", "0", "count/replicasets.apps", "0", "resourcequotas", "1", "services.nodeports", "0")
	cl.Eventually(10*time.Second, "the quota's status computed", func() (bool, error) {
		q := get("compute")
		return quota.Equals(q.Status.Hard, hard) && usedIs(q, zero), nil
	})

	// A container that does not state the cpu the quota limits.
	_, err := pods.Create(ctx, pod("nocpu", ""))
	if !apierrors.IsForbidden(err) || err.Error() != `pods "nocpu" is forbidden: failed quota: compute: must specify requests.cpu for: c` {
		t.Fatalf("pod without a cpu request: %v", err)
	}
	if _, err := pods.Create(ctx, pod("p1", "500m")); err != nil {
		t.Fatal(err)
	}
	// Charged by admission, before the create returned.
	if q := get("compute"); !usedIs(q, rl("pods", "1", "requests.cpu", "500m", "count/replicasets.apps", "0", "resourcequotas", "1", "services.nodeports", "0")) {
		t.Fatalf("used after p1: %v", q.Status.Used)
	}
	_, err = pods.Create(ctx, pod("p2", "600m"))
	want := `pods "p2" is forbidden: exceeded quota: compute, requested: requests.cpu=600m, used: requests.cpu=500m, limited: requests.cpu=1`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Fatalf("pod over quota: %v\nwant %s", err, want)
	}
	body, _ := json.Marshal(pod("dry", "400m"))
	if _, err := cl.Client.Do(ctx, client.Request{Method: "POST", Path: "/api/v1/namespaces/q/pods",
		Query: url.Values{"dryRun": {"All"}}, Body: body}); err != nil {
		t.Fatalf("dry run within quota: %v", err)
	}
	if u := get("compute").Status.Used["requests.cpu"]; u.String() != "500m" {
		t.Fatalf("a dry run was charged: requests.cpu=%s", u.String())
	}

	// A pod that completes gives back its cpu and its "pods".
	p1, err := pods.Get(ctx, "p1")
	if err != nil {
		t.Fatal(err)
	}
	p1.Status.Phase = api.PodSucceeded
	if _, err := pods.UpdateStatus(ctx, p1); err != nil {
		t.Fatal(err)
	}
	cl.Eventually(10*time.Second, "the completed pod's usage given back", func() (bool, error) {
		return usedIs(get("compute"), zero), nil
	})
	if _, err := pods.Create(ctx, pod("p3", "1")); err != nil {
		t.Fatal(err)
	}
	if err := pods.Delete(ctx, "p3", &api.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	cl.Eventually(10*time.Second, "the deleted pod's usage given back", func() (bool, error) {
		return usedIs(get("compute"), zero), nil
	})

	// count/replicasets.apps.
	rs := func(name string) *api.ReplicaSet {
		l := map[string]string{"rs": name}
		return &api.ReplicaSet{ObjectMeta: api.ObjectMeta{Name: name}, Spec: api.ReplicaSetSpec{Replicas: new(int32),
			Selector: &api.LabelSelector{MatchLabels: l},
			Template: api.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: l}, Spec: pod("", "100m").Spec}}}
	}
	sets := client.Resource[api.ReplicaSet](cl.Client).Namespace("q")
	if _, err := sets.Create(ctx, rs("one")); err != nil {
		t.Fatal(err)
	}
	_, err = sets.Create(ctx, rs("two"))
	if want := `replicasets.apps "two" is forbidden: exceeded quota: compute, requested: count/replicasets.apps=1, used: count/replicasets.apps=1, limited: count/replicasets.apps=1`; err == nil || err.Error() != want {
		t.Fatalf("second replica set: %v\nwant %s", err, want)
	}
	if err := sets.Delete(ctx, "one", nil); err != nil {
		t.Fatal(err)
	}
	cl.Eventually(10*time.Second, "the deleted replica set given back", func() (bool, error) {
		return usedIs(get("compute"), zero), nil
	})

	// A NodePort service with two ports needs two node ports.
	svc := &api.Service{ObjectMeta: api.ObjectMeta{Name: "np"}, Spec: api.ServiceSpec{Type: api.ServiceTypeNodePort,
		Ports: []api.ServicePort{{Name: "a", Port: 80}, {Name: "b", Port: 81}}}}
	_, err = client.Resource[api.Service](cl.Client).Namespace("q").Create(ctx, svc)
	if want := `services "np" is forbidden: exceeded quota: compute, requested: services.nodeports=2, used: services.nodeports=0, limited: services.nodeports=1`; err == nil || err.Error() != want {
		t.Fatalf("node port service: %v\nwant %s", err, want)
	}

	// Scopes: a BestEffort quota counts only pods without resources.
	be := rl("pods", "1")
	if _, err := quotas.Create(ctx, &api.ResourceQuota{ObjectMeta: api.ObjectMeta{Name: "besteffort"},
		Spec: api.ResourceQuotaSpec{Hard: be, Scopes: []string{"BestEffort"}}}); err != nil {
		t.Fatal(err)
	}
	cl.Eventually(10*time.Second, "the scoped quota's status", func() (bool, error) {
		return usedIs(get("besteffort"), rl("pods", "0")), nil
	})
	if _, err := pods.Create(ctx, pod("burstable", "100m")); err != nil {
		t.Fatal(err)
	}
	if q := get("besteffort"); !usedIs(q, rl("pods", "0")) {
		t.Fatalf("a Burstable pod was charged to the BestEffort quota: %v", q.Status.Used)
	}
}

// TestConcurrentCreatesCannotExceed: pods created at once, more than a
// quota allows, are admitted exactly up to it.
func TestConcurrentCreatesCannotExceed(t *testing.T) {
	cl := controllermanagertest.Start(t, []string{"resourcequota"}, nil)
	ctx := cl.Context(time.Minute)
	cl.Namespace("c")
	quotas := client.Resource[api.ResourceQuota](cl.Client).Namespace("c")
	if _, err := quotas.Create(ctx, &api.ResourceQuota{ObjectMeta: api.ObjectMeta{Name: "five"}, Spec: api.ResourceQuotaSpec{Hard: rl("pods", "5")}}); err != nil {
		t.Fatal(err)
	}
	cl.Eventually(10*time.Second, "the quota's status", func() (bool, error) {
		q, err := quotas.Get(ctx, "five")
		return err == nil && usedIs(q, rl("pods", "0")), err
	})
	pods := client.Resource[api.Pod](cl.Client).Namespace("c")
	var ok, refused atomic.Int32
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Go(func() {
			_, err := pods.Create(ctx, pod("p"+string(rune('a'+i)), ""))
			switch {
			case err == nil:
				ok.Add(1)
			case apierrors.IsForbidden(err):
				refused.Add(1)
			default:
				t.Errorf("create: %v", err)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 5 || refused.Load() != 7 {
		t.Fatalf("%d admitted, %d refused; want 5 and 7", ok.Load(), refused.Load())
	}
	q, err := quotas.Get(ctx, "five")
	if err != nil || !usedIs(q, rl("pods", "5")) {
		t.Fatalf("used %v, %v", q.Status.Used, err)
	}
}

// TestCustomResourceCount: a count/RESOURCE.GROUP quota on a custom
// resource is charged by admission and kept by the controller's
// recomputations (which find the resource through discovery).
func TestCustomResourceCount(t *testing.T) {
	cl := controllermanagertest.Start(t, []string{"resourcequota"}, nil)
	ctx := cl.Context(time.Minute)
	cl.Namespace("cr")
	crd := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"},
	"spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"widgets","singular":"widget","kind":"Widget"},
	"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`
	if _, err := cl.Client.Do(ctx, client.Request{Method: "POST", Path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", Body: []byte(crd)}); err != nil {
		t.Fatal(err)
	}
	widget := func(name string) error {
		_, err := cl.Client.Do(ctx, client.Request{Method: "POST", Path: "/apis/example.com/v1/namespaces/cr/widgets",
			Body: []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"` + name + `"}}`)})
		return err
	}
	quotas := client.Resource[api.ResourceQuota](cl.Client).Namespace("cr")
	if _, err := quotas.Create(ctx, &api.ResourceQuota{ObjectMeta: api.ObjectMeta{Name: "widgets"},
		Spec: api.ResourceQuotaSpec{Hard: rl("count/widgets.example.com", "1", "configmaps", "5")}}); err != nil {
		t.Fatal(err)
	}
	cl.Eventually(10*time.Second, "the quota's status", func() (bool, error) {
		q, err := quotas.Get(ctx, "widgets")
		return err == nil && usedIs(q, rl("count/widgets.example.com", "0", "configmaps", "0")), err
	})
	cl.Eventually(10*time.Second, "the custom resource served", func() (bool, error) {
		err := widget("one")
		return err == nil, err
	})
	// A config map's deletion makes the controller recompute the quota: the
	// widget is still counted.
	cms := client.Resource[api.ConfigMap](cl.Client).Namespace("cr")
	if _, err := cms.Create(ctx, &api.ConfigMap{ObjectMeta: api.ObjectMeta{Name: "c"}}); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "c", nil); err != nil {
		t.Fatal(err)
	}
	cl.Eventually(10*time.Second, "the recomputed status", func() (bool, error) {
		q, err := quotas.Get(ctx, "widgets")
		return err == nil && usedIs(q, rl("count/widgets.example.com", "1", "configmaps", "0")), err
	})
	time.Sleep(500 * time.Millisecond)
	if q, err := quotas.Get(ctx, "widgets"); err != nil || !usedIs(q, rl("count/widgets.example.com", "1", "configmaps", "0")) {
		t.Fatalf("after recomputation: %v, %v", q.Status.Used, err)
	}
	if err := widget("two"); !apierrors.IsForbidden(err) {
		t.Fatalf("a second widget: %v", err)
	}
}
