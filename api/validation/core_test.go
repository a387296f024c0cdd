package validation

import (
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/defaults"
	"github.com/minik8s/minik8s/api/field"
)

func TestValidateService(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		mutate func(*api.Service)
		want   []string
	}{
		{"valid", func(*api.Service) {}, nil},
		{"name must be a DNS-1035 label", func(s *api.Service) { s.Name = "1web" }, []string{`metadata.name: Invalid value: "1web": a DNS-1035 label ...`}},
		{"ports required", func(s *api.Service) { s.Spec.Ports = nil }, []string{"spec.ports: Required value"}},
		{"headless needs no ports", func(s *api.Service) {
			s.Spec.Ports = nil
			s.Spec.ClusterIP, s.Spec.ClusterIPs = "None", []string{"None"}
		}, nil},
		{"second port needs a name; range; protocol", func(s *api.Service) {
			s.Spec.Ports = append(s.Spec.Ports, api.ServicePort{Port: 0, Protocol: "ICMP", TargetPort: api.FromInt(70000)})
		}, []string{
			"spec.ports[1].name: Required value",
			"spec.ports[1].port: Invalid value: 0: must be between 1 and 65535, inclusive",
			`spec.ports[1].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"`,
			"spec.ports[1].targetPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
		}},
		{"duplicate port names and ports", func(s *api.Service) {
			s.Spec.Ports = append(s.Spec.Ports, s.Spec.Ports[0])
		}, []string{`spec.ports[1].name: Duplicate value: "http"`, `spec.ports[1]: Duplicate value: core.ServicePort{Name:"", Protocol:"TCP", AppProtocol:(*string)(nil), Port:80, ...}`}},
		{"type and affinity", func(s *api.Service) {
			s.Spec.Type = "Internal"
			s.Spec.SessionAffinity = "Sticky"
		}, []string{
			`spec.type: Unsupported value: "Internal": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"`,
			`spec.sessionAffinity: Unsupported value: "Sticky": supported values: "ClientIP", "None"`,
		}},
		{"nodePort on ClusterIP", func(s *api.Service) { s.Spec.Ports[0].NodePort = 30080 }, []string{
			"spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"}},
		{"NodePort service with node port", func(s *api.Service) {
			s.Spec.Type = api.ServiceTypeNodePort
			s.Spec.ExternalTrafficPolicy = api.ServiceExternalTrafficPolicyCluster
			s.Spec.Ports[0].NodePort = 30080
		}, nil},
		{"external traffic policy on ClusterIP", func(s *api.Service) { s.Spec.ExternalTrafficPolicy = "Local" }, []string{
			`spec.externalTrafficPolicy: Invalid value: "Local": may only be set for externally-accessible services`}},
		{"clusterIPs out of sync and invalid", func(s *api.Service) {
			s.Spec.ClusterIP = "10.96.0.10"
			s.Spec.ClusterIPs = []string{"10.96.0.11"}
			s.Spec.ExternalIPs = []string{"127.0.0.1"}
		}, []string{
			`spec.clusterIPs: Invalid value: []string{"10.96.0.11"}: first value must match ` + "`clusterIP`",
			`spec.externalIPs[0]: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)`,
			// External IPs make a ClusterIP service externally reachable.
			"spec.externalTrafficPolicy: Required value",
		}},
		{"client IP affinity timeout", func(s *api.Service) {
			s.Spec.SessionAffinity = api.ServiceAffinityClientIP
			s.Spec.SessionAffinityConfig = &api.SessionAffinityConfig{ClientIP: &api.ClientIPConfig{TimeoutSeconds: ptr(int32(0))}}
		}, []string{"spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value: 0: must be greater than 0 and less than 86400"}},
		{"ExternalName", func(s *api.Service) {
			s.Spec = api.ServiceSpec{Type: api.ServiceTypeExternalName, ExternalName: "db.example.com.", SessionAffinity: api.ServiceAffinityNone}
		}, nil},
		{"ExternalName with bad name", func(s *api.Service) {
			s.Spec = api.ServiceSpec{Type: api.ServiceTypeExternalName, ExternalName: "DB!", SessionAffinity: api.ServiceAffinityNone}
		}, []string{`spec.externalName: Invalid value: "DB!": a lowercase RFC 1123 subdomain ...`}},
		{"selector label", func(s *api.Service) { s.Spec.Selector = map[string]string{"app": "a b"} }, []string{
			`spec.selector: Invalid value: "a b": a valid label must be ...`}},
	}
	for _, tc := range tests {
		s := validService()
		tc.mutate(s)
		checkErrs(t, tc.name, Validate(s), tc.want)
	}
}

