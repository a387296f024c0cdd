package staticpods

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
)

const webYAML = `apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {app: web}
spec:
  hostNetwork: true
  containers:
  - name: c
    image: busybox
    command: ["sleep", "3600"]
`

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestDecodeIdentity(t *testing.T) {
	pod, err := Decode([]byte(webYAML), "/etc/kubernetes/manifests/web.yaml", "node-1")
	if err != nil {
		t.Fatal(err)
	}
	if pod.Name != "web-node-1" || pod.Namespace != "default" || pod.Spec.NodeName != "node-1" {
		t.Errorf("identity: %s/%s on %q, want default/web-node-1 on node-1", pod.Namespace, pod.Name, pod.Spec.NodeName)
	}
	if len(pod.UID) != 32 || pod.Annotations[ConfigHashAnnotationKey] != string(pod.UID) {
		t.Errorf("UID %q, config.hash %q: want a 128-bit hex hash, the same", pod.UID, pod.Annotations[ConfigHashAnnotationKey])
	}
	if pod.Annotations[ConfigSourceAnnotationKey] != "file" || !IsStatic(pod) || IsMirror(pod) {
		t.Errorf("annotations %v", pod.Annotations)
	}
	if pod.Status.Phase != api.PodPending || pod.Spec.RestartPolicy != api.RestartPolicyAlways {
		t.Errorf("phase %q restartPolicy %q: want Pending, defaults applied", pod.Status.Phase, pod.Spec.RestartPolicy)
	}
	tolerates := false
	for _, tol := range pod.Spec.Tolerations {
		tolerates = tolerates || (tol.Operator == api.TolerationOpExists && tol.Effect == api.TaintEffectNoExecute && tol.Key == "")
	}
	if !tolerates {
		t.Errorf("tolerations %+v: want kube's NoExecute toleration", pod.Spec.Tolerations)
	}
	// The JSON form of the same manifest is the same pod.
	js := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","labels":{"app":"web"}},"spec":{"hostNetwork":true,` +
		`"containers":[{"name":"c","image":"busybox","command":["sleep","3600"]}]}}`
	pj, err := Decode([]byte(js), "/etc/kubernetes/manifests/web.yaml", "node-1")
	if err != nil || pj.UID != pod.UID {
		t.Errorf("JSON manifest: UID %v err %v, want %s", pj.UID, err, pod.UID)
	}
}

// The UID is stable for the same manifest, node and file, and changes with
// any of them; a UID in the manifest is kept.
func TestDecodeHash(t *testing.T) {
	uid := func(data, file, node string) api.UID {
		t.Helper()
		p, err := Decode([]byte(data), file, node)
		if err != nil {
			t.Fatal(err)
		}
		return p.UID
	}
	base := uid(webYAML, "/m/web.yaml", "n1")
	for i := 0; i < 5; i++ {
		if u := uid(webYAML, "/m/web.yaml", "n1"); u != base {
			t.Fatalf("UID changed between decodes: %s, %s", base, u)
		}
	}
	for name, u := range map[string]api.UID{
		"other node":    uid(webYAML, "/m/web.yaml", "n2"),
		"other file":    uid(webYAML, "/m/web2.yaml", "n1"),
		"other command": uid(strings.Replace(webYAML, "3600", "3601", 1), "/m/web.yaml", "n1"),
	} {
		if u == base {
			t.Errorf("%s: UID %s is unchanged", name, u)
		}
	}
	fixed := strings.Replace(webYAML, "  name: web\n", "  name: web\n  uid: \"1234\"\n", 1)
	if u := uid(fixed, "/m/web.yaml", "n1"); u != "1234" {
		t.Errorf("UID from the manifest: %s, want 1234", u)
	}
}

func TestDecodeRefused(t *testing.T) {
	for name, tc := range map[string]struct{ data, want string }{
		"not YAML":      {"{{{", "couldn't parse as pod"},
		"no kind":       {"apiVersion: v1\nmetadata: {name: x}\n", "Object 'Kind' is missing"},
		"a deployment":  {"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n", "is not a v1 Pod"},
		"no name":       {"apiVersion: v1\nkind: Pod\nspec: {containers: [{name: c, image: i}]}\n", "invalid pod: name is needed for the pod"},
		"no containers": {"apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {}\n", "invalid pod: spec.containers: Required value"},
		"a secret": {"apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {containers: [{name: c, image: i}], volumes: [{name: s, secret: {secretName: s}}]}\n",
			"static pods may not reference secrets"},
		"a service account": {"apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {serviceAccountName: sa, containers: [{name: c, image: i}]}\n",
			"static pods may not reference serviceaccounts"},
		"a configmap volume": {"apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {containers: [{name: c, image: i}], volumes: [{name: v, configMap: {name: cm}}]}\n",
			"static pods may not reference configmaps"},
	} {
		_, err := Decode([]byte(tc.data), "/m/x.yaml", "n1")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want it to contain %q", name, err, tc.want)
		}
	}
}

func names(pods []*api.Pod) string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return strings.Join(out, ",")
}

