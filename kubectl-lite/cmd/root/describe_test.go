package root_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
	"github.com/minik8s/minik8s/internal/client"
)

func TestIntegrationDescribeKinds(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()
	node := &api.Node{ObjectMeta: api.ObjectMeta{Name: "n1", Labels: map[string]string{"node-role.kubernetes.io/worker": ""}},
		Spec: api.NodeSpec{PodCIDR: "10.244.1.0/24", Taints: []api.Taint{{Key: "dedicated", Value: "db", Effect: api.TaintEffectNoSchedule}}}}
	node, err := client.Resource[api.Node](c.client).Create(ctx, node)
	if err != nil {
		t.Fatal(err)
	}
	node.Status = api.NodeStatus{
		Capacity:    api.ResourceList{api.ResourceCPU: resource.MustParse("2"), api.ResourceMemory: resource.MustParse("4Gi")},
		Allocatable: api.ResourceList{api.ResourceCPU: resource.MustParse("2"), api.ResourceMemory: resource.MustParse("4Gi")},
		Conditions:  []api.NodeCondition{{Type: api.NodeReady, Status: api.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status"}},
		Addresses:   []api.NodeAddress{{Type: api.NodeInternalIP, Address: "10.0.0.2"}, {Type: api.NodeHostName, Address: "n1"}},
		NodeInfo:    api.NodeSystemInfo{KubeletVersion: "v0.1.0", ContainerRuntimeVersion: "containerd://1.6.20", OperatingSystem: "linux", Architecture: "amd64"},
	}
	if _, err := client.Resource[api.Node](c.client).UpdateStatus(ctx, node); err != nil {
		t.Fatal(err)
	}
	yes := true
	two := int32(2)
	rs, err := client.Resource[api.ReplicaSet](c.client).Namespace("default").Create(ctx, &api.ReplicaSet{
		ObjectMeta: api.ObjectMeta{Name: "web-abc", Labels: map[string]string{"app": "web"}},
		Spec: api.ReplicaSetSpec{Replicas: &two, Selector: &api.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: api.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: api.PodSpec{Containers: []api.Container{{Name: "app", Image: "busybox:1"}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Resource[api.Pod](c.client).Namespace("default").Create(ctx, &api.Pod{
		ObjectMeta: api.ObjectMeta{Name: "web-abc-1", Labels: map[string]string{"app": "web"},
			OwnerReferences: []api.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: &yes}}},
		Spec: api.PodSpec{NodeName: "n1", Containers: []api.Container{{Name: "app", Image: "busybox:1",
			Resources: api.ResourceRequirements{Requests: api.ResourceList{api.ResourceCPU: resource.MustParse("500m")}}}}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Resource[api.Service](c.client).Namespace("default").Create(ctx, &api.Service{
		ObjectMeta: api.ObjectMeta{Name: "web"},
		Spec:       api.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []api.ServicePort{{Name: "http", Port: 80, TargetPort: api.FromInt(8080)}}},
	}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"describe", "node", "n1"}, []string{"Name:               n1\n", "Roles:              worker\n", "Taints:             dedicated=db:NoSchedule\n",
			"  Ready            True    ", "KubeletReady", "  InternalIP:  10.0.0.2\n", "  cpu:     2\n", "PodCIDR:                      10.244.1.0/24\n",
			"Non-terminated Pods:          (1 in total)\n", "  default                     web-abc-1", "500m (25%)", "  Container Runtime Version:  containerd://1.6.20\n",
			"Lease:\n  Failed to get lease", "Events:                       <none>\n"}},
		{[]string{"describe", "rs", "web-abc"}, []string{"Name:         web-abc\n", "Selector:     app=web\n", "Replicas:     0 current / 2 desired\n",
			"Pods Status:  0 Running / 1 Waiting / 0 Succeeded / 0 Failed\n", "Pod Template:\n  Labels:  app=web\n", "    Image:         busybox:1\n"}},
		{[]string{"describe", "svc", "web"}, []string{"Name:              web\n", "Selector:          app=web\n", "Type:              ClusterIP\n",
			"Port:              http  80/TCP\n", "TargetPort:        8080/TCP\n", "Endpoints:         <none>\n", "Events:            <none>\n"}},
		{[]string{"describe", "pods", "web-a"}, []string{"Name:             web-abc-1\n", "Controlled By:    ReplicaSet/web-abc\n", "QoS Class:        Burstable\n",
			"    Requests:\n      cpu:        500m\n"}},
	} {
		// Column widths depend on the longest cell; compare words.
		out := c.mustRun("", tc.args...)
		flat := spaces.ReplaceAllString(out, " ")
		for _, w := range tc.want {
			if !strings.Contains(flat, spaces.ReplaceAllString(w, " ")) {
				t.Errorf("%v lacks %q:\n%s", tc.args, w, out)
			}
		}
	}
}

var spaces = regexp.MustCompile(` +`)

const configFixtures = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  labels: {app: web}
  annotations: {owner: team-a}
data:
  mode: fast
  script: |
    echo one
    echo two
binaryData:
  blob: AAECAw==
---
apiVersion: v1
kind: Secret
metadata:
  name: creds
type: Opaque
stringData:
  password: hunter22
  user: admin
---
apiVersion: v1
kind: Namespace
metadata:
  name: team-a
  labels: {tier: gold}
`

// TestIntegrationDescribeConfigGolden pins kubectl's describers for
// ConfigMaps, Secrets (sizes, never values) and Namespaces.
func TestIntegrationDescribeConfigGolden(t *testing.T) {
	c := startCluster(t)
	c.mustRun(configFixtures, "apply", "-f", "-")
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"describe-configmap", []string{"describe", "cm", "settings"}},
		{"describe-secret", []string{"describe", "secret", "creds"}},
		{"describe-namespace", []string{"describe", "ns", "team-a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			golden(t, tc.name, normalize(c.mustRun("", tc.args...)))
		})
	}
	if out := c.mustRun("", "describe", "secret", "creds"); strings.Contains(out, "hunter22") || strings.Contains(out, "aHVudGVyMjI") {
		t.Errorf("describe secret shows the value:\n%s", out)
	}
	if _, errOut, code := c.run("", "describe", "nodes"); code != 0 || errOut != "No resources found\n" {
		t.Errorf("describe nodes with none: exit %d stderr %q", code, errOut)
	}
	// A missing name among others: the found one is described, the missing
	// one reported, exit 1.
	out, errOut, code := c.run("", "describe", "cm", "nothere", "settings")
	if code != 1 || !strings.HasPrefix(out, "Name:         settings\n") || errOut != "Error from server (NotFound): configmaps \"nothere\" not found\n" {
		t.Errorf("describe with a missing name: exit %d stdout %.40q stderr %q", code, out, errOut)
	}
	c.wantFail("error: a resource cannot be retrieved by name across all namespaces", "describe", "cm", "settings", "-A")
}