func TestValidateServiceUpdate(t *testing.T) {
	t.Parallel()
	old := validService()
	old.ResourceVersion = "3"
	old.Spec.ClusterIP, old.Spec.ClusterIPs = "10.96.0.10", []string{"10.96.0.10"}

	s := api.DeepCopy(old)
	s.Spec.Ports[0].Port = 8080
	checkErrs(t, "port change", ValidateUpdate(s, old), nil)

	s = api.DeepCopy(old)
	s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.96.0.11", []string{"10.96.0.11"}
	checkErrs(t, "clusterIP change", ValidateUpdate(s, old), []string{`spec.clusterIP: Invalid value: "10.96.0.11": field is immutable`})

	s = api.DeepCopy(old)
	s.Spec = api.ServiceSpec{Type: api.ServiceTypeExternalName, ExternalName: "x.example.com", SessionAffinity: api.ServiceAffinityNone}
	checkErrs(t, "to ExternalName", ValidateUpdate(s, old), nil)

	s = api.DeepCopy(old)
	s.Status.LoadBalancer.Ingress = []api.LoadBalancerIngress{{IP: "1.2.3.4"}, {IP: "x"}, {Hostname: "10.0.0.1"}}
	checkErrs(t, "status", ValidateStatusUpdate(s, old), []string{
		`status.loadBalancer.ingress[1].ip: Invalid value: "x": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`,
		`status.loadBalancer.ingress[2].hostname: Invalid value: "10.0.0.1": must be a DNS name, not an IP address`,
	})
}

func TestValidateNode(t *testing.T) {
	t.Parallel()
	n := validNode()
	checkErrs(t, "valid", Validate(n), nil)
	n.Namespace = "default"
	n.Spec.Taints = []api.Taint{
		{Key: "dedicated", Value: "db", Effect: api.TaintEffectNoSchedule},
		{Key: "dedicated", Value: "web", Effect: api.TaintEffectNoSchedule},
		{Key: "gpu", Effect: "NoRun"},
		{Key: "", Effect: ""},
	}
	n.Spec.PodCIDR, n.Spec.PodCIDRs = "10.244.1.0/33", nil
	n.Status.Capacity[api.ResourcePods] = q("1500m")
	checkErrs(t, "invalid", Validate(n), []string{
		"metadata.namespace: Forbidden: not allowed on this type",
		`spec.taints[1]: Duplicate value: api.Taint{...}: taints must be unique by key and effect pair`,
		`spec.taints[2].effect: Unsupported value: "NoRun": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"`,
		`spec.taints[3].key: Invalid value: "": name part must be non-empty`,
		`spec.taints[3].key: Invalid value: "": name part must consist of ...`,
		"spec.taints[3].effect: Required value",
		`spec.podCIDR: Invalid value: "10.244.1.0/33": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)`,
		`status.capacity.pods: Invalid value: "1500m": must be an integer`,
	})

	old := validNode()
	old.ResourceVersion = "2"
	upd := api.DeepCopy(old)
	upd.Spec.Unschedulable = true
	upd.Spec.Taints = []api.Taint{{Key: api.TaintNodeUnschedulable, Effect: api.TaintEffectNoSchedule}}
	checkErrs(t, "cordon", ValidateUpdate(upd, old), nil)
	upd = api.DeepCopy(old)
	upd.Spec.PodCIDR, upd.Spec.PodCIDRs = "10.244.2.0/24", []string{"10.244.2.0/24"}
	upd.Status.Addresses = append(upd.Status.Addresses, upd.Status.Addresses[0])
	checkErrs(t, "podCIDR change", ValidateUpdate(upd, old), []string{
		`spec.podCIDRs: Forbidden: node updates may not change podCIDR except from "" to valid`,
		`status.addresses[1]: Duplicate value: api.NodeAddress{Type:"InternalIP", Address:"10.0.0.1"}`,
	})
	fresh := validNode()
	fresh.ResourceVersion = "2"
	fresh.Spec.PodCIDR, fresh.Spec.PodCIDRs = "", nil
	upd = api.DeepCopy(fresh)
	upd.Spec.PodCIDR = "10.244.3.0/24"
	checkErrs(t, "podCIDR assigned", ValidateStatusUpdate(upd, fresh), nil)
}

