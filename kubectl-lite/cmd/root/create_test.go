package root_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/oracle"
)

// TestIntegrationCreateGenerators covers "create KIND NAME": namespaces,
// config maps and secrets from literals and files, deployments and
// services, with --dry-run and -o as kubectl prints them.
func TestIntegrationCreateGenerators(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "app.conf"), []byte("mode=fast\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "blob.bin"), []byte{0xff, 0xfe, 0x00}, 0o600); err != nil {
		t.Fatal(err)
	}

	if out := c.mustRun("", "create", "namespace", "team-c"); out != "namespace/team-c created\n" {
		t.Errorf("create namespace = %q", out)
	}
	if out := c.mustRun("", "create", "cm", "settings", "--from-literal=a=1", "--from-file="+dir); out != "configmap/settings created\n" {
		t.Errorf("create configmap = %q", out)
	}
	cm, err := client.Resource[api.ConfigMap](c.client).Namespace("default").Get(ctx, "settings")
	if err != nil {
		t.Fatal(err)
	}
	if cm.Data["a"] != "1" || cm.Data["app.conf"] != "mode=fast\n" || string(cm.BinaryData["blob.bin"]) != "\xff\xfe\x00" {
		t.Errorf("configmap data %q binaryData %q", cm.Data, cm.BinaryData)
	}
	c.wantFail(`error: cannot add key "a", another key by that name already exists`, "create", "cm", "dup", "--from-literal=a=1", "--from-literal=a=2")

	if out := c.mustRun("", "-n", "team-c", "create", "secret", "generic", "creds", "--from-literal=password=hunter22", "-o", "name"); out != "secret/creds\n" {
		t.Errorf("create secret -o name = %q", out)
	}
	sec, err := client.Resource[api.Secret](c.client).Namespace("team-c").Get(ctx, "creds")
	if err != nil {
		t.Fatal(err)
	}
	if string(sec.Data["password"]) != "hunter22" {
		t.Errorf("secret data %q", sec.Data)
	}

	// The client dry run prints kubectl's manifest and creates nothing.
	out := c.mustRun("", "create", "deployment", "web", "--image=registry.local:5000/team/nginx:1.25", "--replicas=2", "--dry-run=client", "-o", "yaml")
	want := `apiVersion: apps/v1
kind: Deployment
metadata:
  labels:
    app: web
  name: web
spec:
  replicas: 2
  selector:
    matchLabels:
      app: web
  strategy: {}
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - image: registry.local:5000/team/nginx:1.25
        name: nginx
        resources: {}
status: {}
`
	if out != want {
		t.Errorf("create deployment --dry-run=client -o yaml:\n%s\nwant\n%s", out, want)
	}
	deploys := client.Resource[api.Deployment](c.client).Namespace("default")
	if _, err := deploys.Get(ctx, "web"); !apierrors.IsNotFound(err) {
		t.Fatalf("a client dry run created the deployment: %v", err)
	}
	// The printed manifest applies as is.
	if out := c.mustRun(out, "apply", "-f", "-"); out != "deployment.apps/web created\n" {
		t.Errorf("apply of the dry-run output = %q", out)
	}
	if out := c.mustRun("", "create", "deploy", "job", "--image=busybox", "--", "sleep", "3600"); out != "deployment.apps/job created\n" {
		t.Errorf("create deployment with a command = %q", out)
	}
	d, err := deploys.Get(ctx, "job")
	if err != nil {
		t.Fatal(err)
	}
	if ctr := d.Spec.Template.Spec.Containers[0]; ctr.Name != "busybox" || strings.Join(ctr.Command, " ") != "sleep 3600" {
		t.Errorf("deployment container %+v", ctr)
	}

	if out := c.mustRun("", "create", "service", "nodeport", "web", "--tcp=80:8080", "--dry-run=server"); out != "service/web created (server dry run)\n" {
		t.Errorf("create service --dry-run=server = %q", out)
	}
	if out := c.mustRun("", "create", "svc", "clusterip", "web", "--tcp=80:8080"); out != "service/web created\n" {
		t.Errorf("create service clusterip = %q", out)
	}
	svc, err := client.Resource[api.Service](c.client).Namespace("default").Get(ctx, "web")
	if err != nil {
		t.Fatal(err)
	}
	if svc.Spec.Type != "ClusterIP" || svc.Spec.Selector["app"] != "web" || len(svc.Spec.Ports) != 1 ||
		svc.Spec.Ports[0].Port != 80 || svc.Spec.Ports[0].TargetPort.IntVal != 8080 || svc.Spec.Ports[0].Name != "80-8080" {
		t.Errorf("service spec %+v", svc.Spec)
	}
	c.wantFail(`Error from server (AlreadyExists): namespaces "team-c" already exists`, "create", "ns", "team-c")

	// A refused create KIND says so in kubectl's words, the server's
	// message after them, as the real kubectl does.
	c.mustRun("", "create", "serviceaccount", "robot")
	c.mustRun("", "create", "job", "once", "--image=busybox")
	c.mustRun("", "create", "cronjob", "tick", "--image=busybox", "--schedule=* * * * *")
	oracle.Path(t, "kubectl")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"create", "configmap", "settings", "--from-literal=a=1"}, `error: failed to create configmap: configmaps "settings" already exists`},
		{[]string{"-n", "team-c", "create", "secret", "generic", "creds", "--from-literal=a=1"}, `error: failed to create secret secrets "creds" already exists`},
		{[]string{"create", "deployment", "web", "--image=busybox"}, `error: failed to create deployment: deployments.apps "web" already exists`},
		{[]string{"create", "service", "clusterip", "web", "--tcp=80:8080"}, `error: failed to create ClusterIP service: services "web" already exists`},
		{[]string{"create", "serviceaccount", "robot"}, `error: failed to create serviceaccount: serviceaccounts "robot" already exists`},
		{[]string{"create", "job", "once", "--image=busybox"}, `error: failed to create job: jobs.batch "once" already exists`},
		{[]string{"create", "cronjob", "tick", "--image=busybox", "--schedule=* * * * *"}, `error: failed to create cronjob: cronjobs.batch "tick" already exists`},
		{[]string{"create", "namespace", "team-c"}, `Error from server (AlreadyExists): namespaces "team-c" already exists`},
	} {
		c.wantFail(tc.want, tc.args...)
		if _, stderr, code := c.kubectl(tc.args...); code == 0 || strings.TrimSpace(stderr) != tc.want {
			t.Errorf("kubectl %s: exit %d, said %q; want %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
	}
}

// TestIntegrationRunExpose covers run (a Pod as kubectl run makes it) and
// expose (a Service selecting what a deployment or pod selects).
func TestIntegrationRunExpose(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()
	want := `apiVersion: v1
kind: Pod
metadata:
  labels:
    run: web
  name: web
spec:
  containers:
  - image: nginx
    name: web
    resources: {}
  dnsPolicy: ClusterFirst
  restartPolicy: Always
status: {}
`
	if out := c.mustRun("", "run", "web", "--image=nginx", "--dry-run=client", "-o", "yaml"); out != want {
		t.Errorf("run --dry-run=client -o yaml:\n%s\nwant\n%s", out, want)
	}
	if out := c.mustRun("", "run", "bb", "--image=busybox", "--restart=Never", "--env=A=1", "--port=8080", "--command", "--", "sleep", "3600"); out != "pod/bb created\n" {
		t.Errorf("run = %q", out)
	}
	p, err := client.Resource[api.Pod](c.client).Namespace("default").Get(ctx, "bb")
	if err != nil {
		t.Fatal(err)
	}
	ctr := p.Spec.Containers[0]
	if p.Spec.RestartPolicy != "Never" || strings.Join(ctr.Command, " ") != "sleep 3600" || len(ctr.Env) != 1 || ctr.Env[0].Value != "1" || p.Labels["run"] != "bb" {
		t.Errorf("pod from run: %+v", p.Spec)
	}
	c.wantFail(`error: required flag(s) "image" not set`, "run", "x")

	// expose a pod: its labels and container port.
	if out := c.mustRun("", "expose", "pod", "bb"); out != "service/bb exposed\n" {
		t.Errorf("expose pod = %q", out)
	}
	svc, err := client.Resource[api.Service](c.client).Namespace("default").Get(ctx, "bb")
	if err != nil {
		t.Fatal(err)
	}
	if svc.Spec.Selector["run"] != "bb" || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 8080 || svc.Spec.Ports[0].TargetPort.IntVal != 8080 {
		t.Errorf("service from expose pod: %+v", svc.Spec)
	}
	// expose a deployment under another name, as a NodePort.
	c.mustRun(deployV1, "apply", "-f", "-")
	if out := c.mustRun("", "expose", "deployment/web", "--port=80", "--target-port=8080", "--type=NodePort", "--name=web-np"); out != "service/web-np exposed\n" {
		t.Errorf("expose deployment = %q", out)
	}
	svc, err = client.Resource[api.Service](c.client).Namespace("default").Get(ctx, "web-np")
	if err != nil {
		t.Fatal(err)
	}
	if svc.Spec.Type != "NodePort" || svc.Spec.Selector["app"] != "web" || svc.Spec.Ports[0].Port != 80 || svc.Spec.Ports[0].TargetPort.IntVal != 8080 || svc.Spec.Ports[0].NodePort == 0 {
		t.Errorf("service from expose deployment: %+v", svc.Spec)
	}
	c.wantFail("error: couldn't find port via --port flag or introspection", "expose", "deployment", "web")
}
