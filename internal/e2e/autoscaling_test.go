package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/oracle"
)

// xNS is the namespace of the resource-metrics and webhook scenario.
const xNS = "e2e-extend"

// TestMetricsAutoscalingAndWebhooks is issue 17's end-to-end proof, two
// parts run side by side, each driven with both kubectl-lite and the real
// kubectl:
//
//   - ResourceMetricsAndHPA: the metrics server add-on is deployed as its
//     documentation says (make metrics-server-addon); a CPU-burning
//     Deployment shows real figures in kubectl top pods and top nodes; an
//     autoscaling/v2 HorizontalPodAutoscaler on CPU utilization scales it
//     from 1 up while it burns and back to 1 once the load is switched off
//     (a 30 s scale-down stabilization window keeps the test short), with
//     its status, conditions and events checked and the times logged.
//   - AdmissionWebhooks: a webhook server of ours (internal/e2e/webhook)
//     runs as a Deployment behind a Service on the pod network, serving
//     HTTPS with a certificate the test makes (its CA in caBundle); a
//     MutatingWebhookConfiguration labels ConfigMaps and a
//     ValidatingWebhookConfiguration refuses those with an unwanted key;
//     a webhook that does not answer is given up after its timeoutSeconds;
//     once the server is scaled to 0, failurePolicy Fail refuses and Ignore
//     admits, each well within the timeout.
//
// The metrics server is removed at the end: it is an opt-in add-on, and an
// APIService that turns unavailable (its node stopped by a later scenario)
// holds namespace deletion up, as in Kubernetes.
func TestMetricsAutoscalingAndWebhooks(t *testing.T) {
	c := requireCluster(t)
	start := time.Now()
	x := &extend{workloads: &workloads{c: c, kubectl: oracle.Path(t, "kubectl")}}
	ctx, cancel := context.WithTimeout(context.Background(), 7*time.Minute)
	defer cancel()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		for _, args := range [][]string{
			{"delete", "mutatingwebhookconfiguration,validatingwebhookconfiguration", "-l", "e2e.minik8s.io/scenario=" + xNS, "--ignore-not-found"},
			{"delete", "-f", filepath.Join(c.Root, "deploy", "metrics-server"), "--ignore-not-found"},
			{"delete", "namespace", xNS, "--ignore-not-found"},
		} {
			if _, err := c.Kubectl(ctx, args...); err != nil {
				t.Errorf("kubectl-lite %s: %v", strings.Join(args, " "), err)
			}
		}
		err := Poll(ctx, time.Second, "namespace "+xNS+" gone", func(ctx context.Context) (bool, string, error) {
			out, err := c.Kubectl(ctx, "get", "namespace", xNS, "--ignore-not-found")
			if err != nil {
				return false, "", Retry(err)
			}
			return strings.TrimSpace(out) == "", out, nil
		})
		if err != nil {
			t.Error(err)
		}
		t.Logf("metrics, autoscaling and webhooks scenario: %.1fs wall time, cleanup included", time.Since(start).Seconds())
	})
	x.apply(t, ctx, x.kubectl, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "+xNS+"\n  labels:\n    e2e.minik8s.io/webhooks: enabled\n")

	runParts(t, ctx, x.diagnose,
		part{"ResourceMetricsAndHPA", x.metricsAndHPA},
		part{"AdmissionWebhooks", x.webhooks},
	)
}

// extend is the scenario's state: the workloads scenario's helpers.
type extend struct {
	*workloads
}

// get decodes kubectl-lite get ... -n xNS -o json into v.
func (x *extend) get(ctx context.Context, v any, args ...string) error {
	if err := x.c.KubectlJSON(ctx, v, append(args, "-n", xNS)...); err != nil {
		return Retry(err)
	}
	return nil
}

func (x *extend) diagnose(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, args := range [][]string{
		{"get", "nodes", "-o", "wide"},
		{"get", "pods,deployments,hpa,endpointslices", "-n", xNS, "-o", "wide"},
		{"get", "pods", "-n", "kube-system", "-o", "wide"},
		{"get", "apiservices"},
		{"get", "events", "-n", xNS},
		{"describe", "hpa", "-n", xNS},
		{"logs", "-n", "kube-system", "-l", "k8s-app=metrics-server", "--tail=30"},
		{"logs", "-n", xNS, "-l", "app=webhook", "--tail=30"},
	} {
		out, err := x.c.Kubectl(ctx, args...)
		if err != nil {
			out += err.Error()
		}
		t.Logf("kubectl-lite %s:\n%s", strings.Join(args, " "), out)
	}
	for _, svc := range []string{"apiserver", "controller-manager"} {
		t.Logf("last log lines of %s:\n%s", svc, x.c.Logs(ctx, svc, 40))
	}
}

