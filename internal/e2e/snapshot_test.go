package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	k8serrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/minik8s/minik8s/api"
)

// snapNS is the namespace of the snapshot scenario.
const snapNS = "e2e-snapshot"

// snapConfigMaps is how many ConfigMaps the snapshot scenario saves.
const snapConfigMaps = 10000

// TestEtcdSnapshotRestore is issue 28's backup and restore of the compose
// cluster's etcd: 10,000 ConfigMaps and a Deployment in a namespace, make
// snapshot, a truncated copy of the file refused by scripts/etcd-snapshot.sh
// restore with one line and the cluster unchanged, the namespace deleted,
// the cluster's etcd and PKI wiped (make down, their volumes removed), make
// restore SNAPSHOT=FILE: the namespace and every ConfigMap are back with
// their UIDs and resourceVersions, and the Deployment's pods Running again.
//
// The clients' side, with client-go as the judge: a watch from a
// resourceVersion read before the snapshot gets 410 Gone (Expired) from
// the restored cluster, and a client-go informer started before the
// snapshot, which saw the namespace's ConfigMaps deleted and lived through
// the restore, relists and holds all 10,000 again, each with its restored
// resourceVersion (a watch alone cannot bring them back: the restore
// writes no events).
//
// Like TestClusterRestart it stops and starts the cluster the suite shares,
// which is up again when it ends. It wipes only the etcd and PKI volumes,
// not what make clean removes: the nodes keep their images, and .minik8s
// (the kubeconfig, rewritten by make up; conformance reports) stays.
func TestEtcdSnapshotRestore(t *testing.T) {
	c := requireCluster(t)
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	// wiped: the cluster was taken down (etcd and PKI to be removed);
	// restored: make restore succeeded.
	var wiped, restored bool
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
		defer cancel()
		if wiped && !restored {
			// The tests after this one need a cluster: an empty one rather
			// than none.
			t.Logf("the restore failed: make up on an empty etcd for the tests that follow")
			if _, err := c.Run(ctx, "make", "up"); err != nil {
				t.Errorf("make up after the failed restore: %v", err)
			}
		}
		if _, err := c.Kubectl(ctx, "delete", "namespace", snapNS, "--ignore-not-found", "--wait=false"); err != nil {
			t.Logf("delete namespace %s: %v", snapNS, err)
		}
		t.Logf("snapshot scenario: %.1fs", time.Since(start).Seconds())
	})
	defer func() {
		if t.Failed() {
			dctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			out, _ := c.Kubectl(dctx, "get", "nodes,pods,deployments", "-n", snapNS, "-o", "wide")
			t.Logf("kubectl-lite get nodes,pods,deployments -n %s:\n%s", snapNS, out)
			t.Logf("last log lines of apiserver:\n%s", c.Logs(dctx, "apiserver", 40))
		}
	}()
	kubectl := func(args ...string) string {
		t.Helper()
		out, err := c.Kubectl(ctx, args...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}

	// The objects: the namespace and the Deployment applied, the
	// ConfigMaps created by client-go, 16 at a time.
	(&storage{c: c}).apply(t, ctx, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "+snapNS+"\n")
	(&storage{c: c}).apply(t, ctx, webManifest(snapNS, 2))
	cs := snapClientset(t, c)
	t0 := time.Now()
	createConfigMaps(t, ctx, cs, snapConfigMaps)
	t.Logf("%d ConfigMaps created in %.1fs", snapConfigMaps, time.Since(t0).Seconds())
	kubectl("rollout", "status", "deployment/web", "-n", snapNS, "--timeout=180s")
	inf := startSnapInformer(t, ctx, cs)
	within(t, ctx, 2*time.Minute, "the informer holding every ConfigMap", func(ctx context.Context) (bool, string, error) {
		n := len(inf.GetStore().List())
		return n == snapConfigMaps, fmt.Sprintf("%d ConfigMaps in the informer's store", n), nil
	})
	saved := snapshotObjects(t, ctx, c)
	if len(saved.configMaps) != snapConfigMaps {
		t.Fatalf("%d ConfigMaps labelled e2e=snapshot, want %d", len(saved.configMaps), snapConfigMaps)
	}
	// A resourceVersion of the cluster before the snapshot.
	before, err := cs.CoreV1().ConfigMaps(snapNS).List(ctx, metav1.ListOptions{LabelSelector: "e2e=snapshot", Limit: 1})
	if err != nil {
		t.Fatal(err)
	}

	// make snapshot into a directory of the test (outside .minik8s).
	dir := t.TempDir()
	t0 = time.Now()
	if out, err := c.Run(ctx, "make", "snapshot", "SNAPSHOT_DIR="+dir); err != nil {
		t.Fatal(err)
	} else {
		t.Logf("make snapshot (%.1fs):\n%s", time.Since(t0).Seconds(), out)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "etcd-snapshot-manual-*.db"))
	if len(files) != 1 {
		t.Fatalf("make snapshot left %v in %s, want one etcd-snapshot-manual-UNIXTIME.db", files, dir)
	}
	file := files[0]
	if _, err := os.Stat(strings.TrimSuffix(file, ".db") + ".pki.tar"); err != nil {
		t.Errorf("no PKI beside the snapshot: %v", err)
	}

	// A truncated copy is refused with one line; nothing changes.
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.db")
	if err := os.WriteFile(truncated, b[:len(b)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	apiserverID, err := c.Container(ctx, "apiserver")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Run(ctx, filepath.Join(c.Root, "scripts", "etcd-snapshot.sh"), "restore", truncated)
	var ce *CommandError
	if !errors.As(err, &ce) {
		t.Fatalf("restore of a truncated snapshot: %v, want a refusal", err)
	}
	msg := strings.TrimSpace(ce.Stderr)
	if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "etcd-snapshot: restore of "+truncated+" refused, nothing changed: corrupt snapshot "+truncated+": truncated") {
		t.Errorf("restore of a truncated snapshot said\n%s\nwant one line: etcd-snapshot: restore of %s refused, nothing changed: corrupt snapshot %s: truncated ...", msg, truncated, truncated)
	}
	if id, err := c.Container(ctx, "apiserver"); err != nil || id != apiserverID {
		t.Errorf("the apiserver container is %q (%v) after the refused restore, was %q", id, err, apiserverID)
	}
	if now := snapshotObjects(t, ctx, c); !equalObjects(now, saved) {
		t.Errorf("the objects changed after a refused restore: %d ConfigMaps, namespace %s", len(now.configMaps), now.namespaceUID)
	}

	// Deleted, wiped, restored.
	kubectl("delete", "namespace", snapNS, "--wait=false")
	within(t, ctx, 2*time.Minute, "namespace "+snapNS+" gone", func(ctx context.Context) (bool, string, error) {
		out, err := c.Kubectl(ctx, "get", "namespace", snapNS, "--ignore-not-found", "-o", "name")
		if err != nil {
			return false, "", Retry(err)
		}
		return strings.TrimSpace(out) == "", out, nil
	})
	// The informer saw them go: its watch is live up to the deletion.
	within(t, ctx, 2*time.Minute, "the informer's store empty after the namespace's deletion", func(ctx context.Context) (bool, string, error) {
		n := len(inf.GetStore().List())
		return n == 0, fmt.Sprintf("%d ConfigMaps in the informer's store", n), nil
	})
	listsBefore := inf.lists.Load()
	t0 = time.Now()
	wiped = true // from here on the cluster is down until make restore
	if _, err := c.Run(ctx, "make", "down"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(ctx, "docker", "volume", "rm", c.Project+"_etcd", c.Project+"_pki"); err != nil {
		t.Fatal(err)
	}
	t.Logf("make down, etcd and PKI volumes removed: %.1fs", time.Since(t0).Seconds())
	restoreStart := time.Now()
	out, err := c.Run(ctx, "make", "restore", "SNAPSHOT="+file)
	if err != nil {
		t.Fatal(err)
	}
	restored = true
	t.Logf("make restore SNAPSHOT=%s: %.1fs", file, time.Since(restoreStart).Seconds())
	if !strings.Contains(out, "Cluster ready") {
		t.Errorf("make restore printed\n%s", out)
	}

	var got snapshot
	within(t, ctx, time.Minute, "every saved object back", func(ctx context.Context) (bool, string, error) {
		var err error
		if got, err = listSnapshotObjects(ctx, c); err != nil {
			return false, "", Retry(err)
		}
		return len(got.configMaps) == snapConfigMaps, fmt.Sprintf("%d ConfigMaps", len(got.configMaps)), nil
	})
	if !equalObjects(got, saved) {
		for name, rv := range saved.configMaps {
			if got.configMaps[name] != rv {
				t.Errorf("ConfigMap %s: uid/resourceVersion %s after the restore, %s before", name, got.configMaps[name], rv)
			}
		}
		if got.namespaceUID != saved.namespaceUID || got.deploymentUID != saved.deploymentUID {
			t.Errorf("namespace uid %s, Deployment uid %s after the restore; before %s, %s", got.namespaceUID, got.deploymentUID, saved.namespaceUID, saved.deploymentUID)
		}
	}
	// A watch from before the snapshot: 410 Gone, reason Expired.
	within(t, ctx, time.Minute, "a watch from resourceVersion "+before.ResourceVersion+" (before the snapshot) answered 410 Expired", func(ctx context.Context) (bool, string, error) {
		return watchExpired(ctx, cs, before.ResourceVersion)
	})
	// The informer relisted: every ConfigMap back in its store with the
	// restored uid and resourceVersion.
	within(t, ctx, 3*time.Minute, "the informer from before the snapshot relisted every ConfigMap", func(ctx context.Context) (bool, string, error) {
		items := inf.GetStore().List()
		same := 0
		for _, o := range items {
			cm := o.(*corev1.ConfigMap)
			if saved.configMaps[cm.Name] == string(cm.UID)+"/"+cm.ResourceVersion {
				same++
			}
		}
		return same == snapConfigMaps, fmt.Sprintf("%d ConfigMaps in the store, %d as saved; lists since the wipe: %d", len(items), same, inf.lists.Load()-listsBefore), nil
	})
	if n := inf.lists.Load() - listsBefore; n < 1 {
		t.Errorf("the informer's store is whole again but it listed %d times since the wipe", n)
	}
	within(t, ctx, 3*time.Minute, "the Deployment's 2 pods Running and ready again", func(ctx context.Context) (bool, string, error) {
		var l api.List[api.Pod]
		if err := c.KubectlJSON(ctx, &l, "get", "pods", "-n", snapNS, "-l", "app=web"); err != nil {
			return false, "", Retry(err)
		}
		n := 0
		for _, p := range l.Items {
			if p.DeletionTimestamp == nil && running(p) && podReady(p) {
				n++
			}
		}
		return n == 2 && len(l.Items) == 2, describe(l.Items), nil
	})
	t.Logf("snapshot of %d bytes restored; objects back after %.1fs", len(b), time.Since(restoreStart).Seconds())
}

// snapshot is what the snapshot scenario compares: each ConfigMap's
// "uid/resourceVersion" by name, the namespace's and Deployment's UIDs.
type snapshot struct {
	configMaps                  map[string]string
	namespaceUID, deploymentUID string
}

func snapshotObjects(t *testing.T, ctx context.Context, c *Cluster) snapshot {
	t.Helper()
	s, err := listSnapshotObjects(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func listSnapshotObjects(ctx context.Context, c *Cluster) (snapshot, error) {
	s := snapshot{configMaps: map[string]string{}}
	var l api.List[api.ConfigMap]
	if err := c.KubectlJSON(ctx, &l, "get", "configmaps", "-n", snapNS, "-l", "e2e=snapshot"); err != nil {
		return s, err
	}
	for _, cm := range l.Items {
		s.configMaps[cm.Name] = string(cm.UID) + "/" + cm.ResourceVersion
	}
	var ns api.Namespace
	if err := c.KubectlJSON(ctx, &ns, "get", "namespace", snapNS); err != nil {
		return s, err
	}
	s.namespaceUID = string(ns.UID)
	var d api.Deployment
	if err := c.KubectlJSON(ctx, &d, "get", "deployment", "web", "-n", snapNS); err != nil {
		return s, err
	}
	s.deploymentUID = string(d.UID)
	return s, nil
}

func equalObjects(a, b snapshot) bool {
	if a.namespaceUID != b.namespaceUID || a.deploymentUID != b.deploymentUID || len(a.configMaps) != len(b.configMaps) {
		return false
	}
	for k, v := range a.configMaps {
		if b.configMaps[k] != v {
			return false
		}
	}
	return true
}

// snapClientset is a client-go clientset on the cluster's admin kubeconfig,
// allowed a burst of creates.
func snapClientset(t *testing.T, c *Cluster) *kubernetes.Clientset {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 500, 1000
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// createConfigMaps creates cm-00000 ... in snapNS, labelled e2e=snapshot,
// 16 at a time; an AlreadyExists (a retried create) counts as done.
func createConfigMaps(t *testing.T, ctx context.Context, cs *kubernetes.Clientset, n int) {
	t.Helper()
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for range 16 {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%05d", i), Namespace: snapNS,
					Labels: map[string]string{"e2e": "snapshot"}}, Data: map[string]string{"index": fmt.Sprint(i)}}
				var err error
				for attempt := 0; attempt < 5; attempt++ {
					if _, err = cs.CoreV1().ConfigMaps(snapNS).Create(ctx, cm, metav1.CreateOptions{}); err == nil || k8serrors.IsAlreadyExists(err) {
						err = nil
						break
					}
					time.Sleep(time.Second)
				}
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("create ConfigMap %s: %w", cm.Name, err)
					}
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		t.Fatal(firstErr)
	}
}

// snapInformer is a client-go ConfigMap informer on snapNS (label
// e2e=snapshot) counting the lists its reflector makes.
type snapInformer struct {
	cache.SharedIndexInformer
	lists *atomic.Int64
}

func startSnapInformer(t *testing.T, ctx context.Context, cs *kubernetes.Clientset) snapInformer {
	t.Helper()
	lists := new(atomic.Int64)
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(snapNS),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = "e2e=snapshot"
			// The reflector's lists: a list (no bookmarks asked) or a
			// streaming list (a watch sending the initial events).
			if !o.AllowWatchBookmarks || (o.SendInitialEvents != nil && *o.SendInitialEvents) {
				lists.Add(1)
			}
		}))
	inf := f.Core().V1().ConfigMaps().Informer()
	ictx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	f.Start(ictx.Done())
	return snapInformer{SharedIndexInformer: inf, lists: lists}
}

