package root_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/internal/crdtest"
)

// TestIntegrationAutoscaleAsKubectl runs the same autoscale commands with
// kubectl-lite in namespace lite and the real kubectl in namespace real of
// one apiserver: the same output, errors and exit codes, and the same
// HorizontalPodAutoscalers made (autoscaling/v2, or v1 when kubectl falls
// back to it).
func TestIntegrationAutoscaleAsKubectl(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()
	dir := t.TempDir()
	manifest := filepath.Join(dir, "deploy.yaml")
	if err := os.WriteFile(manifest, []byte(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: busybox}]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	// Custom resources: widgets have a scale subresource, gadgets none.
	crd := func(plural, kind, short, subresources string) string {
		return `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"` + plural + `.example.com"},
			"spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"` + plural + `","kind":"` + kind + `","shortNames":["` + short + `"]},
			"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}` +
			subresources + `}]}}`
	}
	crdtest.Create(t, c.client,
		crd("widgets", "Widget", "wd", `,"subresources":{"scale":{"specReplicasPath":".spec.replicas","statusReplicasPath":".status.replicas"}}`),
		crd("gadgets", "Gadget", "gd", ""))
	for _, ns := range []string{"lite", "real"} {
		c.mustRun("", "create", "namespace", ns)
		for _, o := range []struct{ resource, body string }{
			{"widgets", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1"},"spec":{"replicas":2}}`},
			{"gadgets", `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g1"},"spec":{"replicas":2}}`},
		} {
			if _, err := c.client.Do(ctx, client.Request{Method: "POST", Path: "/apis/example.com/v1/namespaces/" + ns + "/" + o.resource, Body: []byte(o.body)}); err != nil {
				t.Fatal(err)
			}
		}
		c.mustRun("", "-n", ns, "create", "deployment", "web", "--image=busybox")
		c.mustRun("", "-n", ns, "create", "configmap", "cm")
		sts := `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"db"},"spec":{"serviceName":"db",
			"selector":{"matchLabels":{"app":"db"}},"template":{"metadata":{"labels":{"app":"db"}},"spec":{"containers":[{"name":"c","image":"busybox"}]}}}}`
		c.mustRun(sts, "-n", ns, "apply", "-f", "-")
	}
	for _, args := range [][]string{
		{"deployment", "web", "--max=5"},
		{"deployment", "web", "--max=5"}, // exists: no v1 fallback without --cpu
		{"deploy/web", "--max=5", "--cpu=70%", "--name=web2"},
		{"deploy/web", "--max=5", "--cpu=70%", "--name=web2"}, // exists: the v1 fallback's error
		{"deploy/web", "--max=5", "--cpu=500m", "--name=web2"},
		{"statefulset", "db", "--min=2", "--max=4", "--cpu=500m", "--memory=200Mi", "--name=db-hpa"},
		{"sts", "db", "--max=3", "--cpu-percent=60", "--name=db-pct"},
		{"sts", "db", "--max=3", "--cpu=50", "--memory=60%", "--name=db-units"},
		{"deployment", "web", "--max=3", "--name=dry", "--dry-run=client", "-o", "yaml"},
		{"deployment", "web", "--max=3", "--name=dry", "--dry-run=client"},
		{"deployment", "web", "--max=3", "--name=sdry", "--dry-run=server"},
		{"deployment", "web", "--max=3", "--name=named", "-o", "name"},
		{"deployment", "web", "--max=3", "--name=saved", "--save-config"},
		{"deployment", "web", "--max=3", "--name=managed", "--field-manager=me"},
		{"-f", manifest, "--max=2", "--name=fromfile"},
		{"deployment", "web"},
		{"deployment", "web", "--min=5", "--max=3"},
		{"deployment", "web", "--max=0"},
		{"deployment", "web", "--max=3", "--cpu=abc"},
		{"deployment", "web", "--max=3", "--memory=-5%"},
		{"deployment", "web", "--max=3", "--cpu=50%", "--cpu-percent=50"},
		{"deployment", "web", "--max=3", "--dry-run=maybe"},
		{"deployment", "web", "--max=3", "-o", "bogus"},
		{"deployment", "web", "--max=3", "--cpu=70%", "--name=bogus", "--dry-run=client", "-o", "bogus"},
		{"deployment", "web", "--max=3", "--name=printed", "-o", "yaml"},
		{"deployment", "web", "--max=3", "--name=dry", "--dry-run=client", "-o", "json"},
		{"deployment", "web", "missing", "--max=3", "--name=multi"},
		{"foo", "bar", "--max=3"},
		{"configmap", "cm", "--max=3"},
		{"deployment", "missing", "--max=3"},
		{"deployment", "--max=3"},
		{"--max=3"},
		// Custom resources, found through discovery.
		{"widgets", "w1", "--max=4"},
		{"widget/w1", "--min=2", "--max=4", "--cpu=60%", "--name=w1-cpu"},
		{"widgets.example.com", "w1", "--max=3", "--name=w1-group", "-o", "yaml"},
		{"wd", "w1", "--max=3", "--name=w1-short", "--dry-run=client", "-o", "json"},
		{"Widget", "w1", "--max=3", "--name=w1-kind"},
		{"widgets", "missing", "--max=3"},
		{"gadgets", "g1", "--max=3"},
		{"gd/g1", "--max=3", "--cpu=50%"},
		{"widgets.other.com", "w1", "--max=3"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			with := func(ns string) []string { return append([]string{"-n", ns, "autoscale"}, args...) }
			out, errOut, code := c.run("", with("lite")...)
			kOut, kErrOut, kCode := c.kubectl(with("real")...)
			if hpaNorm(out, "lite") != hpaNorm(kOut, "real") || hpaNorm(errOut, "lite") != hpaNorm(kErrOut, "real") || code != kCode {
				t.Errorf("kubectl-lite: exit %d\n%s%s\nkubectl: exit %d\n%s%s", code, out, errOut, kCode, kOut, kErrOut)
			}
		})
	}
	// The autoscalers made, in v2 and in v1, with kubectl's field
	// managers and annotations.
	for _, version := range []string{"v2", "v1"} {
		info := api.ResourceInfo{Group: "autoscaling", Version: version, Resource: "horizontalpodautoscalers", Kind: "HorizontalPodAutoscaler", Namespaced: true}
		objects := func(ns string) string {
			l, err := c.client.Dynamic(info).Namespace(ns).List(ctx, client.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, u := range l.Items {
				md := u.Object["metadata"].(map[string]any)
				for _, k := range []string{"uid", "resourceVersion", "creationTimestamp"} {
					delete(md, k)
				}
				for _, m := range md["managedFields"].([]any) {
					delete(m.(map[string]any), "time")
				}
				b, _ := json.Marshal(u.Object)
				out = append(out, hpaNorm(string(b), ns))
			}
			return strings.Join(out, "\n")
		}
		lite, real := objects("lite"), objects("real")
		if lite != real {
			t.Errorf("autoscaling/%s HPAs:\nkubectl-lite:\n%s\nkubectl:\n%s", version, lite, real)
		}
		if version == "v2" && strings.Count(lite, "\n") != 14 {
			t.Errorf("want 15 HPAs, have:\n%s", lite)
		}
	}
}

// norm makes one tool's output comparable with the other's: the tool and
// namespace names, and the server-set values of a server dry run.
func hpaNorm(s, ns string) string {
	s = strings.ReplaceAll(s, "kubectl-lite", "kubectl")
	s = strings.ReplaceAll(s, `"`+ns+`"`, `"NS"`)
	s = strings.ReplaceAll(s, `\"`+ns+`\"`, `\"NS\"`) // in the last-applied annotation
	s = strings.ReplaceAll(s, " "+ns+"\n", " NS\n")
	s = strings.ReplaceAll(s, "namespace="+ns, "namespace=NS")
	return serverSetValues.ReplaceAllString(s, "$1X")
}
