package request

import (
	"net/http/httptest"
	"testing"
)

func TestParseInfo(t *testing.T) {
	t.Parallel()
	cases := []struct {
		method, url                     string
		verb, group, ns, res, name, sub string
		resourceRequest                 bool
	}{
		{"GET", "/api/v1/pods", "list", "", "", "pods", "", "", true},
		{"GET", "/api/v1/namespaces/default/pods?watch=true", "watch", "", "default", "pods", "", "", true},
		// watch is read as kube converts a boolean parameter: only absent,
		// "0" and "false" (any case) are false.
		{"GET", "/apis/metrics.k8s.io/v1beta1/pods?watch=True", "watch", "metrics.k8s.io", "", "pods", "", "", true},
		{"GET", "/api/v1/pods?watch=yes", "watch", "", "", "pods", "", "", true},
		{"GET", "/api/v1/pods?watch=", "watch", "", "", "pods", "", "", true},
		{"GET", "/api/v1/pods?watch=FALSE", "list", "", "", "pods", "", "", true},
		{"GET", "/api/v1/pods?watch=0", "list", "", "", "pods", "", "", true},
		// One name in the field selector names the list or watch, as kube's
		// RequestInfoFactory does (RBAC resourceNames then apply).
		{"GET", "/api/v1/namespaces/kube-system/configmaps?fieldSelector=metadata.name%3Dx&watch=true", "watch", "", "kube-system", "configmaps", "x", "", true},
		{"GET", "/api/v1/namespaces/kube-system/configmaps?fieldSelector=metadata.name%3D%3Dx", "list", "", "kube-system", "configmaps", "x", "", true},
		{"GET", "/api/v1/namespaces/kube-system/configmaps?fieldSelector=metadata.name%21%3Dx", "list", "", "kube-system", "configmaps", "", "", true},
		{"GET", "/api/v1/watch/namespaces/default/pods", "watch", "", "default", "pods", "", "", true},
		{"GET", "/api/v1/namespaces/default/pods/web", "get", "", "default", "pods", "web", "", true},
		{"PUT", "/api/v1/namespaces/default/pods/web/status", "update", "", "default", "pods", "web", "status", true},
		{"POST", "/api/v1/namespaces/default/pods/web/binding", "create", "", "default", "pods", "web", "binding", true},
		{"GET", "/api/v1/namespaces", "list", "", "", "namespaces", "", "", true},
		{"GET", "/api/v1/namespaces/kube-system", "get", "", "", "namespaces", "kube-system", "", true},
		{"PUT", "/api/v1/namespaces/foo/finalize", "update", "", "", "namespaces", "foo", "finalize", true},
		{"DELETE", "/apis/apps/v1/namespaces/ns1/deployments", "deletecollection", "apps", "ns1", "deployments", "", "", true},
		{"PATCH", "/apis/apps/v1/namespaces/ns1/deployments/web/scale", "patch", "apps", "ns1", "deployments", "web", "scale", true},
		// The proxy subresource: the method's verb, any path after it;
		// OPTIONS has none, as in kube's RequestInfoFactory.
		{"POST", "/api/v1/namespaces/ns/pods/web:80/proxy/a/b", "create", "", "ns", "pods", "web:80", "proxy", true},
		{"HEAD", "/api/v1/nodes/n1/proxy/healthz", "get", "", "", "nodes", "n1", "proxy", true},
		{"OPTIONS", "/api/v1/namespaces/ns/services/web/proxy/", "", "", "ns", "services", "web", "proxy", true},
		{"GET", "/apis/apps/v1", "get", "apps", "", "", "", "", false},
		{"OPTIONS", "/healthz", "options", "", "", "", "", "", false},
		{"GET", "/healthz", "get", "", "", "", "", "", false},
	}
	for _, c := range cases {
		t.Run(c.method+" "+c.url, func(t *testing.T) {
			i := ParseInfo(httptest.NewRequest(c.method, c.url, nil))
			if i.IsResourceRequest != c.resourceRequest || i.Verb != c.verb || i.APIGroup != c.group ||
				i.Namespace != c.ns || i.Resource != c.res || i.Name != c.name || i.Subresource != c.sub {
				t.Fatalf("got %+v", i)
			}
		})
	}
}

// TestParseInfoSelectors: lists, watches and deletecollections keep their
// raw selectors for the authorizers, as kube-apiserver's RequestInfo does;
// other verbs and the legacy /watch/ paths do not.
func TestParseInfoSelectors(t *testing.T) {
	t.Parallel()
	cases := []struct{ method, url, fields, labels string }{
		{"GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1&labelSelector=app%3Dweb", "spec.nodeName=n1", "app=web"},
		{"GET", "/api/v1/pods?watch=true&fieldSelector=spec.nodeName%3Dn1", "spec.nodeName=n1", ""},
		{"DELETE", "/api/v1/namespaces/default/pods?labelSelector=app", "", "app"},
		{"GET", "/api/v1/pods?fieldSelector=spec.nodeName", "spec.nodeName", ""},
		{"GET", "/api/v1/namespaces/default/pods/web?fieldSelector=spec.nodeName%3Dn1", "", ""},
		{"DELETE", "/api/v1/namespaces/default/pods/web?labelSelector=app", "", ""},
		{"GET", "/api/v1/watch/pods?fieldSelector=spec.nodeName%3Dn1", "", ""},
	}
	for _, c := range cases {
		i := ParseInfo(httptest.NewRequest(c.method, c.url, nil))
		if i.FieldSelector != c.fields || i.LabelSelector != c.labels {
			t.Errorf("%s %s: field selector %q, label selector %q; want %q, %q", c.method, c.url, i.FieldSelector, i.LabelSelector, c.fields, c.labels)
		}
	}
}
