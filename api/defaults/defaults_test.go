package defaults

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
)

func ptr2[T any](v T) *T { return &v }

func TestImagePullPolicy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		image string
		want  api.PullPolicy
	}{
		{"nginx", api.PullAlways},
		{"nginx:latest", api.PullAlways},
		{"nginx:1.25", api.PullIfNotPresent},
		{"library/nginx", api.PullAlways},
		{"docker.io/library/nginx:latest", api.PullAlways},
		{"localhost:5000/app", api.PullAlways},
		{"localhost:5000/app:v1", api.PullIfNotPresent},
		{"registry.example.com:443/team/app:v2.0-rc1", api.PullIfNotPresent},
		{"nginx@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", api.PullIfNotPresent},
		{"nginx:latest@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", api.PullAlways},
		{"", api.PullIfNotPresent},              // invalid: does not parse
		{"Nginx", api.PullIfNotPresent},         // invalid: upper case repository
		{"nginx:", api.PullIfNotPresent},        // invalid: empty tag
		{"a b", api.PullIfNotPresent},           // invalid character
		{"MyRegistry:5000/app", api.PullAlways}, // upper case is fine in a registry host
	}
	for _, tc := range tests {
		if got := ImagePullPolicy(tc.image); got != tc.want {
			t.Errorf("ImagePullPolicy(%q) = %s, want %s", tc.image, got, tc.want)
		}
	}
}

func decode[T any](t *testing.T, s string) *T {
	t.Helper()
	v := new(T)
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("decode: %v", err)
	}
	return v
}