// --- resource metrics and the HorizontalPodAutoscaler ---------------------

// burnerManifest is a Deployment whose container burns CPU until its
// environment says LOAD=off (kubectl set env switches the load off with a
// rollout, as a release that fixes a hot loop would). The limit keeps each
// replica to a tenth of a core on a shared machine, twice its request.
const burnerManifest = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: burner
  namespace: ` + xNS + `
spec:
  replicas: 1
  selector:
    matchLabels:
      app: burner
  template:
    metadata:
      labels:
        app: burner
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: burn
        image: minik8s/busybox:latest
        imagePullPolicy: IfNotPresent
        command: ["sh", "-c", "while [ \"$LOAD\" != off ]; do :; done; exec sleep 3600"]
        env:
        - name: LOAD
          value: "on"
        resources:
          requests:
            cpu: 50m
            memory: 16Mi
          limits:
            cpu: 100m
            memory: 32Mi
`

// hpaManifest scales burner between 1 and 3 replicas on an average CPU
// utilization of 50% of the request, with the documented behavior fields:
// no scale-up window, a 30 s scale-down window (default 300 s).
const hpaManifest = `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: burner
  namespace: ` + xNS + `
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: burner
  minReplicas: 1
  maxReplicas: 3
  metrics:
  - type: Resource
    resource:
      name: cpu
      target:
        type: Utilization
        averageUtilization: 50
  behavior:
    scaleUp:
      stabilizationWindowSeconds: 0
      policies:
      - type: Pods
        value: 4
        periodSeconds: 15
    scaleDown:
      stabilizationWindowSeconds: 30
      policies:
      - type: Percent
        value: 100
        periodSeconds: 15
