package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
)

// kpNS is the namespace of the kube-proxy restart scenario.
const kpNS = "e2e-kube-proxy"

// TestKubeProxyRestart is the claim of kube-proxy as its own component:
// its pod on a node is deleted and the DaemonSet makes a new one, while
// the kubelet there keeps running (same process) and so do the pods; an
// existing ClusterIP Service answers throughout (the rules stay in the
// kernel), and a Service created while no kube-proxy runs there answers
// once the new pod is Ready.
func TestKubeProxyRestart(t *testing.T) {
	c := requireCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	s := &netScenario{scenario: &scenario{c: c, t: t, ctx: ctx}}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if _, err := c.Kubectl(ctx, "delete", "namespace", kpNS); err != nil {
			t.Logf("delete namespace %s: %v", kpNS, err)
		}
	})
	const node = "node-1"
	s.applyStdin(webManifest(kpNS, 2) + "---\n" + clientManifest(kpNS, node))
	s.kubectl("rollout", "status", "deployment/web", "-n", kpNS, "--timeout=180s")
	var client api.Pod
	s.within(2*time.Minute, "client pod Running on "+node, func(ctx context.Context) (bool, string, error) {
		if err := c.KubectlJSON(ctx, &client, "get", "pod", "client-"+node, "-n", kpNS); err != nil {
			return false, "", Retry(err)
		}
		return running(client), string(client.Status.Phase), nil
	})
	clusterIP := func(name string) string {
		var svc api.Service
		if err := c.KubectlJSON(ctx, &svc, "get", "service", name, "-n", kpNS); err != nil {
			t.Fatal(err)
		}
		return svc.Spec.ClusterIP
	}
	// get fetches url once from the client pod: the page's pod name, or
	// the failure (an exec that did not run is retryable).
	get := func(ctx context.Context, url string) (string, error) {
		out, err := c.Kubectl(ctx, "exec", "-n", kpNS, client.Name, "--", "sh", "-c", "timeout 3 wget -q -O - "+url+" 2>&1 || echo FAIL $?")
		if err != nil {
			return "", Retry(err)
		}
		if m := h1.FindStringSubmatch(out); m != nil {
			return m[1], nil
		}
		return "", fmt.Errorf("%s: %s", url, strings.TrimSpace(out))
	}
	webURL := "http://" + clusterIP("web") + "/"
	s.within(time.Minute, "Service web answering from "+node, func(ctx context.Context) (bool, string, error) {
		_, err := get(ctx, webURL)
		return err == nil, fmt.Sprint(err), nil
	})

	kubeletPID := func() string {
		out, err := c.Exec(ctx, node, "pidof", "kubelet")
		if err != nil {
			t.Fatalf("pidof kubelet on %s: %v", node, err)
		}
		return strings.TrimSpace(out)
	}
	proxyPod := func(ctx context.Context) (api.Pod, bool, error) {
		var l api.List[api.Pod]
		if err := c.KubectlJSON(ctx, &l, "get", "pods", "-n", "kube-system", "-l", "k8s-app=kube-proxy"); err != nil {
			return api.Pod{}, false, Retry(err)
		}
		for _, p := range l.Items {
			if p.Spec.NodeName == node && p.DeletionTimestamp == nil {
				return p, true, nil
			}
		}
		return api.Pod{}, false, nil
	}
	old, ok, err := proxyPod(ctx)
	if err != nil || !ok || !podReady(old) {
		t.Fatalf("no ready kube-proxy pod on %s (%v): %+v", node, err, old.Status)
	}
	pid := kubeletPID()

	s.kubectl("delete", "pod", old.Name, "-n", "kube-system", "--wait=false")
	t.Logf("deleted %s (uid %s)", old.Name, old.UID)
	// Meanwhile: a new Service on the same pods.
	s.applyStdin(`apiVersion: v1
kind: Service
metadata:
  name: web-new
  namespace: ` + kpNS + `
spec:
  selector:
    app: web
  ports:
    - port: 81
      targetPort: http
`)
	newURL := "http://" + clusterIP("web-new") + ":81/"
	// The existing Service answers while the pod is replaced: every
	// request until the new pod is Ready must succeed.
	var fresh api.Pod
	requests := 0
	s.within(2*time.Minute, "a new Ready kube-proxy pod on "+node+", web answering meanwhile", func(ctx context.Context) (bool, string, error) {
		if _, err := get(ctx, webURL); errors.Is(err, ErrRetry) {
			return false, "", err
		} else if err != nil {
			return false, "", fmt.Errorf("existing Service web stopped answering during the restart: %w", err)
		}
		requests++
		p, ok, err := proxyPod(ctx)
		if err != nil || !ok {
			return false, "no kube-proxy pod yet", err
		}
		fresh = p
		return p.UID != old.UID && podReady(p), fmt.Sprintf("%s ready=%v", p.Name, podReady(p)), nil
	})
	t.Logf("new kube-proxy pod %s (uid %s); %d requests to web succeeded during the restart", fresh.Name, fresh.UID, requests)
	s.within(30*time.Second, "Service web-new (created during the restart) answering from "+node, func(ctx context.Context) (bool, string, error) {
		_, err := get(ctx, newURL)
		return err == nil, fmt.Sprint(err), nil
	})
	if _, err := get(ctx, webURL); err != nil {
		t.Errorf("Service web after the restart: %v", err)
	}
	if now := kubeletPID(); now != pid {
		t.Errorf("the kubelet on %s was restarted: pid %s, was %s", node, now, pid)
	}
	var after api.Pod
	if err := c.KubectlJSON(ctx, &after, "get", "pod", client.Name, "-n", kpNS); err != nil {
		t.Fatal(err)
	}
	if after.UID != client.UID || len(after.Status.ContainerStatuses) == 0 || after.Status.ContainerStatuses[0].RestartCount != 0 {
		t.Errorf("client pod changed across the kube-proxy restart: %+v", after.Status.ContainerStatuses)
	}
}