func TestPodDefaults(t *testing.T) {
	t.Parallel()
	p := decode[api.Pod](t, `{"metadata":{"name":"p"},"spec":{
	  "containers":[{"name":"c","image":"nginx:1.25",
	    "ports":[{"containerPort":80}],
	    "resources":{"limits":{"cpu":"500m","memory":"1Gi"},"requests":{"cpu":"100m"}},
	    "livenessProbe":{"httpGet":{"port":80}},
	    "readinessProbe":{"exec":{"command":["true"]},"periodSeconds":5},
	    "env":[{"name":"N","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}],
	    "lifecycle":{"preStop":{"httpGet":{"port":8080}}}}],
	  "initContainers":[{"name":"i","image":"busybox","resources":{"limits":{"cpu":"0.0001"}}}],
	  "volumes":[{"name":"a"},{"name":"b","configMap":{"name":"cm"}},{"name":"c","secret":{"secretName":"s","defaultMode":256}},{"name":"d","hostPath":{"path":"/x"}}]}}`)
	Default(p)

	s := p.Spec
	if s.RestartPolicy != api.RestartPolicyAlways || s.DNSPolicy != api.DNSClusterFirst ||
		s.SchedulerName != "default-scheduler" || *s.TerminationGracePeriodSeconds != 30 ||
		s.SecurityContext == nil || !*s.EnableServiceLinks {
		t.Errorf("pod spec defaults wrong: %+v", s)
	}
	c := s.Containers[0]
	if c.ImagePullPolicy != api.PullIfNotPresent || c.TerminationMessagePath != "/dev/termination-log" ||
		c.TerminationMessagePolicy != api.TerminationMessageReadFile {
		t.Errorf("container defaults wrong: %+v", c)
	}
	if c.Ports[0].Protocol != api.ProtocolTCP || c.Ports[0].HostPort != 0 {
		t.Errorf("port = %+v", c.Ports[0])
	}
	if got := c.Resources.Requests[api.ResourceCPU]; got.String() != "100m" {
		t.Errorf("explicit cpu request overwritten: %s", got.String())
	}
	if got := c.Resources.Requests[api.ResourceMemory]; got.String() != "1Gi" {
		t.Errorf("memory request not defaulted from limit: %s", got.String())
	}
	lp := c.LivenessProbe
	if lp.TimeoutSeconds != 1 || lp.PeriodSeconds != 10 || lp.SuccessThreshold != 1 || lp.FailureThreshold != 3 ||
		lp.HTTPGet.Path != "/" || lp.HTTPGet.Scheme != api.URISchemeHTTP {
		t.Errorf("liveness probe defaults wrong: %+v %+v", lp, lp.HTTPGet)
	}
	if c.ReadinessProbe.PeriodSeconds != 5 {
		t.Errorf("explicit periodSeconds overwritten: %d", c.ReadinessProbe.PeriodSeconds)
	}
	if c.Env[0].ValueFrom.FieldRef.APIVersion != "v1" {
		t.Errorf("fieldRef apiVersion = %q", c.Env[0].ValueFrom.FieldRef.APIVersion)
	}
	if h := c.Lifecycle.PreStop.HTTPGet; h.Path != "/" || h.Scheme != api.URISchemeHTTP {
		t.Errorf("preStop httpGet defaults wrong: %+v", h)
	}
	ic := s.InitContainers[0]
	if ic.ImagePullPolicy != api.PullAlways {
		t.Errorf("untagged image pull policy = %s", ic.ImagePullPolicy)
	}
	// 0.0001 cpu rounds up to 1m, and the request copies the rounded limit.
	if got := ic.Resources.Limits[api.ResourceCPU]; got.String() != "1m" {
		t.Errorf("limit not rounded to milli: %s", got.String())
	}
	if got := ic.Resources.Requests[api.ResourceCPU]; got.String() != "1m" {
		t.Errorf("init container request = %s, want 1m", got.String())
	}
	v := s.Volumes
	if v[0].EmptyDir == nil {
		t.Errorf("volume without source did not get emptyDir")
	}
	if *v[1].ConfigMap.DefaultMode != 0o644 || *v[2].Secret.DefaultMode != 256 {
		t.Errorf("volume modes = %d, %d", *v[1].ConfigMap.DefaultMode, *v[2].Secret.DefaultMode)
	}
	if v[3].HostPath.Type == nil || *v[3].HostPath.Type != api.HostPathUnset || v[3].EmptyDir != nil {
		t.Errorf("hostPath volume = %+v", v[3])
	}

	// Idempotent.
	before, _ := json.Marshal(p)
	Default(p)
	after, _ := json.Marshal(p)
	if string(before) != string(after) {
		t.Errorf("second Default changed the pod:\n%s\n%s", before, after)
	}
}

func TestPodHostNetworkPorts(t *testing.T) {
	t.Parallel()
	p := &api.Pod{Spec: api.PodSpec{HostNetwork: true, Containers: []api.Container{{
		Name: "c", Ports: []api.ContainerPort{{ContainerPort: 8080}, {ContainerPort: 9090, HostPort: 1}},
	}}}}
	Default(p)
	if got := p.Spec.Containers[0].Ports; got[0].HostPort != 8080 || got[1].HostPort != 1 {
		t.Errorf("host ports = %+v", got)
	}
}

// Templates get pod spec defaults but not the Pod-only ones.
func TestTemplatesGetSpecDefaultsOnly(t *testing.T) {
	t.Parallel()
	d := decode[api.Deployment](t, `{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"x:1",
	  "resources":{"limits":{"cpu":"1"}}}]}}}}`)
	Default(d)
	s := d.Spec.Template.Spec
	if s.RestartPolicy != api.RestartPolicyAlways || s.SchedulerName != "default-scheduler" {
		t.Errorf("template spec not defaulted: %+v", s)
	}
	if s.EnableServiceLinks != nil {
		t.Errorf("template got enableServiceLinks")
	}
	if s.Containers[0].Resources.Requests != nil {
		t.Errorf("template got requests from limits")
	}
}

