package authz

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/request"
)

// decide is the Node authorizer's decision for a get of namespace/name of
// resource (a token create for serviceaccounts) by node.
func decide(t *testing.T, az *Node, node, resource, namespace, name string) Decision {
	t.Helper()
	u := &request.User{Name: "system:node:" + node, Groups: []string{NodesGroup, AllAuthenticated}}
	a := res(u, "get", "", resource, "", namespace, name)
	if resource == "serviceaccounts" {
		a = res(u, "create", "", resource, "token", namespace, name)
	}
	d, _, err := az.Authorize(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestNodeGraphPodUpdates(t *testing.T) {
	t.Parallel()
	g := NewNodeGraph()
	az := NewNode(g, &testGraph{})
	pod := func(node string, secrets ...string) *api.Pod {
		p := &api.Pod{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "web"},
			Spec: api.PodSpec{NodeName: node, ServiceAccountName: "robot"}}
		for _, s := range secrets {
			p.Spec.Volumes = append(p.Spec.Volumes, api.Volume{Name: s, VolumeSource: api.VolumeSource{Secret: &api.SecretVolumeSource{SecretName: s}}})
		}
		return p
	}
	// Another pod on node-a shares one secret: it keeps that one readable.
	g.SetPod(&api.Pod{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "other"}, Spec: api.PodSpec{NodeName: "node-a",
		Volumes: []api.Volume{{Name: "s", VolumeSource: api.VolumeSource{Secret: &api.SecretVolumeSource{SecretName: "shared"}}}}}})
	type want struct {
		node, resource, name string
		d                    Decision
	}
	check := func(step string, wants ...want) {
		t.Helper()
		for _, w := range wants {
			if got := decide(t, az, w.node, w.resource, "default", w.name); got != w.d {
				t.Errorf("%s: %s %s/%s = %v, want %v", step, w.node, w.resource, w.name, got, w.d)
			}
		}
	}

	g.SetPod(pod("node-a", "one", "two", "shared"))
	check("created on node-a",
		want{"node-a", "secrets", "one", Allow}, want{"node-a", "secrets", "two", Allow}, want{"node-a", "secrets", "shared", Allow},
		want{"node-a", "serviceaccounts", "robot", Allow}, want{"node-a", "pods", "web", Allow},
		want{"node-b", "secrets", "one", NoOpinion}, want{"node-b", "pods", "web", NoOpinion})

	g.SetPod(pod("node-a", "one"))
	check("updated without two and shared",
		want{"node-a", "secrets", "one", Allow}, want{"node-a", "secrets", "two", NoOpinion}, want{"node-a", "secrets", "shared", Allow})

	g.SetPod(pod("node-b", "one"))
	check("moved to node-b",
		want{"node-a", "secrets", "one", NoOpinion}, want{"node-a", "serviceaccounts", "robot", NoOpinion}, want{"node-a", "pods", "web", NoOpinion},
		want{"node-b", "secrets", "one", Allow}, want{"node-b", "serviceaccounts", "robot", Allow}, want{"node-b", "pods", "web", Allow},
		want{"node-a", "secrets", "shared", Allow})

	pending := pod("", "one")
	g.SetPod(pending)
	check("unbound", want{"node-b", "secrets", "one", NoOpinion}, want{"node-b", "pods", "web", NoOpinion})
	if node, found := g.podNode("default", "web"); !found || node != "" {
		t.Errorf("unbound pod: node %q, found %v; want \"\", true", node, found)
	}

	g.SetPod(pod("node-b", "one"))
	g.DeletePod("default", "web")
	check("deleted", want{"node-b", "secrets", "one", NoOpinion}, want{"node-b", "pods", "web", NoOpinion})
	if _, found := g.podNode("default", "web"); found {
		t.Error("a deleted pod is still known")
	}

	// A relist keeps only what it lists.
	g.SetPod(pod("node-b", "one"))
	g.ReplacePods([]*api.Pod{pod("node-a", "two")})
	check("replaced",
		want{"node-b", "secrets", "one", NoOpinion}, want{"node-a", "secrets", "two", Allow}, want{"node-a", "secrets", "shared", NoOpinion})
	g.ReplacePods(nil)
	g.mu.RLock()
	defer g.mu.RUnlock()
	if len(g.pods) != 0 || len(g.refs) != 0 {
		t.Errorf("after an empty relist: %d pods, references of %d nodes left", len(g.pods), len(g.refs))
	}
}

func TestNodeGraphVolumeUpdates(t *testing.T) {
	t.Parallel()
	g := NewNodeGraph()
	az := NewNode(g, &testGraph{})
	g.SetPod(&api.Pod{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "db"}, Spec: api.PodSpec{NodeName: "node-a",
		Volumes: []api.Volume{{Name: "data", VolumeSource: api.VolumeSource{PersistentVolumeClaim: &api.PersistentVolumeClaimVolumeSource{ClaimName: "db-data"}}}}}})
	pv := func(claim, secret string) *api.PersistentVolume {
		return &api.PersistentVolume{ObjectMeta: api.ObjectMeta{Name: "pv"}, Spec: api.PersistentVolumeSpec{
			ClaimRef: &api.ObjectReference{Namespace: "default", Name: claim},
			PersistentVolumeSource: api.PersistentVolumeSource{CSI: json.RawMessage(
				`{"driver":"d","volumeHandle":"h","nodeStageSecretRef":{"name":"` + secret + `","namespace":"default"}}`)}}}
	}
	g.SetPersistentVolume(pv("db-data", "creds"))
	if decide(t, az, "node-a", "persistentvolumes", "", "pv") != Allow || decide(t, az, "node-a", "secrets", "default", "creds") != Allow {
		t.Error("the volume of its claim and the volume's stage secret are not readable")
	}
	g.SetPersistentVolume(pv("other-data", "creds2"))
	for _, c := range [][2]string{{"persistentvolumes", "pv"}, {"secrets", "creds"}, {"secrets", "creds2"}} {
		if decide(t, az, "node-a", c[0], "default", c[1]) != NoOpinion {
			t.Errorf("after the volume moved to another claim, %s %s is readable", c[0], c[1])
		}
	}
	g.SetPersistentVolume(pv("db-data", "creds2"))
	g.DeletePersistentVolume("pv")
	if decide(t, az, "node-a", "persistentvolumes", "", "pv") != NoOpinion || decide(t, az, "node-a", "secrets", "default", "creds2") != NoOpinion {
		t.Error("a deleted volume or its secret is readable")
	}
	g.ReplacePersistentVolumes([]*api.PersistentVolume{pv("db-data", "creds")})
	if decide(t, az, "node-a", "persistentvolumes", "", "pv") != Allow || decide(t, az, "node-a", "secrets", "default", "creds") != Allow {
		t.Error("a relisted volume is not readable")
	}
	// The claim's pod leaves the node: its volume and secret go with it.
	g.DeletePod("default", "db")
	if decide(t, az, "node-a", "persistentvolumes", "", "pv") != NoOpinion || decide(t, az, "node-a", "secrets", "default", "creds") != NoOpinion {
		t.Error("the volume of a claim no pod on the node uses is readable")
	}
}