// watchExpired opens a watch on snapNS's ConfigMaps from rv and tells
// whether the server answered 410 Gone with reason Expired, either as the
// response or as the watch's first event (kube sends the latter).
func watchExpired(ctx context.Context, cs *kubernetes.Clientset, rv string) (bool, string, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	w, err := cs.CoreV1().ConfigMaps(snapNS).Watch(ctx, metav1.ListOptions{ResourceVersion: rv, LabelSelector: "e2e=snapshot"})
	if err != nil {
		var se *k8serrors.StatusError
		if errors.As(err, &se) && se.ErrStatus.Code == 410 {
			return se.ErrStatus.Reason == metav1.StatusReasonExpired, fmt.Sprintf("answered %d %s: %s", se.ErrStatus.Code, se.ErrStatus.Reason, se.ErrStatus.Message), nil
		}
		return false, "", Retry(err)
	}
	defer w.Stop()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			return false, "the watch closed without an event", nil
		}
		if ev.Type != watch.Error {
			return false, "", fmt.Errorf("a watch from a resourceVersion before the restore got a %s event, want an ERROR 410", ev.Type)
		}
		st, ok := ev.Object.(*metav1.Status)
		if !ok {
			return false, fmt.Sprintf("an ERROR event with a %T", ev.Object), nil
		}
		return st.Code == 410 && st.Reason == metav1.StatusReasonExpired, fmt.Sprintf("ERROR event %d %s: %s", st.Code, st.Reason, st.Message), nil
	case <-ctx.Done():
		return false, "no event within 20s", nil
	}
}