func TestDeploymentDefaults(t *testing.T) {
	t.Parallel()
	d := &api.Deployment{}
	Default(d)
	ru := d.Spec.Strategy.RollingUpdate
	if *d.Spec.Replicas != 1 || d.Spec.Strategy.Type != api.RollingUpdateDeploymentStrategyType ||
		ru.MaxSurge.String() != "25%" || ru.MaxUnavailable.String() != "25%" ||
		*d.Spec.RevisionHistoryLimit != 10 || *d.Spec.ProgressDeadlineSeconds != 600 {
		t.Errorf("deployment defaults wrong: %+v %+v", d.Spec, ru)
	}

	// Recreate gets no rollingUpdate; explicit values stay.
	r := &api.Deployment{Spec: api.DeploymentSpec{Replicas: ptr2(int32(0)),
		Strategy: api.DeploymentStrategy{Type: api.RecreateDeploymentStrategyType}}}
	Default(r)
	if *r.Spec.Replicas != 0 || r.Spec.Strategy.RollingUpdate != nil {
		t.Errorf("recreate deployment = %+v", r.Spec)
	}
	half := api.FromInt(0)
	p := &api.Deployment{Spec: api.DeploymentSpec{Strategy: api.DeploymentStrategy{
		RollingUpdate: &api.RollingUpdateDeployment{MaxUnavailable: &half}}}}
	Default(p)
	if p.Spec.Strategy.RollingUpdate.MaxUnavailable.String() != "0" || p.Spec.Strategy.RollingUpdate.MaxSurge.String() != "25%" {
		t.Errorf("partial rolling update = %+v", p.Spec.Strategy.RollingUpdate)
	}
}

func TestReplicaSetDefaults(t *testing.T) {
	t.Parallel()
	r := &api.ReplicaSet{}
	Default(r)
	if *r.Spec.Replicas != 1 || r.Spec.Template.Spec.DNSPolicy != api.DNSClusterFirst {
		t.Errorf("replicaset defaults wrong: %+v", r.Spec)
	}
}

func TestJobDefaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                     string
		spec                     api.JobSpec
		completions, parallelism *int32
		backoff                  int32
	}{
		{"both unset", api.JobSpec{}, ptr2(int32(1)), ptr2(int32(1)), 6},
		{"only completions", api.JobSpec{Completions: ptr2(int32(5))}, ptr2(int32(5)), ptr2(int32(1)), 6},
		{"only parallelism", api.JobSpec{Parallelism: ptr2(int32(3))}, nil, ptr2(int32(3)), 6},
		{"per-index backoff", api.JobSpec{BackoffLimitPerIndex: ptr2(int32(1))}, ptr2(int32(1)), ptr2(int32(1)), math.MaxInt32},
		{"explicit backoff", api.JobSpec{BackoffLimit: ptr2(int32(0))}, ptr2(int32(1)), ptr2(int32(1)), 0},
	}
	for _, tc := range tests {
		j := &api.Job{Spec: tc.spec}
		Default(j)
		if !reflect.DeepEqual(j.Spec.Completions, tc.completions) || !reflect.DeepEqual(j.Spec.Parallelism, tc.parallelism) ||
			*j.Spec.BackoffLimit != tc.backoff {
			t.Errorf("%s: completions=%v parallelism=%v backoff=%d", tc.name, j.Spec.Completions, j.Spec.Parallelism, *j.Spec.BackoffLimit)
		}
		if *j.Spec.CompletionMode != api.NonIndexedCompletion || *j.Spec.Suspend || *j.Spec.PodReplacementPolicy != "TerminatingOrFailed" {
			t.Errorf("%s: mode=%s suspend=%t", tc.name, *j.Spec.CompletionMode, *j.Spec.Suspend)
		}
	}

	j := &api.Job{Spec: api.JobSpec{
		Template:         api.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": "batch"}}},
		PodFailurePolicy: &api.PodFailurePolicy{Rules: []api.PodFailurePolicyRule{{Action: api.PodFailurePolicyActionIgnore, OnPodConditions: []api.PodFailurePolicyOnPodConditionsPattern{{Type: api.DisruptionTarget}}}}},
	}}
	Default(j)
	if j.Labels["app"] != "batch" {
		t.Errorf("job labels not copied from template: %v", j.Labels)
	}
	j.Spec.Template.Labels["x"] = "y"
	if _, shared := j.Labels["x"]; shared {
		t.Errorf("job labels share the template's map")
	}
	if j.Spec.PodFailurePolicy.Rules[0].OnPodConditions[0].Status != api.ConditionTrue || *j.Spec.PodReplacementPolicy != "Failed" {
		t.Errorf("pod failure policy defaults wrong: %+v", j.Spec.PodFailurePolicy.Rules[0])
	}
}