// List skips hidden files, directories and bad manifests (reported once
// each), and keeps config.seen while the pod is unchanged.
func TestListDirectory(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "web.yaml"), webYAML)
	write(t, filepath.Join(dir, "db.json"), `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"db","namespace":"data"},"spec":{"containers":[{"name":"c","image":"i"}]}}`)
	write(t, filepath.Join(dir, ".web.yaml.swp"), webYAML)
	write(t, filepath.Join(dir, "broken.yaml"), "apiVersion: v1\nkind: Pod\nmetadata: {name: broken}\nspec: {}\n")
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "sub", "other.yaml"), strings.Replace(webYAML, "name: web", "name: other", 1))
	var reports []string
	s := New(Options{Path: dir, NodeName: "n1", Report: func(p string, err error) { reports = append(reports, filepath.Base(p)+": "+err.Error()) }})
	pods := s.List()
	if got := names(pods); got != "db-n1,web-n1" {
		t.Fatalf("pods %s, want db-n1,web-n1", got)
	}
	if pods[0].Namespace != "data" {
		t.Errorf("db namespace %q, want data", pods[0].Namespace)
	}
	if len(reports) != 1 || !strings.HasPrefix(reports[0], "broken.yaml: invalid pod: spec.containers: Required value") {
		t.Errorf("reports %q, want one about broken.yaml", reports)
	}
	seen := pods[1].Annotations[ConfigFirstSeenAnnotationKey]
	time.Sleep(5 * time.Millisecond)
	again := s.List()
	if len(reports) != 1 {
		t.Errorf("the same bad manifest was reported again: %q", reports)
	}
	if again[1].Annotations[ConfigFirstSeenAnnotationKey] != seen || seen == "" {
		t.Errorf("config.seen %q then %q, want the first sight kept", seen, again[1].Annotations[ConfigFirstSeenAnnotationKey])
	}
	// Fixed, it joins; removed, it goes.
	write(t, filepath.Join(dir, "broken.yaml"), strings.Replace(webYAML, "name: web", "name: broken", 1))
	if got := names(s.List()); got != "broken-n1,db-n1,web-n1" {
		t.Errorf("after the fix: %s", got)
	}
	os.Remove(filepath.Join(dir, "db.json"))
	if got := names(s.List()); got != "broken-n1,web-n1" {
		t.Errorf("after removing db.json: %s", got)
	}
}

func TestListSingleFileAndMissingPath(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "web.yaml")
	write(t, f, webYAML)
	if got := names(New(Options{Path: f, NodeName: "n1"}).List()); got != "web-n1" {
		t.Errorf("single file: %s", got)
	}
	if got := New(Options{Path: filepath.Join(dir, "none"), NodeName: "n1"}).List(); len(got) != 0 {
		t.Errorf("missing path: %d pods", len(got))
	}
}

// Run sees files added, changed, renamed into place and removed through
// the watch, long before its period.
func TestRunWatches(t *testing.T) {
	dir := t.TempDir()
	var mu sync.Mutex
	var last []*api.Pod
	updates := make(chan struct{}, 100)
	s := New(Options{Path: dir, NodeName: "n1", Period: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		done <- s.Run(ctx, func(p []*api.Pod) {
			mu.Lock()
			last = p
			mu.Unlock()
			updates <- struct{}{}
		})
	}()
	defer func() {
		cancel()
		<-done
	}()
	wait := func(what string, ok func([]*api.Pod) bool) {
		t.Helper()
		deadline := time.After(5 * time.Second)
		for {
			mu.Lock()
			cur := last
			mu.Unlock()
			if ok(cur) {
				return
			}
			select {
			case <-updates:
			case <-deadline:
				t.Fatalf("%s: pods %s", what, names(cur))
			}
		}
	}
	<-updates
	write(t, filepath.Join(dir, "web.yaml"), webYAML)
	wait("added", func(p []*api.Pod) bool { return names(p) == "web-n1" })
	mu.Lock()
	uid := last[0].UID
	mu.Unlock()
	write(t, filepath.Join(dir, "web.yaml"), strings.Replace(webYAML, "3600", "7200", 1))
	wait("changed", func(p []*api.Pod) bool { return len(p) == 1 && p[0].UID != uid })
	// An editor's rename into place.
	tmp := filepath.Join(dir, ".web.yaml.tmp")
	write(t, tmp, strings.Replace(webYAML, "3600", "60", 1))
	if err := os.Rename(tmp, filepath.Join(dir, "web.yaml")); err != nil {
		t.Fatal(err)
	}
	wait("renamed into place", func(p []*api.Pod) bool { return len(p) == 1 && p[0].Spec.Containers[0].Command[1] == "60" })
	os.Remove(filepath.Join(dir, "web.yaml"))
	wait("removed", func(p []*api.Pod) bool { return len(p) == 0 })
}

// The periodic list finds a directory created after the start.
func TestRunPeriodicList(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "manifests")
	got := make(chan string, 100)
	s := New(Options{Path: dir, NodeName: "n1", Period: 50 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx, func(p []*api.Pod) { got <- names(p) })
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "web.yaml"), webYAML)
	deadline := time.After(5 * time.Second)
	for {
		select {
		case n := <-got:
			if n == "web-n1" {
				return
			}
		case <-deadline:
			t.Fatal("the pod of a directory made after the start never came")
		}
	}
}

// A manifest directory made after the start is found through the watch of
// its parent, long before the period.
func TestRunWatchesMissingDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "kubernetes", "manifests")
	got := make(chan string, 100)
	s := New(Options{Path: dir, NodeName: "n1", Period: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx, func(p []*api.Pod) { got <- names(p) })
	<-got
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// The source lists again on the parent's event and then watches dir.
	time.Sleep(300 * time.Millisecond)
	write(t, filepath.Join(dir, "web.yaml"), webYAML)
	deadline := time.After(5 * time.Second)
	for {
		select {
		case n := <-got:
			if n == "web-n1" {
				return
			}
		case <-deadline:
			t.Fatal("the pod of a directory made after the start did not come through the watch")
		}
	}
}
