package app_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/controller-manager/app"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/daemon"
)

func logger() *slog.Logger {
	if os.Getenv("MINIK8S_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

func TestDefaultsAndFlags(t *testing.T) {
	o := app.DefaultOptions()
	le := o.LeaderElection
	if o.Port != 10257 || !le.LeaderElect || le.ResourceNamespace != "kube-system" || le.ResourceName != "kube-controller-manager" ||
		le.LeaseDuration != 15*time.Second || le.RenewDeadline != 10*time.Second || le.RetryPeriod != 2*time.Second ||
		o.Controller.NodeMonitorGracePeriod != 50*time.Second || o.Controller.ClusterCIDR != "10.244.0.0/16" || o.Controller.NodeCIDRMaskSize != 24 {
		t.Errorf("defaults differ from kube-controller-manager's: %+v", o)
	}
	var fss daemon.FlagSets
	o.AddFlags(&fss)
	err := fss.Parse([]string{"--controllers=*,-job", "--concurrent-replicaset-syncs=3", "--node-monitor-grace-period=4s",
		"--cluster-cidr=10.50.0.0/16", "--kubeconfig=/tmp/kc", "--kube-api-qps=7", "--leader-elect=false"})
	if err != nil {
		t.Fatal(err)
	}
	if o.Controller.Workers("replicaset") != 3 || o.Controller.Workers("deployment") != 5 ||
		o.Controller.NodeMonitorGracePeriod != 4*time.Second || o.Controller.ClusterCIDR != "10.50.0.0/16" ||
		o.Client.Kubeconfig != "/tmp/kc" || o.Client.QPS != 7 || o.LeaderElection.LeaderElect {
		t.Errorf("flags not applied: %+v", o)
	}
	for _, bad := range []string{"--concurrent-deployment-syncs=0", "--concurrent-gc-syncs=many"} {
		if err := fss.Parse([]string{bad}); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

func TestEnabled(t *testing.T) {
	all := app.Names()
	without := func(names ...string) []string {
		return slices.DeleteFunc(slices.Clone(all), func(n string) bool { return slices.Contains(names, n) })
	}
	for _, tc := range []struct {
		flag    string
		want    []string
		wantErr string
	}{
		{"*", all, ""},
		{"*,-job,-nodeipam", without("job", "nodeipam"), ""},
		{"replicaset,deployment", []string{"deployment", "replicaset"}, ""},
		{"-job", nil, ""},
		{"*,bogus", nil, `unknown controller "bogus"`},
		{"-bogus", nil, `unknown controller "bogus"`},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			o := app.DefaultOptions()
			o.Controllers = strings.Split(tc.flag, ",")
			got, err := o.Enabled()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Enabled() error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("Enabled() = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
	for _, n := range []string{"replicaset", "deployment", "nodelifecycle", "garbagecollector", "namespace", "endpoints", "endpointslice", "job", "nodeipam", "statefulset", "daemonset", "podgc"} {
		if !slices.Contains(all, n) {
			t.Errorf("controller %s is not known", n)
		}
	}
}

// The process serves /healthz and /metrics (work queue depth, sync
// duration and errors per controller), runs only the controllers asked
// for, holds the kube-controller-manager Lease, and records Events under
// the controller's name.
func TestRunServesHealthMetricsAndEvents(t *testing.T) {
	srv := apiservertest.Start(t)
	c, err := client.New(&client.Config{Host: srv.URL(), QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port

	t.Setenv("KUBECONFIG", "")
	o := app.DefaultOptions()
	o.Client.Master = srv.URL()
	o.Client.QPS, o.Client.Burst = 1000, 2000
	o.Controllers = []string{"replicaset"}
	o.BindAddress, o.Port, o.Listener = "127.0.0.1", port, l
	o.LeaderElection.LeaseDuration, o.LeaderElection.RenewDeadline, o.LeaderElection.RetryPeriod = 5*time.Second, 4*time.Second, 500*time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx, o, logger()) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run returned %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("controller-manager did not stop")
		}
	})

	lbl := map[string]string{"app": "web"}
	template := api.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: lbl}, Spec: api.PodSpec{Containers: []api.Container{{Name: "app", Image: "img"}}}}
	two := int32(2)
	if _, err := client.Resource[api.ReplicaSet](c).Namespace("default").Create(ctx, &api.ReplicaSet{
		ObjectMeta: api.ObjectMeta{Name: "web", Namespace: "default"},
		Spec:       api.ReplicaSetSpec{Replicas: &two, Selector: &api.LabelSelector{MatchLabels: lbl}, Template: template},
	}); err != nil {
		t.Fatal(err)
	}
	// A Deployment stays without ReplicaSet: its controller is not enabled.
	if _, err := client.Resource[api.Deployment](c).Namespace("default").Create(ctx, &api.Deployment{
		ObjectMeta: api.ObjectMeta{Name: "dep", Namespace: "default"},
		Spec:       api.DeploymentSpec{Replicas: &two, Selector: &api.LabelSelector{MatchLabels: map[string]string{"app": "dep"}}, Template: api.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": "dep"}}, Spec: template.Spec}},
	}); err != nil {
		t.Fatal(err)
	}

	eventually := func(what string, cond func() (bool, string)) {
		t.Helper()
		last := ""
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			ok, state := cond()
			if ok {
				return
			}
			last = state
		}
		t.Fatalf("timed out waiting for %s; last: %s", what, last)
	}
	eventually("two pods of the ReplicaSet", func() (bool, string) {
		pods, err := client.Resource[api.Pod](c).Namespace("default").List(ctx, client.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return false, err.Error()
		}
		return len(pods.Items) == 2, fmt.Sprintf("%d pods", len(pods.Items))
	})
	eventually("SuccessfulCreate events from replicaset-controller", func() (bool, string) {
		evs, err := client.Resource[api.Event](c).Namespace("default").List(ctx, client.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		n := 0
		var seen []string
		for _, ev := range evs.Items {
			seen = append(seen, ev.Reason+"/"+ev.Source.Component)
			if ev.Reason == "SuccessfulCreate" && ev.Source.Component == "replicaset-controller" &&
				ev.InvolvedObject.Kind == "ReplicaSet" && ev.InvolvedObject.Name == "web" && strings.HasPrefix(ev.Message, "Created pod: web-") {
				n++
			}
		}
		return n == 2, fmt.Sprint(seen)
	})
	lease, err := client.Resource[api.Lease](c).Namespace("kube-system").Get(ctx, "kube-controller-manager")
	if err != nil || lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		t.Errorf("kube-controller-manager lease = %+v, %v", lease, err)
	}

	get := func(path string) (int, string) {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d%s", port, path))
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/healthz"); code != 200 || body != "ok" {
		t.Errorf("/healthz = %d %q", code, body)
	}
	eventually("replicaset sync metrics", func() (bool, string) {
		_, body := get("/metrics")
		for _, want := range []string{
			`workqueue_depth{name="replicaset"}`,
			`workqueue_adds_total{name="replicaset"}`,
			`controller_sync_duration_seconds_count{controller="replicaset"}`,
			`controller_sync_total{controller="replicaset",result="success"}`,
			`controller_sync_errors_total{controller="replicaset"}`,
			`process_cpu_seconds_total`,
		} {
			if !strings.Contains(body, want) {
				return false, "no " + want
			}
		}
		if strings.Contains(body, `controller="deployment"`) || strings.Contains(body, `name="deployment"`) {
			return false, "deployment controller metrics present although it is not enabled"
		}
		return true, ""
	})
	rss, err := client.Resource[api.ReplicaSet](c).Namespace("default").List(ctx, client.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rss.Items) != 1 {
		t.Errorf("%d ReplicaSets, want only web: the deployment controller ran", len(rss.Items))
	}
}