func TestValidateNamespace(t *testing.T) {
	t.Parallel()
	ns := &api.Namespace{ObjectMeta: api.ObjectMeta{Name: "team-a"}}
	defaults.DefaultCreate(ns)
	checkErrs(t, "valid", Validate(ns), nil)
	bad := &api.Namespace{ObjectMeta: api.ObjectMeta{Name: "team.a"}, Spec: api.NamespaceSpec{Finalizers: []api.FinalizerName{"custom"}}}
	checkErrs(t, "invalid", Validate(bad), []string{
		`metadata.name: Invalid value: "team.a": must not contain dots`,
		`spec.finalizers[0]: Invalid value: "custom": name is neither a standard finalizer name nor is it fully qualified`,
	})
	ns.ResourceVersion = "1"
	st := api.DeepCopy(ns)
	st.Status.Phase = api.NamespaceTerminating
	checkErrs(t, "status", ValidateStatusUpdate(st, ns), []string{
		`status.phase: Invalid value: "Terminating": may only be 'Active' if ` + "`deletionTimestamp`" + ` is empty`})
	fin := api.DeepCopy(ns)
	fin.Spec.Finalizers = nil
	checkErrs(t, "finalize", ValidateNamespaceFinalizeUpdate(fin, ns), nil)
}

func TestValidateConfigMapAndSecret(t *testing.T) {
	t.Parallel()
	meta := api.ObjectMeta{Name: "cfg", Namespace: "default"}
	cm := &api.ConfigMap{ObjectMeta: meta, Data: map[string]string{"app.conf": "x", "bad key": "y", "dup": "1"}, BinaryData: map[string][]byte{"dup": {1}}}
	checkErrs(t, "configmap keys", Validate(cm), []string{
		`data[bad key]: Invalid value: "bad key": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`,
		`data[dup]: Invalid value: "dup": duplicate of key present in binaryData`,
	})
	big := &api.ConfigMap{ObjectMeta: meta, Data: map[string]string{"a": strings.Repeat("x", MaxSecretSize+1)}}
	checkErrs(t, "configmap size", Validate(big), []string{": Too long: may not be more than 1048576 bytes"})

	old := &api.ConfigMap{ObjectMeta: meta, Immutable: ptr(true), Data: map[string]string{"a": "1"}}
	old.ResourceVersion = "1"
	upd := api.DeepCopy(old)
	upd.Data["a"] = "2"
	upd.Immutable = ptr(false)
	checkErrs(t, "immutable configmap", ValidateUpdate(upd, old), []string{
		"immutable: Forbidden: field is immutable when `immutable` is set",
		"data: Forbidden: field is immutable when `immutable` is set",
	})
	same := api.DeepCopy(old)
	same.Labels = map[string]string{"x": "y"}
	checkErrs(t, "immutable configmap relabelled", ValidateUpdate(same, old), nil)

	sec := &api.Secret{ObjectMeta: meta, Type: api.SecretTypeTLS, Data: map[string][]byte{"tls.crt": []byte("c")}}
	checkErrs(t, "tls secret", Validate(sec), []string{"data[tls.key]: Required value"})
	dc := &api.Secret{ObjectMeta: meta, Type: api.SecretTypeDockerConfigJSON, Data: map[string][]byte{".dockerconfigjson": []byte("{not json")}}
	errs := Validate(dc)
	checkErrs(t, "docker config", errs, []string{`data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": invalid character ...`})
	if strings.Contains(errs.ToAggregate(), "not json") {
		t.Errorf("secret contents leaked into the error: %s", errs.ToAggregate())
	}
	oldSec := &api.Secret{ObjectMeta: meta, Type: api.SecretTypeOpaque, Data: map[string][]byte{"k": []byte("v")}}
	oldSec.ResourceVersion = "1"
	newSec := api.DeepCopy(oldSec)
	newSec.Type = api.SecretTypeBasicAuth
	checkErrs(t, "secret type change", ValidateUpdate(newSec, oldSec), []string{
		`type: Invalid value: "kubernetes.io/basic-auth": field is immutable`,
		"data[username]: Required value",
		"data[password]: Required value",
	})
}