`

func (x *extend) metricsAndHPA(t *testing.T, ctx context.Context) {
	// The add-on, as its documentation deploys it.
	start := time.Now()
	if _, err := x.c.Run(ctx, "make", "metrics-server-addon"); err != nil {
		t.Fatal(err)
	}
	t.Logf("make metrics-server-addon: %.1fs", time.Since(start).Seconds())
	within(t, ctx, 90*time.Second, "APIService v1beta1.metrics.k8s.io Available", func(ctx context.Context) (bool, string, error) {
		var s api.APIService
		if err := x.c.KubectlJSON(ctx, &s, "get", "apiservice", "v1beta1.metrics.k8s.io"); err != nil {
			return false, "", Retry(err)
		}
		for _, cond := range s.Status.Conditions {
			if cond.Type == "Available" {
				return cond.Status == api.ConditionTrue, cond.Reason + ": " + cond.Message, nil
			}
		}
		return false, "no Available condition", nil
	})

	out := x.apply(t, ctx, x.lite(), burnerManifest)
	if !strings.Contains(out, "deployment.apps/burner created") {
		t.Fatalf("kubectl-lite apply printed %q", out)
	}
	x.must(t, ctx, x.lite(), "rollout", "status", "deployment/burner", "-n", xNS, "--timeout=90s")

	// kubectl top: the burner's CPU near its limit, the nodes' usage.
	for _, bin := range []string{x.lite(), x.kubectl} {
		name := filepath.Base(bin)
		var cpu int64
		within(t, ctx, 90*time.Second, name+" top pods shows the burner's CPU", func(ctx context.Context) (bool, string, error) {
			out, err := x.run(ctx, bin, "top", "pods", "-n", xNS, "-l", "app=burner")
			if err != nil {
				return false, "", Retry(err)
			}
			rows := topRows(out)
			if len(rows) != 1 || len(rows[0]) != 3 {
				return false, out, nil
			}
			cpu = millicores(rows[0][1])
			return cpu >= 30, out, nil
		})
		t.Logf("%s top pods: burner at %dm of CPU (request 50m, limit 100m)", name, cpu)
		if cpu > 150 {
			t.Errorf("%s top pods: the burner uses %dm of CPU, more than its 100m limit allows", name, cpu)
		}
		out := x.must(t, ctx, bin, "top", "nodes")
		rows := topRows(out)
		if len(rows) < workers {
			t.Fatalf("%s top nodes:\n%s\nwant a row per node", name, out)
		}
		for _, r := range rows {
			if len(r) != 5 || millicores(r[1]) <= 0 || !strings.HasSuffix(r[2], "%") || !strings.HasSuffix(r[3], "Mi") || r[3] == "0Mi" {
				t.Errorf("%s top nodes: row %q, want nonzero CPU and memory", name, r)
			}
		}
		t.Logf("%s top nodes:\n%s", name, out)
	}
	// The pod's memory, below top's 1 Mi resolution, from the API itself.
	var pm struct {
		Items []struct {
			Metadata   api.ObjectMeta `json:"metadata"`
			Window     string         `json:"window"`
			Containers []struct {
				Name  string            `json:"name"`
				Usage map[string]string `json:"usage"`
			} `json:"containers"`
		} `json:"items"`
	}
	raw := x.must(t, ctx, x.kubectl, "get", "--raw", "/apis/metrics.k8s.io/v1beta1/namespaces/"+xNS+"/pods?labelSelector=app%3Dburner")
	if err := json.Unmarshal([]byte(raw), &pm); err != nil {
		t.Fatalf("PodMetrics: %v: %s", err, raw)
	}
	if len(pm.Items) != 1 || len(pm.Items[0].Containers) != 1 || pm.Items[0].Containers[0].Usage["memory"] == "" || pm.Items[0].Containers[0].Usage["memory"] == "0" {
		t.Errorf("PodMetrics of the burner: %s; want one container with nonzero memory", raw)
	} else {
		t.Logf("PodMetrics of the burner: window %s, usage %v", pm.Items[0].Window, pm.Items[0].Containers[0].Usage)
	}

	// The autoscaler, applied with the real kubectl.
	out = x.apply(t, ctx, x.kubectl, hpaManifest)
	if !strings.Contains(out, "horizontalpodautoscaler.autoscaling/burner created") {
		t.Fatalf("kubectl apply printed %q", out)
	}
	hpaStart := time.Now()
	var hpa autoscalingv2.HorizontalPodAutoscaler
	within(t, ctx, 2*time.Minute, "the HPA scales burner up from 1", func(ctx context.Context) (bool, string, error) {
		if err := x.get(ctx, &hpa, "get", "hpa", "burner"); err != nil {
			return false, "", err
		}
		return hpa.Status.DesiredReplicas >= 2, hpaSummary(&hpa), nil
	})
	up := time.Since(hpaStart)
	t.Logf("HPA: first scale-up, 1 -> %d after %.1fs: %s", hpa.Status.DesiredReplicas, up.Seconds(), hpaSummary(&hpa))
	hpa = x.waitHPAPeak(t, ctx, hpa)
	peak := hpa.Status.DesiredReplicas
	if hpa.Status.LastScaleTime == nil {
		t.Fatalf("HPA scaled without status.lastScaleTime: %s", hpaSummary(&hpa))
	}
	upAt := hpa.Status.LastScaleTime.Time
	t.Logf("HPA: peak of %d replicas %.1fs after it was created: %s", peak, time.Since(hpaStart).Seconds(), hpaSummary(&hpa))
	checkCondition(t, &hpa, "AbleToScale", "True", "SucceededRescale")
	checkCondition(t, &hpa, "ScalingActive", "True", "ValidMetricFound")
	if u := utilization(&hpa); u == nil || *u <= 50 {
		t.Errorf("HPA status: current CPU utilization %v, want above the 50%% target", u)
	}
	within(t, ctx, time.Minute, fmt.Sprintf("burner runs %d ready replicas", peak), func(ctx context.Context) (bool, string, error) {
		var d api.Deployment
		if err := x.get(ctx, &d, "get", "deployment", "burner"); err != nil {
			return false, "", err
		}
		return d.Spec.Replicas != nil && *d.Spec.Replicas == peak && d.Status.ReadyReplicas == peak,
			fmt.Sprintf("spec %v, ready %d", d.Spec.Replicas, d.Status.ReadyReplicas), nil
	})
	x.waitRescaleEvent(t, ctx, fmt.Sprintf("New size: %d; reason: cpu resource utilization (percentage of request) above target", peak))
	for _, bin := range []string{x.lite(), x.kubectl} {
		out := x.must(t, ctx, bin, "get", "hpa", "burner", "-n", xNS)
		if !regexp.MustCompile(`burner\s+Deployment/burner\s+cpu: \d+%/50%\s+1\s+3\s+[123]\s`).MatchString(out) {
			t.Errorf("%s get hpa burner:\n%s\nwant REFERENCE Deployment/burner, TARGETS cpu: N%%/50%%, MINPODS 1, MAXPODS 3", filepath.Base(bin), out)
		}
	}

	// The load stops: a rollout to LOAD=off, then the 30 s window.
	x.must(t, ctx, x.kubectl, "set", "env", "deployment/burner", "-n", xNS, "LOAD=off")
	offAt := time.Now()
	within(t, ctx, 3*time.Minute, "the HPA scales burner back to 1", func(ctx context.Context) (bool, string, error) {
		if err := x.get(ctx, &hpa, "get", "hpa", "burner"); err != nil {
			return false, "", err
		}
		return hpa.Status.DesiredReplicas == 1, hpaSummary(&hpa), nil
	})
	down := time.Since(offAt)
	// The recommendation of the scale-up stays in the 30 s window: the
	// scale-down comes no sooner after it (kube's lastScaleTime has a
	// resolution of a second).
	var sinceUp time.Duration
	if hpa.Status.LastScaleTime != nil {
		sinceUp = hpa.Status.LastScaleTime.Sub(upAt)
	}
	t.Logf("HPA: %d -> 1 %.1fs after the load's end, %.0fs after the scale-up (scale-down window 30 s): %s", peak, down.Seconds(), sinceUp.Seconds(), hpaSummary(&hpa))
	if sinceUp < 29*time.Second {
		t.Errorf("the HPA scaled down %.0fs after scaling up, within its 30 s scale-down stabilization window", sinceUp.Seconds())
	}
	x.waitRescaleEvent(t, ctx, "New size: 1; reason: All metrics below target")
	checkCondition(t, &hpa, "AbleToScale", "True", "")
	checkCondition(t, &hpa, "ScalingActive", "True", "ValidMetricFound")
	if u := utilization(&hpa); u == nil || *u >= 50 {
		t.Errorf("HPA status after the load: current CPU utilization %v, want below the 50%% target", u)
	}
	within(t, ctx, time.Minute, "burner runs 1 replica", func(ctx context.Context) (bool, string, error) {
		var d api.Deployment
		if err := x.get(ctx, &d, "get", "deployment", "burner"); err != nil {
			return false, "", err
		}
		return d.Spec.Replicas != nil && *d.Spec.Replicas == 1 && d.Status.Replicas == 1,
			fmt.Sprintf("spec %v, replicas %d", d.Spec.Replicas, d.Status.Replicas), nil
	})
	out = x.must(t, ctx, x.kubectl, "describe", "hpa", "burner", "-n", xNS)
	t.Logf("kubectl describe hpa burner:\n%s", out)
	for _, want := range []string{"SuccessfulRescale", fmt.Sprintf("New size: %d", peak), "New size: 1", "ScalingActive", "Behavior:"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl describe hpa burner does not show %q", want)
		}
	}
}

// hpaPeakSettle is how long the burner's HPA must hold a replica count
// below maxReplicas, while the load is on, for the count to be its peak:
// three of the controller's 15 s syncs.
const hpaPeakSettle = 45 * time.Second

// waitHPAPeak follows the burner's HPA from its first scale-up (first) to
// its peak while the load is on. A CPU-starved first measurement may scale
// 1 -> 2 and a later sync 2 -> 3: the peak is maxReplicas, or a count the
// HPA has held for hpaPeakSettle, within two minutes. It returns the HPA as
// it stood right after the scale-up that reached the peak (its conditions
// and metrics those of that rescale); a scale-down while the load is on is
// an error.
func (x *extend) waitHPAPeak(t *testing.T, ctx context.Context, first autoscalingv2.HorizontalPodAutoscaler) autoscalingv2.HorizontalPodAutoscaler {
	t.Helper()
	at := first
	since := time.Now()
	var hpa autoscalingv2.HorizontalPodAutoscaler
	within(t, ctx, 2*time.Minute, "the HPA reaches its peak while the load is on", func(ctx context.Context) (bool, string, error) {
		if err := x.get(ctx, &hpa, "get", "hpa", "burner"); err != nil {
			return false, "", err
		}
		switch d := hpa.Status.DesiredReplicas; {
		case d < at.Status.DesiredReplicas:
			return false, "", fmt.Errorf("the HPA scaled down from %d while the load is on: %s", at.Status.DesiredReplicas, hpaSummary(&hpa))
		case d > at.Status.DesiredReplicas:
			t.Logf("HPA: scaled up again, %d -> %d: %s", at.Status.DesiredReplicas, d, hpaSummary(&hpa))
			at, since = hpa, time.Now()
		}
		if at.Status.DesiredReplicas >= at.Spec.MaxReplicas {
			return true, "", nil
		}
		held := time.Since(since)
		return held >= hpaPeakSettle, fmt.Sprintf("%d replicas for %.0fs, max %d: %s", at.Status.DesiredReplicas, held.Seconds(), at.Spec.MaxReplicas, hpaSummary(&hpa)), nil
	})
	return at
}

// topRows splits kubectl top's table into rows of fields, header left out.
func topRows(out string) [][]string {
	var rows [][]string
	for i, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if i == 0 || strings.TrimSpace(line) == "" {
			continue
		}
		rows = append(rows, strings.Fields(line))
	}
	return rows
}

// millicores reads top's CPU column ("97m", "1"), -1 when it is not one.
func millicores(s string) int64 {
	if v, ok := strings.CutSuffix(s, "m"); ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return -1
		}
		return n
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return -1
	}
	return n * 1000
}

// utilization is the HPA's current average CPU utilization, if reported.
func utilization(h *autoscalingv2.HorizontalPodAutoscaler) *int32 {
	for _, m := range h.Status.CurrentMetrics {
		if m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == corev1.ResourceCPU {
			return m.Resource.Current.AverageUtilization
		}
	}
	return nil
}

func hpaSummary(h *autoscalingv2.HorizontalPodAutoscaler) string {
	u := "unknown"
	if p := utilization(h); p != nil {
		u = fmt.Sprintf("%d%%", *p)
	}
	var conds []string
	for _, c := range h.Status.Conditions {
		conds = append(conds, fmt.Sprintf("%s=%s(%s)", c.Type, c.Status, c.Reason))
	}
	return fmt.Sprintf("current %d desired %d, cpu %s, %s", h.Status.CurrentReplicas, h.Status.DesiredReplicas, u, strings.Join(conds, " "))
}

// checkCondition checks an HPA condition's status and (if given) reason.
func checkCondition(t *testing.T, h *autoscalingv2.HorizontalPodAutoscaler, typ, status, reason string) {
	t.Helper()
	for _, c := range h.Status.Conditions {
		if string(c.Type) == typ {
			if string(c.Status) != status || (reason != "" && c.Reason != reason) {
				t.Errorf("HPA condition %s: %s %s (%s), want %s %s", typ, c.Status, c.Reason, c.Message, status, reason)
			}
			return
		}
	}
	t.Errorf("HPA has no condition %s: %s", typ, hpaSummary(h))
}

// waitRescaleEvent waits for the HPA's SuccessfulRescale event with message.
func (x *extend) waitRescaleEvent(t *testing.T, ctx context.Context, message string) {
	t.Helper()
	within(t, ctx, 30*time.Second, "event "+message, func(ctx context.Context) (bool, string, error) {
		var l corev1.EventList
		if err := x.get(ctx, &l, "get", "events", "--field-selector", "involvedObject.kind=HorizontalPodAutoscaler,involvedObject.name=burner"); err != nil {
			return false, "", err
		}
		var seen []string
		for _, e := range l.Items {
			if e.Reason == "SuccessfulRescale" && e.Type == corev1.EventTypeNormal && e.Message == message && e.Source.Component == "horizontal-pod-autoscaler" {
				return true, "", nil
			}
			seen = append(seen, e.Reason+": "+e.Message)
		}
		return false, strings.Join(seen, "; "), nil
	})
}
