package root_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
)

// golden compares got with testdata/NAME.golden, rewriting it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s:\n--- got\n%s\n--- want\n%s", name, path, got, want)
	}
}

var volatile = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`("?(?:creationTimestamp|uid|resourceVersion|startedAt)"?: )"[^"]*"`), `$1"<volatile>"`},
	{regexp.MustCompile(`(uid: )[0-9a-f-]{36}`), `$1<volatile>`},
	{regexp.MustCompile(`[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} [+-]\d{4}`), `<date>`},
}

// normalize replaces values that differ from run to run (uids, versions,
// timestamps) and re-renders tables with their AGE / LAST SEEN / Age
// cells replaced, so golden files do not depend on the clock.
func normalize(s string) string {
	for _, v := range volatile {
		s = v.re.ReplaceAllString(s, v.with)
	}
	lines := strings.Split(s, "\n")
	var out []string
	for i := 0; i < len(lines); {
		col, indent := ageColumn(lines[i])
		if col < 0 {
			out = append(out, lines[i])
			i++
			continue
		}
		// The table runs until a blank line or a line of another shape.
		j := i + 1
		for j < len(lines) && strings.HasPrefix(lines[j], indent) && strings.TrimSpace(lines[j]) != "" &&
			len(cells(lines[j])) == len(cells(lines[i])) {
			j++
		}
		var b strings.Builder
		// get pads columns by 3 spaces, describe by 2.
		pad := 3
		if indent != "" {
			pad = 2
		}
		w := tabwriter.NewWriter(&b, 0, 8, pad, ' ', 0)
		for k := i; k < j; k++ {
			cs := cells(lines[k])
			if k > i && !strings.HasPrefix(cs[col], "---") {
				cs[col] = "<age>"
			}
			w.Write([]byte(indent + strings.Join(cs, "\t") + "\n"))
		}
		w.Flush()
		out = append(out, strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")...)
		i = j
	}
	return strings.Join(out, "\n")
}

var cellSep = regexp.MustCompile(`\s{2,}`)

func cells(line string) []string {
	return cellSep.Split(strings.TrimSpace(line), -1)
}

// ageColumn finds a table header with an age column.
func ageColumn(line string) (int, string) {
	indent := line[:len(line)-len(strings.TrimLeft(line, " "))]
	for i, c := range cells(line) {
		if c == "AGE" || c == "LAST SEEN" || (c == "Age" && strings.Contains(line, "Reason")) {
			return i, indent
		}
	}
	return -1, ""
}

const fixtures = `apiVersion: v1
kind: ConfigMap
metadata:
  name: app
  labels: {app: web, tier: front}
data:
  a: "1"
  b: "2"
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: db
  labels: {app: db}
data:
  a: "1"
---
apiVersion: v1
kind: Pod
metadata:
  name: web-1
  labels: {app: web}
spec:
  nodeName: node-1
  containers:
  - name: app
    image: busybox:1
    command: [sleep, "3600"]
    ports: [{containerPort: 80}]
    env: [{name: A, value: "1"}]
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: app
        image: busybox:1
`

func TestIntegrationOutputGolden(t *testing.T) {
	c := startCluster(t)
	c.mustRun(fixtures, "apply", "-f", "-")
	ctx := context.Background()
	pods := client.Resource[api.Pod](c.client).Namespace("default")
	p, err := pods.Get(ctx, "web-1")
	if err != nil {
		t.Fatal(err)
	}
	p.Status.Phase = api.PodRunning
	p.Status.PodIP = "10.244.1.5"
	p.Status.PodIPs = []api.PodIP{{IP: "10.244.1.5"}}
	p.Status.HostIP = "10.0.0.2"
	p.Status.ContainerStatuses = []api.ContainerStatus{{Name: "app", Ready: true, RestartCount: 2, Image: "busybox:1",
		ContainerID: "containerd://abc", State: api.ContainerState{Running: &api.ContainerStateRunning{StartedAt: api.Time{Time: time.Now()}}}}}
	p.Status.Conditions = []api.PodCondition{{Type: "Ready", Status: api.ConditionTrue}}
	if _, err := pods.UpdateStatus(ctx, p); err != nil {
		t.Fatal(err)
	}
	evs := client.Resource[api.Event](c.client).Namespace("default")
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, e := range []struct{ name, typ, reason, msg string }{
		{"web-1.b", "Normal", "Pulled", "Container image \"busybox:1\" already present on machine"},
		{"web-1.a", "Normal", "Scheduled", "Successfully assigned default/web-1 to node-1"},
		{"web-1.c", "Warning", "BackOff", "Back-off restarting failed container app in pod web-1_default"},
	} {
		// Created out of order: a, then b, then c in time.
		ts := base.Add(time.Duration([]int{1, 0, 2}[i]) * time.Minute)
		_, err := evs.Create(ctx, &api.Event{
			ObjectMeta:     api.ObjectMeta{Name: e.name, Namespace: "default"},
			InvolvedObject: api.ObjectReference{Kind: "Pod", Namespace: "default", Name: "web-1", UID: p.UID},
			Type:           e.typ, Reason: e.reason, Message: e.msg, Count: 1,
			Source:         api.EventSource{Component: map[bool]string{true: "default-scheduler", false: "kubelet"}[e.reason == "Scheduled"]},
			FirstTimestamp: api.Time{Time: ts}, LastTimestamp: api.Time{Time: ts},
		})
		if err != nil {
			t.Fatal(err)
		}
	}

	for _, tc := range []struct {
		name string
		args []string
	}{
		{"get-pods", []string{"get", "pods"}},
		{"get-pods-wide", []string{"get", "pods", "-o", "wide"}},
		{"get-pod-yaml", []string{"get", "pod", "web-1", "-o", "yaml"}},
		{"get-cm-json", []string{"get", "configmap", "app", "-o", "json"}},
		{"get-list-yaml", []string{"get", "cm", "-l", "app", "-o", "yaml"}},
		{"get-name", []string{"get", "cm,deploy,po", "-o", "name"}},
		{"get-jsonpath", []string{"get", "pods", "-o", `jsonpath={range .items[*]}{.metadata.name}{"\t"}{.status.podIP}{"\t"}{.spec.containers[*].image}{"\n"}{end}`}},
		{"get-jsonpath-one", []string{"get", "deploy/web", "-o", "jsonpath={.spec.replicas}"}},
		{"get-custom-columns", []string{"get", "cm", "-o", "custom-columns=NAME:.metadata.name,APP:.metadata.labels.app,KEYS:.data.a,MISSING:.spec.x"}},
		{"get-show-labels", []string{"get", "cm,deploy", "--show-labels"}},
		{"get-sort-by", []string{"get", "cm", "--sort-by", ".metadata.labels.app", "-o", "custom-columns=NAME:.metadata.name,APP:.metadata.labels.app", "--no-headers"}},
		{"get-sort-by-table", []string{"get", "cm", "--sort-by", "{.data.b}"}},
		{"get-deploy-wide", []string{"get", "deploy", "-o", "wide"}},
		{"get-events", []string{"get", "events"}},
		{"describe-pod", []string{"describe", "pod", "web-1"}},
		{"describe-deployment", []string{"describe", "deployment/web"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			golden(t, tc.name, normalize(c.mustRun("", tc.args...)))
		})
	}
}

func TestNormalize(t *testing.T) {
	in := "NAME    READY   AGE   IP\nweb-1   1/1     5s    10.0.0.1\nweb-22  0/1     120m  <none>\n"
	want := "NAME     READY   AGE     IP\nweb-1    1/1     <age>   10.0.0.1\nweb-22   0/1     <age>   <none>\n"
	if got := normalize(in); got != want {
		t.Errorf("normalize:\n%s\nwant\n%s", got, want)
	}
}