func TestValidateEventsEndpointsSlicesLeases(t *testing.T) {
	t.Parallel()
	ev := &api.Event{ObjectMeta: api.ObjectMeta{Name: "web.17a", Namespace: "default"},
		InvolvedObject: api.ObjectReference{Kind: "Pod", Namespace: "other", Name: "web"}, Reason: "Started"}
	checkErrs(t, "event namespace", Validate(ev), []string{`involvedObject.namespace: Invalid value: "other": does not match event.namespace`})
	newEv := &api.Event{ObjectMeta: api.ObjectMeta{Name: "e", Namespace: "default"}, EventTime: api.NowMicro(),
		InvolvedObject: api.ObjectReference{Kind: "Node", Name: "n1"}, ReportingController: "kubelet"}
	checkErrs(t, "new-style event", Validate(newEv), []string{
		"reportingInstance: Required value", "action: Required value", "reason: Required value"})

	ep := &api.Endpoints{ObjectMeta: api.ObjectMeta{Name: "web", Namespace: "default"}, Subsets: []api.EndpointSubset{
		{Addresses: []api.EndpointAddress{{IP: "10.244.1.5"}, {IP: "0.0.0.0"}}, Ports: []api.EndpointPort{{Name: "http", Port: 80, Protocol: "TCP"}, {Port: 81, Protocol: "TCP"}}},
		{},
	}}
	checkErrs(t, "endpoints", Validate(ep), []string{
		`subsets[0].addresses[1].ip: Invalid value: "0.0.0.0": may not be unspecified (0.0.0.0)`,
		"subsets[0].ports[1].name: Required value",
		"subsets[1]: Required value: must specify `addresses` or `notReadyAddresses`",
	})

	slice := &api.EndpointSlice{ObjectMeta: api.ObjectMeta{Name: "web-abc", Namespace: "default", Labels: map[string]string{api.LabelServiceName: "web"}},
		AddressType: api.AddressTypeIPv4,
		Endpoints:   []api.Endpoint{{Addresses: []string{"10.244.1.5"}}, {Addresses: []string{"fd00::1"}}, {}},
		Ports:       []api.EndpointSlicePort{{Name: ptr("http"), Port: ptr(int32(80))}, {Name: ptr("http"), Protocol: ptr(api.ProtocolTCP)}},
	}
	defaults.Default(slice)
	checkErrs(t, "endpoint slice", Validate(slice), []string{
		`endpoints[1].addresses[0]: Invalid value: "fd00::1": must be a valid IPv4 address`,
		"endpoints[2].addresses: Required value: must contain at least 1 address",
		`ports[1].name: Duplicate value: "http"`,
	})
	oldSlice := api.DeepCopy(slice)
	oldSlice.ResourceVersion = "1"
	oldSlice.Endpoints = oldSlice.Endpoints[:1]
	newSlice := api.DeepCopy(oldSlice)
	newSlice.Ports = newSlice.Ports[:1]
	newSlice.AddressType = api.AddressTypeFQDN
	newSlice.Endpoints = []api.Endpoint{{Addresses: []string{"db.example.com"}}}
	checkErrs(t, "slice address type immutable", ValidateUpdate(newSlice, oldSlice), []string{`addressType: Invalid value: "FQDN": field is immutable`})

	lease := &api.Lease{ObjectMeta: api.ObjectMeta{Name: "node-1", Namespace: api.NamespaceNodeLease},
		Spec: api.LeaseSpec{LeaseDurationSeconds: ptr(int32(0)), LeaseTransitions: ptr(int32(-1)), PreferredHolder: ptr("b")}}
	checkErrs(t, "lease", Validate(lease), []string{
		"spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0",
		"spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0",
		"spec.preferredHolder: Forbidden: may only be specified if `strategy` is defined",
	})
}

// Every registered kind dispatches to real rules: a well-formed object of
// each kind validates, and an object of an unknown type is an internal error.
func TestDispatch(t *testing.T) {
	t.Parallel()
	for _, r := range api.Resources {
		obj := r.New()
		errs := Validate(obj)
		if len(errs) == 0 {
			t.Errorf("%s: an empty object validated", r.Kind)
		}
		for _, e := range errs {
			if e.Type == field.ErrorTypeInternal {
				t.Errorf("%s: %v", r.Kind, e)
			}
		}
		old := r.New()
		if errs := ValidateUpdate(obj, old); len(errs) == 0 {
			t.Errorf("%s: update without resourceVersion validated", r.Kind)
		}
	}
	type alien struct {
		api.TypeMeta
		api.ObjectMeta
	}
	errs := Validate(&alien{})
	if len(errs) != 1 || errs[0].Type != field.ErrorTypeInternal {
		t.Errorf("unknown type: %v", errs)
	}
	if errs := ValidateUpdate(&api.Pod{}, &api.Node{}); len(errs) != 1 || errs[0].Type != field.ErrorTypeInternal {
		t.Errorf("mismatched update: %v", errs)
	}
}
