package quota

import (
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
)

func rl(kv ...string) api.ResourceList {
	out := api.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[api.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

var podsGR = GroupResource{Resource: "pods"}

func TestPodUsage(t *testing.T) {
	now := time.Now()
	always := api.ContainerRestartPolicyAlways
	p := &api.Pod{Spec: api.PodSpec{
		Containers: []api.Container{
			{Name: "a", Resources: api.ResourceRequirements{Requests: rl("cpu", "100m", "memory", "64Mi", "example.com/dongle", "2", "hugepages-2Mi", "4Mi"), Limits: rl("cpu", "200m")}},
			{Name: "b", Resources: api.ResourceRequirements{Requests: rl("cpu", "100m")}},
		},
		InitContainers: []api.Container{
			{Name: "side", RestartPolicy: &always, Resources: api.ResourceRequirements{Requests: rl("cpu", "50m")}},
			{Name: "init", Resources: api.ResourceRequirements{Requests: rl("cpu", "1", "memory", "32Mi")}},
		},
		Overhead: rl("cpu", "10m"),
	}}
	// cpu: max(100m+100m+50m, 1+50m) + 10m; memory: max(64Mi, 32Mi).
	want := rl("count/pods", "1", "pods", "1", "cpu", "1060m", "requests.cpu", "1060m", "limits.cpu", "210m",
		"memory", "64Mi", "requests.memory", "64Mi", "requests.example.com/dongle", "2",
		"hugepages-2Mi", "4Mi", "requests.hugepages-2Mi", "4Mi")
	if got := Usage(podsGR, p, now); !Equals(got, want) {
		t.Errorf("usage\n got %s\nwant %s", String(got), String(want))
	}
	p.Status.Phase = api.PodSucceeded
	if got := Usage(podsGR, p, now); !Equals(got, rl("count/pods", "1")) {
		t.Errorf("a terminal pod: %s", String(got))
	}
	p.Status.Phase = api.PodRunning
	ts := api.NewTime(now.Add(-time.Minute))
	grace := int64(30)
	p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &ts, &grace
	if got := Usage(podsGR, p, now); !Equals(got, rl("count/pods", "1")) {
		t.Errorf("a pod past its grace period: %s", String(got))
	}
}

func TestServiceAndClaimUsage(t *testing.T) {
	f := false
	lb := &api.Service{Spec: api.ServiceSpec{Type: api.ServiceTypeLoadBalancer, AllocateLoadBalancerNodePorts: &f,
		Ports: []api.ServicePort{{Port: 80, NodePort: 30080}, {Port: 81}}}}
	if got, want := Usage(GroupResource{Resource: "services"}, lb, time.Now()), rl("count/services", "1", "services", "1",
		"services.loadbalancers", "1", "services.nodeports", "1"); !Equals(got, want) {
		t.Errorf("load balancer: %s", String(got))
	}
	gold := "gold"
	c := &api.PersistentVolumeClaim{Spec: api.PersistentVolumeClaimSpec{StorageClassName: &gold,
		Resources: api.VolumeResourceRequirements{Requests: rl("storage", "1500m")}}}
	if got, want := Usage(GroupResource{Resource: "persistentvolumeclaims"}, c, time.Now()), rl("count/persistentvolumeclaims", "1",
		"persistentvolumeclaims", "1", "requests.storage", "2",
		"gold.storageclass.storage.k8s.io/persistentvolumeclaims", "1", "gold.storageclass.storage.k8s.io/requests.storage", "2"); !Equals(got, want) {
		t.Errorf("claim: %s", String(got))
	}
	if got := Usage(GroupResource{Resource: "configmaps"}, &api.ConfigMap{}, time.Now()); !Equals(got, rl("count/configmaps", "1", "configmaps", "1")) {
		t.Errorf("config map: %s", String(got))
	}
	if got := Usage(GroupResource{Group: "apps", Resource: "deployments"}, &api.Deployment{}, time.Now()); !Equals(got, rl("count/deployments.apps", "1")) {
		t.Errorf("deployment: %s", String(got))
	}
}

func TestScopes(t *testing.T) {
	deadline := int64(10)
	be := &api.Pod{Spec: api.PodSpec{Containers: []api.Container{{Name: "c"}}, PriorityClassName: "high"}}
	burst := &api.Pod{Spec: api.PodSpec{ActiveDeadlineSeconds: &deadline,
		Containers: []api.Container{{Name: "c", Resources: api.ResourceRequirements{Requests: rl("cpu", "1")}}}}}
	q := func(scopes []string, exprs ...api.ScopedResourceSelectorRequirement) *api.ResourceQuota {
		r := &api.ResourceQuota{Spec: api.ResourceQuotaSpec{Scopes: scopes}, Status: api.ResourceQuotaStatus{Hard: rl("pods", "1")}}
		if exprs != nil {
			r.Spec.ScopeSelector = &api.ScopeSelector{MatchExpressions: exprs}
		}
		return r
	}
	for _, tt := range []struct {
		name  string
		quota *api.ResourceQuota
		pod   *api.Pod
		want  bool
	}{
		{"no scope", q(nil), burst, true},
		{"BestEffort", q([]string{ScopeBestEffort}), be, true},
		{"BestEffort, burstable pod", q([]string{ScopeBestEffort}), burst, false},
		{"NotBestEffort", q([]string{ScopeNotBestEffort}), burst, true},
		{"Terminating", q([]string{ScopeTerminating}), burst, true},
		{"NotTerminating", q([]string{ScopeNotTerminating}), burst, false},
		{"both scopes", q([]string{ScopeTerminating, ScopeNotBestEffort}), burst, true},
		{"PriorityClass In", q(nil, api.ScopedResourceSelectorRequirement{ScopeName: ScopePriorityClass, Operator: "In", Values: []string{"high"}}), be, true},
		{"PriorityClass NotIn", q(nil, api.ScopedResourceSelectorRequirement{ScopeName: ScopePriorityClass, Operator: "NotIn", Values: []string{"high"}}), be, false},
		{"PriorityClass Exists, none", q(nil, api.ScopedResourceSelectorRequirement{ScopeName: ScopePriorityClass, Operator: "Exists"}), burst, false},
		{"PriorityClass DoesNotExist", q(nil, api.ScopedResourceSelectorRequirement{ScopeName: ScopePriorityClass, Operator: "DoesNotExist"}), burst, true},
	} {
		if got, err := Matches(tt.quota, podsGR, tt.pod); err != nil || got != tt.want {
			t.Errorf("%s: %v, %v; want %v", tt.name, got, err, tt.want)
		}
	}
	// A quota that restricts nothing a pod consumes does not cover it; a
	// scoped quota covers no other kind.
	if ok, _ := Matches(&api.ResourceQuota{Status: api.ResourceQuotaStatus{Hard: rl("services", "1")}}, podsGR, be); ok {
		t.Error("a services quota covers a pod")
	}
	if ok, _ := Matches(q([]string{ScopeBestEffort}), GroupResource{Resource: "services"}, &api.Service{}); ok {
		t.Error("a scoped quota covers a service")
	}
}

func TestConstraints(t *testing.T) {
	p := &api.Pod{Spec: api.PodSpec{
		Containers:     []api.Container{{Name: "b", Resources: api.ResourceRequirements{Requests: rl("cpu", "1")}}, {Name: "a"}},
		InitContainers: []api.Container{{Name: "init"}},
	}}
	err := Constraints(podsGR, []api.ResourceName{"requests.cpu", "limits.memory", "pods", "requests.storage"}, p)
	want := "must specify limits.memory for: a,b,init; requests.cpu for: a,init"
	if err == nil || err.Error() != want {
		t.Errorf("constraints: %v\nwant %s", err, want)
	}
	if err := Constraints(podsGR, []api.ResourceName{"pods", "requests.ephemeral-storage"}, p); err != nil {
		t.Errorf("only cpu and memory are required: %v", err)
	}
}

func TestArithmetic(t *testing.T) {
	if got := String(Add(rl("cpu", "500m", "pods", "1"), rl("cpu", "600m"))); got != "cpu=1100m,pods=1" {
		t.Errorf("add: %s", got)
	}
	if got := String(SubtractNonNegative(rl("cpu", "1", "pods", "1"), rl("cpu", "2"))); got != "cpu=0,pods=1" {
		t.Errorf("subtract: %s", got)
	}
	ok, over := LessThanOrEqual(rl("cpu", "1100m", "pods", "1", "memory", "1Gi"), rl("cpu", "1", "pods", "1"))
	if ok || len(over) != 1 || over[0] != "cpu" {
		t.Errorf("less or equal: %v %v", ok, over)
	}
}
