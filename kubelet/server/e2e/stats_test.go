package e2e_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubelet/stats"
	"github.com/minik8s/minik8s/kubelet/testimage"
)

// TestResourceStats runs a pod that burns CPU and one that idles on real
// containerd and reads the kubelet's /stats/summary and /metrics/resource:
// the burner's cgroup shows about a core, the idler's next to none, and an
// unauthorized client is refused.
func TestResourceStats(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	n := startNode(t, ctx, 2)
	one := int64(1)
	pc := client.Resource[api.Pod](n.c).Namespace("default")
	for name, script := range map[string]string{"burner": "while true; do :; done", "idler": "while true; do sleep 1; done"} {
		if _, err := pc.Create(ctx, &api.Pod{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: name}, Spec: api.PodSpec{
			NodeName: n.name, TerminationGracePeriodSeconds: &one,
			Containers: []api.Container{{Name: "work", Image: testimage.Ref, ImagePullPolicy: api.PullIfNotPresent,
				Command: []string{"sh", "-c", script}}}}}); err != nil {
			t.Fatal(err)
		}
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{n.admin}}}}
	get := func(path string) (string, int) {
		resp, err := hc.Get("https://" + n.kubelet + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b), resp.StatusCode
	}

	// Readings at least a second apart give rates; wait for both pods'
	// containers to appear with one.
	var sum stats.Summary
	for {
		body, code := get("/stats/summary")
		if code != http.StatusOK {
			t.Fatalf("/stats/summary: %d %s", code, body)
		}
		sum = stats.Summary{}
		if err := json.Unmarshal([]byte(body), &sum); err != nil {
			t.Fatal(err)
		}
		ready := 0
		for _, p := range sum.Pods {
			if len(p.Containers) == 1 && p.Containers[0].CPU.UsageNanoCores != nil && p.CPU != nil && p.CPU.UsageNanoCores != nil {
				ready++
			}
		}
		if ready == 2 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("no rates for both pods: %s", body)
		}
		time.Sleep(1500 * time.Millisecond)
	}
	if sum.Node.NodeName != n.name || sum.Node.CPU.UsageNanoCores == nil || *sum.Node.Memory.WorkingSetBytes == 0 {
		t.Errorf("node stats %+v", sum.Node)
	}
	byName := map[string]stats.PodStats{}
	for _, p := range sum.Pods {
		byName[p.PodRef.Name] = p
	}
	burner, idler := byName["burner"], byName["idler"]
	if burner.PodRef.Namespace != "default" || burner.PodRef.UID == "" || burner.Containers[0].Name != "work" {
		t.Errorf("burner %+v", burner)
	}
	// A busy loop takes most of a core on an idle machine, but this one is
	// shared; a tenth of a core is far above the idler's.
	if b := *burner.Containers[0].CPU.UsageNanoCores; b < 1e8 {
		t.Errorf("burner uses %d nanocores", b)
	}
	if i := *idler.Containers[0].CPU.UsageNanoCores; i > 5e7 {
		t.Errorf("idler uses %d nanocores", i)
	}
	if w := *idler.Containers[0].Memory.WorkingSetBytes; w == 0 || w > 100<<20 {
		t.Errorf("idler working set %d", w)
	}
	if *burner.Memory.WorkingSetBytes < *burner.Containers[0].Memory.WorkingSetBytes {
		t.Errorf("pod working set %d below its container's %d", *burner.Memory.WorkingSetBytes, *burner.Containers[0].Memory.WorkingSetBytes)
	}

	body, code := get("/metrics/resource")
	if code != http.StatusOK {
		t.Fatalf("/metrics/resource: %d %s", code, body)
	}
	cpuLine := fmt.Sprintf(`container_cpu_usage_seconds_total{container="work",namespace="default",pod="burner"} `)
	var seen bool
	for line := range strings.SplitSeq(body, "\n") {
		if v, ok := strings.CutPrefix(line, cpuLine); ok {
			f := strings.Fields(v)
			secs, err := strconv.ParseFloat(f[0], 64)
			if err != nil || secs <= 0 || len(f) != 2 {
				t.Errorf("burner cpu line %q", line)
			}
			seen = true
		}
	}
	for _, want := range []string{"# TYPE node_cpu_usage_seconds_total counter\nnode_cpu_usage_seconds_total ",
		"\nnode_memory_working_set_bytes ", `pod_memory_working_set_bytes{namespace="default",pod="idler"} `,
		`container_start_time_seconds{container="work",namespace="default",pod="idler"} `, "\nresource_scrape_error 0\n"} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics/resource lacks %q:\n%s", want, body)
		}
	}
	if !seen {
		t.Errorf("no burner CPU line:\n%s", body)
	}

	// Without a client certificate: 401.
	resp, err := (&http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}).Get("https://" + n.kubelet + "/stats/summary")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("anonymous /stats/summary: %d", resp.StatusCode)
	}
	// Another user: 403 naming nodes/stats and nodes/metrics, until RBAC
	// grants them (the kubelet asks with a SubjectAccessReview). /pods and
	// /healthz are nodes/pods and nodes/healthz or else nodes/proxy, as kube's
	// kubelet with KubeletFineGrainedAuthz.
	hc = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{n.other}}}}
	for path, sub := range map[string]string{"/stats/summary": "stats", "/metrics/resource": "metrics", "/pods": "pods proxy", "/healthz": "healthz proxy"} {
		body, code := get(path)
		if code != http.StatusForbidden || body != "Forbidden (user=e2e-other, verb=get, resource=nodes, subresource(s)=["+sub+"])\n" {
			t.Errorf("%s as another user: %d %q", path, code, body)
		}
	}
	if _, err := client.Resource[api.ClusterRole](n.c).Create(ctx, &api.ClusterRole{ObjectMeta: api.ObjectMeta{Name: "metrics-reader"},
		Rules: []api.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"nodes/metrics"}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Resource[api.ClusterRoleBinding](n.c).Create(ctx, &api.ClusterRoleBinding{ObjectMeta: api.ObjectMeta{Name: "metrics-reader"},
		RoleRef:  api.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "metrics-reader"},
		Subjects: []api.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: "e2e-other"}}}); err != nil {
		t.Fatal(err)
	}
	// The refusal stays cached for the harness's short denial TTL.
	deadline := time.Now().Add(20 * time.Second)
	for {
		body, code := get("/metrics/resource")
		if code == http.StatusOK && strings.Contains(body, "node_cpu_usage_seconds_total") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/metrics/resource once granted: %d %s", code, body)
		}
		time.Sleep(time.Second)
	}
	if body, code := get("/stats/summary"); code != http.StatusForbidden {
		t.Errorf("/stats/summary with only nodes/metrics granted: %d %s", code, body)
	}
}
