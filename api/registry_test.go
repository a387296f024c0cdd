package api

import (
	"fmt"
	"reflect"
	"testing"
)

func TestResourceTable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		typed      string
		group      string
		resource   string
		kind       string
		namespaced bool
	}{
		{"po", "", "pods", "Pod", true},
		{"pods", "", "pods", "Pod", true},
		{"Pod", "", "pods", "Pod", true},
		{"no", "", "nodes", "Node", false},
		{"ns", "", "namespaces", "Namespace", false},
		{"svc", "", "services", "Service", true},
		{"ep", "", "endpoints", "Endpoints", true},
		{"ev", "", "events", "Event", true},
		{"cm", "", "configmaps", "ConfigMap", true},
		{"secret", "", "secrets", "Secret", true},
		{"deploy", "apps", "deployments", "Deployment", true},
		{"deployments.apps", "apps", "deployments", "Deployment", true},
		{"rs", "apps", "replicasets", "ReplicaSet", true},
		{"job", "batch", "jobs", "Job", true},
		{"endpointslices", "discovery.k8s.io", "endpointslices", "EndpointSlice", true},
		{"lease", "coordination.k8s.io", "leases", "Lease", true},
	}
	for _, tc := range tests {
		r, ok := FindResource(tc.typed)
		if !ok {
			t.Errorf("FindResource(%q) found nothing", tc.typed)
			continue
		}
		if r.Group != tc.group || r.Resource != tc.resource || r.Kind != tc.kind || r.Namespaced != tc.namespaced {
			t.Errorf("FindResource(%q) = %s/%s %s namespaced=%t", tc.typed, r.Group, r.Resource, r.Kind, r.Namespaced)
		}
		if byKind, ok := LookupKind(r.GroupVersion(), r.Kind); !ok || byKind.Resource != r.Resource {
			t.Errorf("LookupKind(%s, %s) does not find %s", r.GroupVersion(), r.Kind, r.Resource)
		}
	}
	for resource, want := range map[string]string{"pods": "[all]", "deployments": "[all]", "configmaps": "[]", "crd": "[api-extensions]"} {
		if r, _ := FindResource(resource); fmt.Sprint(r.Categories) != want {
			t.Errorf("%s: categories %v, want %s", resource, r.Categories, want)
		}
	}
	for _, sub := range []struct{ resource, sub string }{
		{"pods", "status"}, {"pods", "binding"}, {"pods", "log"}, {"nodes", "status"}, {"services", "status"},
		{"namespaces", "status"}, {"namespaces", "finalize"}, {"deployments", "scale"}, {"deployments", "status"},
		{"replicasets", "scale"}, {"replicasets", "status"}, {"jobs", "status"},
	} {
		r, _ := FindResource(sub.resource)
		if !r.HasSubresource(sub.sub) {
			t.Errorf("%s has no %s subresource", sub.resource, sub.sub)
		}
	}
}

// Every registered kind's New returns its own struct, named after the kind,
// and resource names are unique within a group-version.
func TestResourceTableConsistent(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, r := range Resources {
		key := r.GroupVersion() + "/" + r.Resource
		if seen[key] {
			t.Errorf("resource %s registered twice", key)
		}
		seen[key] = true
		obj := r.New()
		// events.k8s.io's Event is EventV1 beside the core Event, and
		// autoscaling/v1's HPA HorizontalPodAutoscalerV1 beside v2's.
		name := reflect.TypeOf(obj).Elem().Name()
		renamed := r.Group == "events.k8s.io" && name == "EventV1" ||
			r.GroupVersion() == "autoscaling/v1" && name == "HorizontalPodAutoscalerV1"
		if name != r.Kind && !renamed {
			t.Errorf("%s: New returns %s", r.Kind, name)
		}
		if first, _ := LookupResource(r.Group, r.Resource); first.Version != r.Version && r.Preferred() {
			t.Errorf("%s: Preferred disagrees with LookupResource", r.GroupVersion())
		}
		if r.Singular == "" || r.Version == "" {
			t.Errorf("%s: incomplete entry %+v", r.Kind, r)
		}
	}
}
