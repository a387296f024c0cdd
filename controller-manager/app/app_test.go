package app_test

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/controller-manager/app"
	"github.com/minik8s/minik8s/controller-manager/controllermanagertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/daemon"
)

func TestDefaultsAndFlags(t *testing.T) {
	o := app.DefaultOptions()
	le := o.LeaderElection
	if o.Serving.SecurePort != 10257 || o.Serving.BindAddress != "0.0.0.0" || !le.LeaderElect || le.ResourceNamespace != "kube-system" || le.ResourceName != "kube-controller-manager" ||
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
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	// The harness's options but for what this test is about: the HTTPS
	// server (no apiserver to delegate to: /metrics is let through as
	// --authorization-always-allow-paths can; internal/secureserving and
	// internal/realcomponents test the delegation) and leader election
	// (with short periods, so the Lease is held at once).
	cl := controllermanagertest.Start(t, []string{"replicaset"}, func(o *app.Options) {
		o.Serving.SecurePort, o.Serving.Listener = port, l
		o.Serving.Authorization.AlwaysAllowPaths = append(o.Serving.Authorization.AlwaysAllowPaths, "/metrics")
		o.LeaderElection.LeaderElect = true
		o.LeaderElection.LeaseDuration, o.LeaderElection.RenewDeadline, o.LeaderElection.RetryPeriod = 5*time.Second, 4*time.Second, 500*time.Millisecond
	})
	c := cl.Client
	ctx := cl.Context(2 * time.Minute)

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

	cl.Eventually(time.Minute, "two pods of the ReplicaSet", func() (bool, error) {
		pods, err := client.Resource[api.Pod](c).Namespace("default").List(ctx, client.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return false, err
		}
		return len(pods.Items) == 2, fmt.Errorf("%d pods", len(pods.Items))
	})
	cl.Eventually(time.Minute, "SuccessfulCreate events from replicaset-controller", func() (bool, error) {
		evs, err := client.Resource[api.Event](c).Namespace("default").List(ctx, client.ListOptions{})
		if err != nil {
			return false, err
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
		return n == 2, fmt.Errorf("events %v", seen)
	})
	lease, err := client.Resource[api.Lease](c).Namespace("kube-system").Get(ctx, "kube-controller-manager")
	if err != nil || lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		t.Errorf("kube-controller-manager lease = %+v, %v", lease, err)
	}

	get := func(path string) (int, string) {
		// The serving certificate is self-signed.
		hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
		resp, err := hc.Get(fmt.Sprintf("https://127.0.0.1:%d%s", port, path))
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
	cl.Eventually(time.Minute, "replicaset sync metrics", func() (bool, error) {
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
				return false, errors.New("no " + want)
			}
		}
		if strings.Contains(body, `controller="deployment"`) || strings.Contains(body, `name="deployment"`) {
			return false, errors.New("deployment controller metrics present although it is not enabled")
		}
		return true, nil
	})
	rss, err := client.Resource[api.ReplicaSet](c).Namespace("default").List(ctx, client.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rss.Items) != 1 {
		t.Errorf("%d ReplicaSets, want only web: the deployment controller ran", len(rss.Items))
	}
}
