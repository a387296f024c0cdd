package podautoscaler_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
	"github.com/minik8s/minik8s/apiserver/aggregator/aggregatortest"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/controller-manager/podautoscaler"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/internal/informer"
	"github.com/minik8s/minik8s/internal/oracle"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/root"
)

// TestAutoscaling runs the controller against a real apiserver whose
// metrics.k8s.io is a fake backend behind the aggregator: an HPA made by
// the real kubectl autoscale scales a Deployment up within its behavior's
// rate, records the conditions, metrics and events kube does, and scales
// it down when usage drops.
func TestAutoscaling(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	s := apiservertest.Start(t, apiservertest.WithTLS)
	c := s.AdminClient(t)

	// Per-pod CPU usage the metrics API reports, in millicores.
	var usage atomic.Int64
	usage.Store(200)
	backend := aggregatortest.Start(t, ctx, c, aggregatortest.Options{Group: "metrics.k8s.io", Version: "v1beta1", Service: "metrics-server",
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			switch r.URL.Path {
			case "/apis/metrics.k8s.io/v1beta1":
				fmt.Fprint(w, `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"metrics.k8s.io/v1beta1","resources":[{"name":"pods","singularName":"","namespaced":true,"kind":"PodMetrics","verbs":["get","list"]}]}`)
			case "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods":
				if r.URL.Query().Get("labelSelector") != "app=web" {
					http.Error(w, "unexpected selector "+r.URL.RawQuery, http.StatusBadRequest)
					return
				}
				ts := time.Now().Add(-5 * time.Second).UTC().Format(time.RFC3339)
				var items []string
				for _, p := range []string{"web-1", "web-2"} {
					items = append(items, fmt.Sprintf(`{"metadata":{"name":%q,"namespace":"default"},"timestamp":%q,"window":"15s","containers":[{"name":"app","usage":{"cpu":"%dm","memory":"10Mi"}}]}`, p, ts, usage.Load()))
				}
				fmt.Fprintf(w, `{"kind":"PodMetricsList","apiVersion":"metrics.k8s.io/v1beta1","metadata":{},"items":[%s]}`, strings.Join(items, ","))
			default:
				http.NotFound(w, r)
			}
		})})
	aggregatortest.WaitCondition(t, ctx, c, backend.Name, api.ConditionTrue, "Passed")

	two := int32(2)
	labels := map[string]string{"app": "web"}
	container := api.Container{Name: "app", Image: "busybox", Resources: api.ResourceRequirements{
		Requests: api.ResourceList{api.ResourceCPU: resource.MustParse("100m")}}}
	if _, err := client.Resource[api.Deployment](c).Namespace("default").Create(ctx, &api.Deployment{ObjectMeta: api.ObjectMeta{Name: "web"},
		Spec: api.DeploymentSpec{Replicas: &two, Selector: &api.LabelSelector{MatchLabels: labels},
			Template: api.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: labels}, Spec: api.PodSpec{Containers: []api.Container{container}}}}}); err != nil {
		t.Fatal(err)
	}
	// The pods as a deployment controller and kubelet would leave them:
	// running and ready for an hour.
	pc := client.Resource[api.Pod](c).Namespace("default")
	started := api.Time{Time: time.Now().Add(-time.Hour).Truncate(time.Second)}
	for _, name := range []string{"web-1", "web-2"} {
		p, err := pc.Create(ctx, &api.Pod{ObjectMeta: api.ObjectMeta{Name: name, Labels: labels}, Spec: api.PodSpec{NodeName: "n1", Containers: []api.Container{container}}})
		if err != nil {
			t.Fatal(err)
		}
		p.Status = api.PodStatus{Phase: api.PodRunning, StartTime: &started,
			Conditions: []api.PodCondition{{Type: api.PodReady, Status: api.ConditionTrue, LastTransitionTime: started}}}
		if _, err := pc.UpdateStatus(ctx, p); err != nil {
			t.Fatal(err)
		}
	}

	// The real kubectl makes the HPA.
	kubectl := oracle.Path(t, "kubectl")
	out, err := exec.CommandContext(ctx, kubectl, "--kubeconfig", s.Options.WriteKubeconfig, "autoscale", "deployment", "web", "--min=1", "--max=10", "--cpu=50%").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "horizontalpodautoscaler.autoscaling/web autoscaled" {
		t.Fatalf("kubectl autoscale: %v %s", err, out)
	}
	hc := client.Resource[api.HorizontalPodAutoscaler](c).Namespace("default")
	// kubectl-lite autoscale makes the same objects, and fails the same way.
	lite := func(args ...string) (string, string, int) {
		var out, errOut strings.Builder
		code := root.Run(ctx, cli.Streams{Out: &out, ErrOut: &errOut}, append([]string{"--kubeconfig", s.Options.WriteKubeconfig, "autoscale"}, args...))
		return out.String(), errOut.String(), code
	}
	for i, args := range [][]string{{"deployment", "web", "--min=1", "--max=10", "--cpu=50%"}, {"deploy/web", "--max=4", "--cpu=500", "--memory=200"},
		{"deployment", "web", "--max=3", "--cpu=250m", "--memory=80%", "--min=2"}} {
		kname, lname := fmt.Sprintf("k%d", i), fmt.Sprintf("l%d", i)
		if out, err := exec.CommandContext(ctx, kubectl, append([]string{"--kubeconfig", s.Options.WriteKubeconfig, "autoscale", "--name=" + kname}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("kubectl autoscale %v: %v %s", args, err, out)
		}
		if out, errOut, code := lite(append([]string{"--name=" + lname}, args...)...); code != 0 || out != "horizontalpodautoscaler.autoscaling/"+lname+" autoscaled\n" {
			t.Errorf("kubectl-lite autoscale %v: %d %q %q", args, code, out, errOut)
			continue
		}
		kh, err1 := hc.Get(ctx, kname)
		lh, err2 := hc.Get(ctx, lname)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		kb, _ := json.Marshal(kh.Spec)
		lb, _ := json.Marshal(lh.Spec)
		if string(kb) != string(lb) {
			t.Errorf("autoscale %v: kubectl-lite made\n%s\nkubectl made\n%s", args, lb, kb)
		}
		for _, n := range []string{kname, lname} {
			if err := hc.Delete(ctx, n, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, args := range [][]string{{"deployment", "web"}, {"deployment", "web", "--max=2", "--min=3"}, {"pod", "web-1", "--max=2"}} {
		kout, _ := exec.CommandContext(ctx, kubectl, append([]string{"--kubeconfig", s.Options.WriteKubeconfig, "autoscale"}, args...)...).CombinedOutput()
		_, errOut, code := lite(args...)
		if code != 1 || errOut != string(kout) {
			t.Errorf("autoscale %v: kubectl-lite %d %q, kubectl %q", args, code, errOut, kout)
		}
	}
	hpa, err := hc.Get(ctx, "web")
	if err != nil {
		t.Fatal(err)
	}
	// At most two pods a minute up; down at once.
	if err := json.Unmarshal([]byte(`{"scaleUp":{"policies":[{"type":"Pods","value":2,"periodSeconds":60}]},"scaleDown":{"stabilizationWindowSeconds":0}}`), &hpa.Spec.Behavior); err != nil {
		t.Fatal(err)
	}
	if hpa, err = hc.Update(ctx, hpa); err != nil {
		t.Fatal(err)
	}
	// The apiserver defaults what the behavior leaves out, as kube's.
	behavior, err := json.Marshal(hpa.Spec.Behavior)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(behavior); got != `{"scaleUp":{"stabilizationWindowSeconds":0,"selectPolicy":"Max","policies":[{"type":"Pods","value":2,"periodSeconds":60}]},"scaleDown":{"stabilizationWindowSeconds":0,"selectPolicy":"Max","policies":[{"type":"Percent","value":100,"periodSeconds":15}]}}` {
		t.Errorf("defaulted behavior %s", got)
	}

	f := informer.NewFactory(c, informer.FactoryOptions{})
	bc := events.NewBroadcaster(c, events.Options{Component: "horizontal-pod-autoscaler"})
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	go bc.Run(runCtx)
	ctl := podautoscaler.NewController(c, informer.Shared[api.HorizontalPodAutoscaler](f, "", client.ListOptions{}),
		informer.Shared[api.Pod](f, "", client.ListOptions{}), podautoscaler.APIMetrics{Client: c}, bc.Recorder(), apiservertest.Logger(),
		podautoscaler.Config{SyncPeriod: 300 * time.Millisecond, DownscaleStabilization: 5 * time.Minute})
	f.Start(runCtx)
	go func() { _ = ctl.Run(runCtx, 2) }()

	dc := client.Resource[api.Deployment](c).Namespace("default")
	waitReplicas := func(want int32) {
		t.Helper()
		for {
			d, err := dc.Get(ctx, "web")
			if err == nil && *d.Spec.Replicas == want {
				return
			}
			if ctx.Err() != nil {
				h, _ := hc.Get(ctx, "web")
				b, _ := json.Marshal(h.Status)
				t.Fatalf("deployment never scaled to %d: %v; HPA status %s", want, err, b)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// 200m of 100m requested is 200% against 50%: 8 wanted, 2 more a minute.
	waitReplicas(4)
	time.Sleep(time.Second) // several syncs: still limited
	if d, _ := dc.Get(ctx, "web"); *d.Spec.Replicas != 4 {
		t.Errorf("scaled past the policy's rate: %d", *d.Spec.Replicas)
	}
	var status struct {
		CurrentReplicas int32 `json:"currentReplicas"`
		DesiredReplicas int32 `json:"desiredReplicas"`
		CurrentMetrics  []struct {
			Resource struct {
				Name    string `json:"name"`
				Current struct {
					AverageUtilization int32  `json:"averageUtilization"`
					AverageValue       string `json:"averageValue"`
				} `json:"current"`
			} `json:"resource"`
		} `json:"currentMetrics"`
		Conditions    []api.HorizontalPodAutoscalerCondition `json:"conditions"`
		LastScaleTime *api.Time                              `json:"lastScaleTime"`
	}
	conds := map[string]api.HorizontalPodAutoscalerCondition{}
	for {
		h, err := hc.Get(ctx, "web")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(h.Status)
		_ = json.Unmarshal(b, &status)
		for _, c := range status.Conditions {
			conds[c.Type] = c
		}
		if status.CurrentReplicas == 4 && conds["ScalingLimited"].Reason == "ScaleUpLimit" || ctx.Err() != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if status.DesiredReplicas != 4 || len(status.CurrentMetrics) != 1 || status.CurrentMetrics[0].Resource.Name != "cpu" ||
		status.CurrentMetrics[0].Resource.Current.AverageUtilization != 200 || status.CurrentMetrics[0].Resource.Current.AverageValue != "200m" ||
		status.LastScaleTime == nil {
		t.Errorf("status %+v", status)
	}
	for typ, want := range map[string][3]string{
		"AbleToScale":    {"True", "ReadyForNewScale", "recommended size matches current size"},
		"ScalingActive":  {"True", "ValidMetricFound", "the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)"},
		"ScalingLimited": {"True", "ScaleUpLimit", "the desired replica count is increasing faster than the maximum scale rate"},
	} {
		if c := conds[typ]; string(c.Status) != want[0] || c.Reason != want[1] || c.Message != want[2] {
			t.Errorf("condition %s = %+v, want %v", typ, c, want)
		}
	}

	// Usage drops to 10%: down to the minimum at once.
	usage.Store(10)
	waitReplicas(1)

	// The events kube records.
	deadline := time.Now().Add(10 * time.Second)
	for {
		evs, err := client.Resource[api.Event](c).Namespace("default").List(ctx, client.ListOptions{})
		var msgs []string
		if err == nil {
			for _, e := range evs.Items {
				if e.InvolvedObject.Kind == "HorizontalPodAutoscaler" && e.Reason == "SuccessfulRescale" {
					msgs = append(msgs, e.Message)
				}
			}
		}
		joined := strings.Join(msgs, "|")
		if strings.Contains(joined, "New size: 4; reason: cpu resource utilization (percentage of request) above target") &&
			strings.Contains(joined, "New size: 1; reason: All metrics below target") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("SuccessfulRescale events: %q", msgs)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// The real kubectl describes it from the status the controller wrote.
	out, err = exec.CommandContext(ctx, kubectl, "--kubeconfig", s.Options.WriteKubeconfig, "describe", "hpa", "web").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "resource cpu on pods  (as a percentage of request):  10% (10m) / 50%") ||
		!strings.Contains(string(out), "ScalingActive   True    ValidMetricFound") ||
		!strings.Contains(string(out), "SuccessfulRescale") {
		t.Errorf("kubectl describe hpa: %v\n%s", err, out)
	}

	// kubectl-lite describes it as the real kubectl does (event ages aside).
	liteOut, liteErr, code := lite2(ctx, s.Options.WriteKubeconfig, "describe", "hpa", "web")
	eventAge := regexp.MustCompile(`(?m)^(  Normal +SuccessfulRescale +)\S+`)
	if code != 0 || eventAge.ReplaceAllString(liteOut, "${1}AGE") != eventAge.ReplaceAllString(string(out), "${1}AGE") {
		t.Errorf("kubectl-lite describe hpa: exit %d %s\n%s\nkubectl:\n%s", code, liteErr, liteOut, out)
	}

	// The real kubectl's table of it, and kubectl-lite's. The controller
	// may still be scaling between the two reads (REPLICAS 4, then 1, seen
	// in CI), so a difference counts only if it is there three times.
	age := regexp.MustCompile(`(?m)\d+s$`) // the AGE column, which may tick between the two
	for attempt := 1; ; attempt++ {
		out, err = exec.CommandContext(ctx, kubectl, "--kubeconfig", s.Options.WriteKubeconfig, "get", "hpa", "web").CombinedOutput()
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if err != nil || len(lines) != 2 || !strings.HasPrefix(strings.Join(strings.Fields(lines[1]), " "), "web Deployment/web cpu: 10%/50% 1 10 ") {
			t.Fatalf("kubectl get hpa: %v\n%s", err, out)
		}
		liteOut, _, code := lite2(ctx, s.Options.WriteKubeconfig, "get", "hpa", "web")
		if code == 0 && age.ReplaceAllString(liteOut, "AGE") == age.ReplaceAllString(string(out), "AGE") {
			break
		}
		if attempt == 3 {
			t.Fatalf("kubectl-lite get hpa:\n%s\nkubectl:\n%s", liteOut, out)
		}
		time.Sleep(time.Second)
	}
}

// lite2 runs kubectl-lite against kubeconfig.
func lite2(ctx context.Context, kubeconfig string, args ...string) (string, string, int) {
	var out, errOut strings.Builder
	code := root.Run(ctx, cli.Streams{Out: &out, ErrOut: &errOut}, append([]string{"--kubeconfig", kubeconfig}, args...))
	return out.String(), errOut.String(), code
}
