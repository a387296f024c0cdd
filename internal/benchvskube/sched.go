package benchvskube

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minik8s/minik8s/internal/benchproc"
)

// schedPodTemplate is a pod the default scheduler (of either kind) takes.
var schedPodTemplate, _ = json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Pod",
	"metadata": map[string]any{"name": "NAME_PLACEHOLDER", "labels": map[string]string{"app": "sched"}},
	"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "busybox:1.36",
		"resources": map[string]any{"requests": map[string]string{"cpu": "100m", "memory": "64Mi"}}}}}})

// createNodes registers n Ready Nodes (32 CPUs, 256 GiB, 110 pods) with
// their status set on create, as hollow kubelets would report it, and no
// taints; nothing heartbeats them (no node lifecycle controller runs).
func createNodes(ctx context.Context, a *apiserver, n int) error {
	c := a.client(adminToken, 16)
	defer c.close()
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(n) || failed.Load() != nil {
					return
				}
				name := fmt.Sprintf("bench-node-%d", i)
				body, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Node",
					"metadata": map[string]any{"name": name, "labels": map[string]string{"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}},
					"status": map[string]any{
						"capacity":    map[string]string{"cpu": "32", "memory": "256Gi", "pods": "110"},
						"allocatable": map[string]string{"cpu": "32", "memory": "256Gi", "pods": "110"},
						"conditions":  []any{map[string]any{"type": "Ready", "status": "True", "reason": "KubeletReady", "lastHeartbeatTime": time.Now().UTC().Format(time.RFC3339)}},
					}})
				if _, err := c.mustDo(ctx, http.MethodPost, "/api/v1/nodes", body, http.StatusCreated); err != nil {
					failed.Store(err)
					return
				}
				// kube-apiserver's TaintNodesByCondition admission taints a
				// new Node not-ready until its node lifecycle controller
				// (not running here) sees it Ready: lift the taint.
				if _, err := c.mustDo(ctx, http.MethodPatch, "/api/v1/nodes/"+name, []byte(`{"spec":{"taints":null}}`), http.StatusOK); err != nil {
					failed.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		return err
	}
	return nil
}

// schedResult is one scheduler's run.
type schedResult struct {
	podsPerSec, cpuMsPerPod, peakMiB float64
}

// runScheduler creates pods pending pods in a new namespace ns, starts the
// scheduler binary against a (administrator credentials, no leader
// election, no serving port, then flags), and measures from its start until every pod
// is bound; then stops it.
func runScheduler(ctx context.Context, a *apiserver, dir, name, bin, ns string, pods int, flags []string) (schedResult, error) {
	admin := a.client(adminToken, 2)
	defer admin.close()
	for _, o := range []struct{ path, body string }{
		{"/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"` + ns + `"}}`},
		{"/api/v1/namespaces/" + ns + "/serviceaccounts", `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"default"}}`},
	} {
		if _, err := admin.mustDo(ctx, http.MethodPost, o.path, []byte(o.body), http.StatusCreated, http.StatusConflict); err != nil {
			return schedResult{}, err
		}
	}
	if _, err := createPods(ctx, a, adminToken, ns, "p", schedPodTemplate, pods, 32); err != nil {
		return schedResult{}, err
	}
	kc, err := a.kubeconfig(dir)
	if err != nil {
		return schedResult{}, err
	}
	p, err := benchproc.Start(dir, name+"-on-"+a.name, bin, append([]string{"--kubeconfig=" + kc, "--leader-elect=false", "--secure-port=0"}, flags...)...)
	if err != nil {
		return schedResult{}, err
	}
	defer p.Stop()
	start := time.Now()
	path := "/api/v1/namespaces/" + ns + "/pods?resourceVersion=0&fieldSelector=spec.nodeName%3D"
	for deadline := start.Add(30 * time.Minute); ; time.Sleep(250 * time.Millisecond) {
		if err := p.Alive(); err != nil {
			return schedResult{}, err
		}
		body, err := admin.mustDo(ctx, http.MethodGet, path, nil, http.StatusOK)
		if err != nil {
			return schedResult{}, err
		}
		var l struct {
			Items []struct{} `json:"items"`
		}
		if err := json.Unmarshal(body, &l); err != nil {
			return schedResult{}, err
		}
		if len(l.Items) == 0 {
			break
		}
		if time.Now().After(deadline) {
			return schedResult{}, fmt.Errorf("%s: %d of %d pods still unbound after 30m", name, len(l.Items), pods)
		}
	}
	elapsed := time.Since(start)
	cpu := benchproc.CPUSeconds(p.PID())
	_, peak := benchproc.RSSMiB(p.PID())
	slog.Info("scheduled", "scheduler", name, "apiserver", a.name, "pods", pods, "elapsed", elapsed.Round(time.Millisecond), "cpuSeconds", cpu)
	return schedResult{podsPerSec: float64(pods) / elapsed.Seconds(), cpuMsPerPod: cpu * 1000 / float64(pods), peakMiB: peak}, nil
}