func TestJobGeneratedSelector(t *testing.T) {
	t.Parallel()
	j := &api.Job{ObjectMeta: api.ObjectMeta{Name: "pi", UID: "uid-1"},
		Spec: api.JobSpec{Template: api.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: map[string]string{"job-name": "custom"}}}}}
	DefaultCreate(j)
	if j.Spec.Selector != nil || j.Spec.ManualSelector == nil || *j.Spec.ManualSelector {
		t.Errorf("create defaults: selector %v, manualSelector %v; want none (the registry generates it) and false", j.Spec.Selector, j.Spec.ManualSelector)
	}
	GenerateJobSelector(j)
	want := map[string]string{
		"job-name": "custom", "batch.kubernetes.io/job-name": "pi",
		"controller-uid": "uid-1", "batch.kubernetes.io/controller-uid": "uid-1",
	}
	if !reflect.DeepEqual(j.Spec.Template.Labels, want) {
		t.Errorf("template labels = %v, want %v", j.Spec.Template.Labels, want)
	}
	if !reflect.DeepEqual(j.Spec.Selector.MatchLabels, map[string]string{"batch.kubernetes.io/controller-uid": "uid-1"}) {
		t.Errorf("selector = %v", j.Spec.Selector)
	}
	if !reflect.DeepEqual(j.Labels, map[string]string{"job-name": "custom"}) {
		t.Errorf("job labels = %v (copied before the generated labels, as Kubernetes does)", j.Labels)
	}

	noUID := &api.Job{ObjectMeta: api.ObjectMeta{Name: "n"}}
	GenerateJobSelector(noUID)
	if noUID.Spec.Selector != nil {
		t.Errorf("job without uid got a selector")
	}
	// Update-time defaulting does not generate it.
	upd := &api.Job{ObjectMeta: api.ObjectMeta{Name: "u", UID: "u"}}
	Default(upd)
	if upd.Spec.Selector != nil {
		t.Errorf("Default generated a job selector")
	}
}

func TestServiceDefaults(t *testing.T) {
	t.Parallel()
	s := decode[api.Service](t, `{"spec":{"selector":{"app":"a"},"ports":[{"port":80},{"port":81,"targetPort":"http","protocol":"UDP"}]}}`)
	Default(s)
	sp := s.Spec
	if sp.Type != api.ServiceTypeClusterIP || sp.SessionAffinity != api.ServiceAffinityNone ||
		*sp.InternalTrafficPolicy != api.ServiceInternalTrafficPolicyCluster || sp.ExternalTrafficPolicy != "" ||
		sp.IPFamilyPolicy != nil || sp.IPFamilies != nil || sp.ClusterIPs != nil {
		t.Errorf("service defaults wrong: %+v", sp)
	}
	if p := sp.Ports[0]; p.Protocol != api.ProtocolTCP || p.TargetPort != api.FromInt(80) {
		t.Errorf("port 0 = %+v", p)
	}
	if p := sp.Ports[1]; p.Protocol != api.ProtocolUDP || p.TargetPort != api.FromString("http") {
		t.Errorf("port 1 = %+v", p)
	}

	lb := &api.Service{Spec: api.ServiceSpec{Type: api.ServiceTypeLoadBalancer, SessionAffinity: api.ServiceAffinityClientIP, ClusterIP: "fd00::1"},
		Status: api.ServiceStatus{LoadBalancer: api.LoadBalancerStatus{Ingress: []api.LoadBalancerIngress{{IP: "192.0.2.1"}, {Hostname: "lb.example.com"}}}}}
	Default(lb)
	if ing := lb.Status.LoadBalancer.Ingress; ing[0].IPMode == nil || *ing[0].IPMode != "VIP" || ing[1].IPMode != nil {
		t.Errorf("load balancer ingress ipMode: %+v", ing)
	}
	if lb.Spec.ExternalTrafficPolicy != api.ServiceExternalTrafficPolicyCluster || !*lb.Spec.AllocateLoadBalancerNodePorts ||
		*lb.Spec.SessionAffinityConfig.ClientIP.TimeoutSeconds != 10800 || lb.Spec.ClusterIPs != nil {
		t.Errorf("load balancer defaults wrong: %+v", lb.Spec)
	}

	none := &api.Service{Spec: api.ServiceSpec{SessionAffinityConfig: &api.SessionAffinityConfig{}}}
	Default(none)
	if none.Spec.SessionAffinityConfig != nil {
		t.Errorf("sessionAffinityConfig kept with affinity None")
	}

	ext := &api.Service{Spec: api.ServiceSpec{Type: api.ServiceTypeExternalName, ExternalName: "example.com"}}
	Default(ext)
	if ext.Spec.InternalTrafficPolicy != nil || ext.Spec.IPFamilyPolicy != nil || ext.Spec.IPFamilies != nil {
		t.Errorf("ExternalName service got IP defaults: %+v", ext.Spec)
	}
}

func TestNamespaceDefaults(t *testing.T) {
	t.Parallel()
	n := &api.Namespace{ObjectMeta: api.ObjectMeta{Name: "team-a"}}
	Default(n)
	if n.Labels[LabelMetadataName] != "team-a" || n.Status.Phase != api.NamespaceActive || n.Spec.Finalizers != nil {
		t.Errorf("namespace defaults wrong: %+v", n)
	}
	DefaultCreate(n)
	if n.Spec.Finalizers != nil {
		t.Errorf("finalizers = %v; the registry adds kubernetes after the field manager", n.Spec.Finalizers)
	}
	other := &api.Namespace{}
	DefaultCreate(other)
	if other.Labels != nil {
		t.Errorf("nameless namespace got labels %v", other.Labels)
	}
}

func TestSmallKinds(t *testing.T) {
	t.Parallel()
	s := &api.Secret{}
	Default(s)
	if s.Type != api.SecretTypeOpaque {
		t.Errorf("secret type = %q", s.Type)
	}
	cm := &api.ConfigMap{}
	Default(cm)
	if cm.Data == nil {
		t.Errorf("configmap data nil")
	}
	ep := &api.Endpoints{Subsets: []api.EndpointSubset{{Ports: []api.EndpointPort{{Port: 80}}}}}
	Default(ep)
	if ep.Subsets[0].Ports[0].Protocol != api.ProtocolTCP {
		t.Errorf("endpoints port protocol = %q", ep.Subsets[0].Ports[0].Protocol)
	}
	es := &api.EndpointSlice{Ports: []api.EndpointSlicePort{{Port: ptr2(int32(80))}}}
	Default(es)
	if *es.Ports[0].Protocol != api.ProtocolTCP || *es.Ports[0].Name != "" {
		t.Errorf("endpointslice port = %+v", es.Ports[0])
	}
	node := &api.Node{Status: api.NodeStatus{Capacity: api.ResourceList{api.ResourceCPU: resource.MustParse("4")}}}
	Default(node)
	if got := node.Status.Allocatable[api.ResourceCPU]; got.String() != "4" {
		t.Errorf("allocatable = %v", node.Status.Allocatable)
	}
	lease := &api.Lease{}
	Default(lease)
	if !reflect.DeepEqual(lease, &api.Lease{}) {
		t.Errorf("lease changed: %+v", lease)
	}
}

func TestSecretStringDataMerged(t *testing.T) {
	t.Parallel()
	s := &api.Secret{Data: map[string][]byte{"a": []byte("1"), "b": []byte("2")}, StringData: map[string]string{"b": "two", "c": "three"}}
	Default(s)
	want := map[string][]byte{"a": []byte("1"), "b": []byte("two"), "c": []byte("three")}
	if !reflect.DeepEqual(s.Data, want) || s.StringData != nil {
		t.Errorf("secret = %v / %v", s.Data, s.StringData)
	}
}

// TestServiceAccountAliasAndProjectedDefaults: spec.serviceAccount, the
// deprecated alias, is read when serviceAccountName is empty and always
// written back equal, as Kubernetes' v1 conversion does; projected and
// downwardAPI volumes get their modes, token lifetime and fieldRef
// apiVersion.
func TestServiceAccountAliasAndProjectedDefaults(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, deprecated, want string }{
		{"robot", "", "robot"}, {"", "legacy", "legacy"}, {"robot", "legacy", "robot"}, {"", "", ""},
	} {
		s := api.PodSpec{ServiceAccountName: tc.name, DeprecatedServiceAccount: tc.deprecated}
		PodSpec(&s)
		if s.ServiceAccountName != tc.want || s.DeprecatedServiceAccount != tc.want {
			t.Errorf("%q/%q: serviceAccountName %q, serviceAccount %q; want both %q", tc.name, tc.deprecated,
				s.ServiceAccountName, s.DeprecatedServiceAccount, tc.want)
		}
	}
	s := api.PodSpec{Volumes: []api.Volume{
		{Name: "p", VolumeSource: api.VolumeSource{Projected: &api.ProjectedVolumeSource{Sources: []api.VolumeProjection{
			{ServiceAccountToken: &api.ServiceAccountTokenProjection{Path: "token"}},
			{DownwardAPI: &api.DownwardAPIProjection{Items: []api.DownwardAPIVolumeFile{{Path: "ns", FieldRef: &api.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}}},
		}}}},
		{Name: "d", VolumeSource: api.VolumeSource{DownwardAPI: &api.DownwardAPIVolumeSource{}}},
	}}
	PodSpec(&s)
	p, d := s.Volumes[0].Projected, s.Volumes[1].DownwardAPI
	if *p.DefaultMode != 420 || *p.Sources[0].ServiceAccountToken.ExpirationSeconds != 3600 ||
		p.Sources[1].DownwardAPI.Items[0].FieldRef.APIVersion != "v1" || *d.DefaultMode != 420 {
		t.Errorf("projected %+v, downwardAPI %+v", p, d)
	}
}

// TestEphemeralVolumeTemplateDefaults: a generic ephemeral volume's claim
// template gets volumeMode Filesystem as kube v1.37 defaults it in a pod;
// its metadata stays as written, a mode given is kept, and a source that
// does not decode is left for validation.
func TestEphemeralVolumeTemplateDefaults(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"volumeClaimTemplate":{"metadata":{"labels":{"b":"1","a":"2"}},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}}`,
			`{"volumeClaimTemplate":{"metadata":{"labels":{"b":"1","a":"2"}},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}},"volumeMode":"Filesystem"}}}`},
		{`{"volumeClaimTemplate":{"spec":{"volumeMode":"Block"}}}`, `{"volumeClaimTemplate":{"spec":{"volumeMode":"Block"}}}`},
		{`{}`, `{}`},
		{`{"volumeClaimTemplate":"x"}`, `{"volumeClaimTemplate":"x"}`},
	} {
		p := &api.Pod{Spec: api.PodSpec{Volumes: []api.Volume{{Name: "v", VolumeSource: api.VolumeSource{Ephemeral: json.RawMessage(tc.in)}}}}}
		Pod(p)
		if got := string(p.Spec.Volumes[0].Ephemeral); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
}
