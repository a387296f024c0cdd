package e2e

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/kubeconfig"
)

// stNS is the namespace of the storage scenario.
const stNS = "e2e-storage"

// TestStorage is issue 28's end-to-end proof of persistent storage, five
// parts run side by side in one namespace of the compose cluster:
//
//   - MySQL: the Kubernetes documentation's WordPress + MySQL example's
//     database half (tutorials/stateful-application/mysql-wordpress-
//     persistent-volume), with the minik8s busybox image standing in for
//     mysql:8.0, which does not exist offline: a claim without a
//     storageClassName (the DefaultStorageClass admission gives it
//     local-path), a Deployment with strategy Recreate whose "database" is
//     a file of rows in the volume. A row is written with kubectl exec, the
//     pod deleted, and its replacement reads the row back; the provisioned
//     volume is pinned (node affinity) to the node that ran the pod.
//   - StatefulSetClaims: a StatefulSet of 3 with volumeClaimTemplates
//     (claims data-db-0..2, class local-path): each pod writes its hostname
//     (its ordinal) into its volume; all pods are deleted and each comes
//     back on the node holding its volume, reading its own name.
//   - ReclaimDelete: a claim of the class local-path (reclaimPolicy
//     Delete) is deleted: its volume goes, and so does the directory on
//     the node (looked at inside the node's container).
//   - MissingClaim: a pod whose claim does not exist stays Pending with
//     the scheduler's FailedScheduling reason, and never gets a node.
//   - BadSubPath: a pod mounting subPath ../x is refused with 422 and
//     kube-apiserver's message; nothing is created.
func TestStorage(t *testing.T) {
	c := requireCluster(t)
	start := time.Now()
	s := &storage{c: c}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if _, err := c.Kubectl(ctx, "delete", "namespace", stNS, "--ignore-not-found", "--wait=false"); err != nil {
			t.Errorf("delete namespace %s: %v", stNS, err)
		}
		// The namespace's claims go with it, and their volumes (reclaim
		// Delete) after them: none is left for a later snapshot to bring
		// back.
		err := Poll(ctx, time.Second, "namespace "+stNS+" and its volumes gone", func(ctx context.Context) (bool, string, error) {
			out, err := c.Kubectl(ctx, "get", "namespace", stNS, "--ignore-not-found")
			if err != nil {
				return false, "", Retry(err)
			}
			pvs, err := s.volumesOfNamespace(ctx)
			if err != nil {
				return false, "", err
			}
			return strings.TrimSpace(out) == "" && len(pvs) == 0, fmt.Sprintf("namespace: %q, volumes left: %v", out, pvs), nil
		})
		if err != nil {
			t.Error(err)
		}
		t.Logf("storage scenario: %.1fs wall time, cleanup included", time.Since(start).Seconds())
	})

	var nodes api.List[api.Node]
	if err := c.KubectlJSON(ctx, &nodes, "get", "nodes"); err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) < 2 {
		t.Fatalf("%d nodes: want the compose cluster's %d workers", len(nodes.Items), workers)
	}
	s.nodes = len(nodes.Items)
	s.apply(t, ctx, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "+stNS+"\n")

	runParts(t, ctx, s.diagnose,
		part{"MySQL", s.mysql},
		part{"StatefulSetClaims", s.statefulSet},
		part{"ReclaimDelete", s.reclaimDelete},
		part{"MissingClaim", s.missingClaim},
		part{"BadSubPath", s.badSubPath},
	)
	t.Logf("storage scenario: parts done after %.1fs", time.Since(start).Seconds())
}

// storage is the state the parts share.
type storage struct {
	c *Cluster
	// nodes is how many nodes the cluster has (the scheduler's "0/N nodes").
	nodes int
}

// pv is what the scenario reads of a PersistentVolume.
type pv struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		HostPath *struct {
			Path string `json:"path"`
		} `json:"hostPath"`
		Local *struct {
			Path string `json:"path"`
		} `json:"local"`
		ClaimRef *struct {
			Namespace string `json:"namespace"`
			Name      string `json:"name"`
		} `json:"claimRef"`
		StorageClassName              string `json:"storageClassName"`
		PersistentVolumeReclaimPolicy string `json:"persistentVolumeReclaimPolicy"`
		NodeAffinity                  *struct {
			Required *struct {
				NodeSelectorTerms []struct {
					MatchExpressions []struct {
						Key      string   `json:"key"`
						Operator string   `json:"operator"`
						Values   []string `json:"values"`
					} `json:"matchExpressions"`
				} `json:"nodeSelectorTerms"`
			} `json:"required"`
		} `json:"nodeAffinity"`
	} `json:"spec"`
	Status struct {
		Phase string `json:"phase"`
	} `json:"status"`
}

// path is the volume's directory on its node.
func (v pv) path() string {
	switch {
	case v.Spec.HostPath != nil:
		return v.Spec.HostPath.Path
	case v.Spec.Local != nil:
		return v.Spec.Local.Path
	}
	return ""
}

// node is the one node the volume's required node affinity names
// (kubernetes.io/hostname In [node]), or "".
func (v pv) node() string {
	if v.Spec.NodeAffinity == nil || v.Spec.NodeAffinity.Required == nil {
		return ""
	}
	terms := v.Spec.NodeAffinity.Required.NodeSelectorTerms
	if len(terms) != 1 || len(terms[0].MatchExpressions) != 1 {
		return ""
	}
	e := terms[0].MatchExpressions[0]
	if e.Key != "kubernetes.io/hostname" || e.Operator != "In" || len(e.Values) != 1 {
		return ""
	}
	return e.Values[0]
}

// pvc is what the scenario reads of a PersistentVolumeClaim.
type pvc struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		StorageClassName *string `json:"storageClassName"`
		VolumeName       string  `json:"volumeName"`
	} `json:"spec"`
	Status struct {
		Phase string `json:"phase"`
	} `json:"status"`
}

// apply applies manifest with kubectl-lite, trying again while the
// namespace's default ServiceAccount is missing (made a moment after the
// namespace).
func (s *storage) apply(t *testing.T, ctx context.Context, manifest string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	err := Poll(ctx, time.Second, "apply", func(ctx context.Context) (bool, string, error) {
		_, err := s.c.RunInput(ctx, []byte(manifest), filepath.Join(s.c.Root, "bin", "kubectl-lite"), "--kubeconfig", s.c.Kubeconfig, "apply", "-f", "-")
		if err != nil && strings.Contains(err.Error(), `serviceaccount "default" not found`) {
			return false, "", Retry(err)
		}
		return err == nil, "", err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (s *storage) kubectl(t *testing.T, ctx context.Context, args ...string) string {
	t.Helper()
	out, err := s.c.Kubectl(ctx, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// pods lists the namespace's live pods matching selector, by name.
func (s *storage) pods(ctx context.Context, selector string) ([]api.Pod, error) {
	var l api.List[api.Pod]
	if err := s.c.KubectlJSON(ctx, &l, "get", "pods", "-n", stNS, "-l", selector); err != nil {
		return nil, Retry(err)
	}
	sort.Slice(l.Items, func(i, j int) bool { return l.Items[i].Name < l.Items[j].Name })
	return l.Items, nil
}

// claim reads claim name; volume also reads its bound volume.
func (s *storage) claim(ctx context.Context, name string) (pvc, error) {
	var c pvc
	if err := s.c.KubectlJSON(ctx, &c, "get", "pvc", name, "-n", stNS); err != nil {
		return c, Retry(err)
	}
	return c, nil
}

func (s *storage) volume(ctx context.Context, name string) (pv, error) {
	var v pv
	if err := s.c.KubectlJSON(ctx, &v, "get", "pv", name); err != nil {
		return v, Retry(err)
	}
	return v, nil
}

// boundVolume waits until claim is Bound and returns its volume, checked
// to be a local-path volume with reclaim Delete, bound back to the claim.
func (s *storage) boundVolume(t *testing.T, ctx context.Context, claim string) pv {
	t.Helper()
	var v pv
	within(t, ctx, time.Minute, "claim "+claim+" Bound", func(ctx context.Context) (bool, string, error) {
		c, err := s.claim(ctx, claim)
		if err != nil {
			return false, "", err
		}
		if c.Status.Phase != "Bound" || c.Spec.VolumeName == "" {
			return false, fmt.Sprintf("phase %q, volumeName %q", c.Status.Phase, c.Spec.VolumeName), nil
		}
		if v, err = s.volume(ctx, c.Spec.VolumeName); err != nil {
			return false, "", err
		}
		return v.Status.Phase == "Bound", "volume phase " + v.Status.Phase, nil
	})
	if ref := v.Spec.ClaimRef; ref == nil || ref.Namespace != stNS || ref.Name != claim {
		t.Errorf("volume %s claimRef %+v, want %s/%s", v.Metadata.Name, ref, stNS, claim)
	}
	if v.Spec.StorageClassName != "local-path" || v.Spec.PersistentVolumeReclaimPolicy != "Delete" {
		t.Errorf("volume %s: class %q, reclaim policy %q; want local-path, Delete", v.Metadata.Name, v.Spec.StorageClassName, v.Spec.PersistentVolumeReclaimPolicy)
	}
	if v.path() == "" || v.node() == "" {
		t.Errorf("volume %s: path %q, node affinity %+v; want a directory pinned to one node (kubernetes.io/hostname In [node])", v.Metadata.Name, v.path(), v.Spec.NodeAffinity)
	}
	return v
}

// exec runs a shell script in a pod's container.
func (s *storage) exec(ctx context.Context, pod, script string) (string, error) {
	return s.c.Kubectl(ctx, "exec", "-n", stNS, pod, "--", "sh", "-c", script)
}

// onNode runs a shell script inside a node's container (the node's name is
// its compose service).
func (s *storage) onNode(ctx context.Context, node, script string) (string, error) {
	return s.c.Exec(ctx, node, "sh", "-c", script)
}

// volumesOfNamespace are the volumes still claimed from the scenario's
// namespace.
func (s *storage) volumesOfNamespace(ctx context.Context) ([]string, error) {
	var l struct {
		Items []pv `json:"items"`
	}
	if err := s.c.KubectlJSON(ctx, &l, "get", "pv"); err != nil {
		return nil, Retry(err)
	}
	var names []string
	for _, v := range l.Items {
		if v.Spec.ClaimRef != nil && v.Spec.ClaimRef.Namespace == stNS {
			names = append(names, v.Metadata.Name+"("+v.Status.Phase+")")
		}
	}
	return names, nil
}

// --- MySQL -----------------------------------------------------------------

// mysqlManifest is the documentation's mysql-deployment.yaml with busybox
// for mysql:8.0 (not available offline): the claim has no storageClassName,
// the Deployment strategy Recreate; the "server" notes each start in the
// table file and waits.
const mysqlManifest = `apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: mysql-pv-claim
  namespace: ` + stNS + `
  labels:
    app: wordpress
spec:
  accessModes:
    - ReadWriteOnce
  resources:
    requests:
      storage: 20Gi
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: wordpress-mysql
  namespace: ` + stNS + `
  labels:
    app: wordpress
spec:
  selector:
    matchLabels:
      app: wordpress
      tier: mysql
  strategy:
    type: Recreate
  template:
    metadata:
      labels:
        app: wordpress
        tier: mysql
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - image: minik8s/busybox:latest
        imagePullPolicy: IfNotPresent
        name: mysql
        command: ["sh", "-c", "echo \"start,$(hostname)\" >> /var/lib/mysql/wordpress.table; exec sleep 86400"]
        ports:
        - containerPort: 3306
          name: mysql
        volumeMounts:
        - name: mysql-persistent-storage
          mountPath: /var/lib/mysql
      volumes:
      - name: mysql-persistent-storage
        persistentVolumeClaim:
          claimName: mysql-pv-claim
`

// mysqlRow is the row written through the first pod.
const mysqlRow = "1,hello world,written by the first mysql pod"

func (s *storage) mysql(t *testing.T, ctx context.Context) {
	s.apply(t, ctx, mysqlManifest)
	// DefaultStorageClass admission: the class is set when the claim is
	// created, before anything binds it.
	c, err := s.claim(ctx, "mysql-pv-claim")
	if err != nil {
		t.Fatal(err)
	}
	if c.Spec.StorageClassName == nil || *c.Spec.StorageClassName != "local-path" {
		t.Errorf("claim mysql-pv-claim without a class has storageClassName %v after admission, want local-path (the default class)", c.Spec.StorageClassName)
	}

	first := s.onePod(t, ctx, "app=wordpress,tier=mysql", "")
	v := s.boundVolume(t, ctx, "mysql-pv-claim")
	if v.node() != first.Spec.NodeName {
		t.Errorf("volume %s is pinned to node %q, its pod ran on %q", v.Metadata.Name, v.node(), first.Spec.NodeName)
	}
	out, err := s.exec(ctx, first.Name, "echo '"+mysqlRow+"' >> /var/lib/mysql/wordpress.table && cat /var/lib/mysql/wordpress.table")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, mysqlRow) {
		t.Fatalf("the table after the insert:\n%s", out)
	}
	// The row is in the volume's directory on the node, not in the
	// container.
	onNode, err := s.onNode(ctx, v.node(), "cat "+v.path()+"/wordpress.table")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(onNode, mysqlRow) {
		t.Errorf("%s:%s/wordpress.table is\n%s\nwant the row", v.node(), v.path(), onNode)
	}

	s.kubectl(t, ctx, "delete", "pod", first.Name, "-n", stNS, "--wait=false")
	second := s.onePod(t, ctx, "app=wordpress,tier=mysql", string(first.UID))
	if second.Spec.NodeName != v.node() {
		t.Errorf("the replacement %s runs on %q, its volume is on %q", second.Name, second.Spec.NodeName, v.node())
	}
	out, err = s.exec(ctx, second.Name, "cat /var/lib/mysql/wordpress.table")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{mysqlRow, "start," + first.Name, "start," + second.Name} {
		if !strings.Contains(out, want) {
			t.Errorf("the replacement pod %s reads\n%s\nwant a line %q", second.Name, out, want)
		}
	}
	// The same volume, still bound.
	if again := s.boundVolume(t, ctx, "mysql-pv-claim"); again.Metadata.Name != v.Metadata.Name {
		t.Errorf("claim mysql-pv-claim moved from volume %s to %s", v.Metadata.Name, again.Metadata.Name)
	}
}

// onePod waits until selector matches exactly one pod, Running and not
// being deleted, whose UID is not notUID (the pod it replaces: with
// Recreate that one must be gone first), and returns it.
func (s *storage) onePod(t *testing.T, ctx context.Context, selector, notUID string) api.Pod {
	t.Helper()
	var got api.Pod
	within(t, ctx, 2*time.Minute, "one Running pod "+selector, func(ctx context.Context) (bool, string, error) {
		pods, err := s.pods(ctx, selector)
		if err != nil {
			return false, "", err
		}
		if len(pods) != 1 || pods[0].DeletionTimestamp != nil || !running(pods[0]) || string(pods[0].UID) == notUID {
			return false, describe(pods), nil
		}
		got = pods[0]
		return true, "", nil
	})
	return got
}

// --- StatefulSet -----------------------------------------------------------

// dbManifest is a StatefulSet of 3 with a volumeClaimTemplate of the class
// local-path. A pod writes its hostname (db-ORDINAL) into /data/ordinal
// when the volume has none yet, and notes every start in /data/starts.
// Pods start in parallel to keep the scenario short.
const dbManifest = `apiVersion: v1
kind: Service
metadata:
  name: db
  namespace: ` + stNS + `
spec:
  clusterIP: None
  selector:
    app: db
  ports:
  - port: 8080
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
  namespace: ` + stNS + `
spec:
  serviceName: db
  replicas: 3
  podManagementPolicy: Parallel
  selector:
    matchLabels:
      app: db
  template:
    metadata:
      labels:
        app: db
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: db
        image: minik8s/busybox:latest
        imagePullPolicy: IfNotPresent
        command: ["sh", "-c", "[ -f /data/ordinal ] || hostname > /data/ordinal; echo \"start,$(hostname)\" >> /data/starts; exec sleep 86400"]
        volumeMounts:
        - name: data
          mountPath: /data
  volumeClaimTemplates:
  - metadata:
      name: data
    spec:
      accessModes: ["ReadWriteOnce"]
      storageClassName: local-path
      resources:
        requests:
          storage: 1Gi
`

func (s *storage) statefulSet(t *testing.T, ctx context.Context) {
	s.apply(t, ctx, dbManifest)
	before := s.setRunning(t, ctx, nil)
	volumeNode := map[string]string{}
	for _, p := range before {
		claim := "data-" + p.Name
		v := s.boundVolume(t, ctx, claim)
		if v.node() != p.Spec.NodeName {
			t.Errorf("volume %s of %s is pinned to node %q, the pod ran on %q", v.Metadata.Name, claim, v.node(), p.Spec.NodeName)
		}
		volumeNode[p.Name] = v.node()
		s.checkOrdinal(t, ctx, p.Name, 1)
	}
	t.Logf("volumes on nodes: %v", volumeNode)

	s.kubectl(t, ctx, "delete", "pods", "-n", stNS, "-l", "app=db", "--wait=false")
	after := s.setRunning(t, ctx, before)
	for _, p := range after {
		if p.Spec.NodeName != volumeNode[p.Name] {
			t.Errorf("%s came back on node %q, its volume is on %q", p.Name, p.Spec.NodeName, volumeNode[p.Name])
		}
		s.checkOrdinal(t, ctx, p.Name, 2)
	}
	// One claim per ordinal, named CLAIMTEMPLATE-SET-ORDINAL, none more.
	var l struct {
		Items []pvc `json:"items"`
	}
	if err := s.c.KubectlJSON(ctx, &l, "get", "pvc", "-n", stNS); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range l.Items {
		if strings.HasPrefix(c.Metadata.Name, "data-") {
			names = append(names, c.Metadata.Name)
		}
	}
	sort.Strings(names)
	if want := []string{"data-db-0", "data-db-1", "data-db-2"}; !slices.Equal(names, want) {
		t.Errorf("the set's claims are %v, want %v", names, want)
	}
}

// setRunning waits until db-0..db-2 are Running, none being deleted and,
// when old is given, none of them one of old's pods; it returns them.
func (s *storage) setRunning(t *testing.T, ctx context.Context, old []api.Pod) []api.Pod {
	t.Helper()
	var got []api.Pod
	oldUIDs := map[api.UID]bool{}
	for _, p := range old {
		oldUIDs[p.UID] = true
	}
	within(t, ctx, 2*time.Minute, "StatefulSet db: db-0..db-2 Running", func(ctx context.Context) (bool, string, error) {
		pods, err := s.pods(ctx, "app=db")
		if err != nil {
			return false, "", err
		}
		var names []string
		for _, p := range pods {
			if p.DeletionTimestamp != nil || !running(p) || oldUIDs[p.UID] {
				return false, describe(pods), nil
			}
			names = append(names, p.Name)
		}
		got = pods
		return slices.Equal(names, []string{"db-0", "db-1", "db-2"}), describe(pods), nil
	})
	return got
}

// checkOrdinal: pod reads its own name from its volume, which has seen
// starts starts, all of that pod name.
func (s *storage) checkOrdinal(t *testing.T, ctx context.Context, pod string, starts int) {
	t.Helper()
	out, err := s.exec(ctx, pod, "cat /data/ordinal; echo ---; cat /data/starts")
	if err != nil {
		t.Error(err)
		return
	}
	ordinal, log, _ := strings.Cut(out, "---\n")
	if strings.TrimSpace(ordinal) != pod {
		t.Errorf("%s reads ordinal %q from its volume, want its own name", pod, strings.TrimSpace(ordinal))
	}
	want := strings.Repeat("start,"+pod+"\n", starts)
	if log != want {
		t.Errorf("%s's volume has seen the starts\n%s\nwant\n%s", pod, log, want)
	}
}

// --- ReclaimDelete ---------------------------------------------------------

const scratchManifest = `apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: scratch
  namespace: ` + stNS + `
spec:
  accessModes: ["ReadWriteOnce"]
  storageClassName: local-path
  resources:
    requests:
      storage: 100Mi
---
apiVersion: v1
kind: Pod
metadata:
  name: scratch-user
  namespace: ` + stNS + `
  labels:
    app: scratch
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: minik8s/busybox:latest
    imagePullPolicy: IfNotPresent
    command: ["sh", "-c", "echo scratch > /scratch/file; exec sleep 86400"]
    volumeMounts:
    - name: scratch
      mountPath: /scratch
  volumes:
  - name: scratch
    persistentVolumeClaim:
      claimName: scratch
`

func (s *storage) reclaimDelete(t *testing.T, ctx context.Context) {
	s.apply(t, ctx, scratchManifest)
	p := s.onePod(t, ctx, "app=scratch", "")
	v := s.boundVolume(t, ctx, "scratch")
	if v.node() != p.Spec.NodeName {
		t.Errorf("volume %s is pinned to node %q, its pod ran on %q", v.Metadata.Name, v.node(), p.Spec.NodeName)
	}
	dir := v.path()
	if !strings.HasPrefix(dir, "/var/lib/minik8s/storage/") {
		t.Errorf("volume %s's directory %q is not under the nodes' storage root /var/lib/minik8s/storage", v.Metadata.Name, dir)
	}
	within(t, ctx, 30*time.Second, "the pod's file in "+v.node()+":"+dir, func(ctx context.Context) (bool, string, error) {
		out, err := s.onNode(ctx, v.node(), "cat "+dir+"/file")
		if err != nil {
			return false, "", Retry(err)
		}
		return strings.TrimSpace(out) == "scratch", out, nil
	})

	s.kubectl(t, ctx, "delete", "pod", "scratch-user", "-n", stNS, "--grace-period=1")
	s.kubectl(t, ctx, "delete", "pvc", "scratch", "-n", stNS, "--wait=false")
	within(t, ctx, 2*time.Minute, "volume "+v.Metadata.Name+" deleted and "+v.node()+":"+dir+" removed", func(ctx context.Context) (bool, string, error) {
		out, err := s.c.Kubectl(ctx, "get", "pv", v.Metadata.Name, "--ignore-not-found", "-o", "name")
		if err != nil {
			return false, "", Retry(err)
		}
		left, err := s.onNode(ctx, v.node(), "if [ -e "+dir+" ]; then echo present; else echo absent; fi")
		if err != nil {
			return false, "", Retry(err)
		}
		return strings.TrimSpace(out) == "" && strings.TrimSpace(left) == "absent",
			fmt.Sprintf("volume: %q, directory: %s", strings.TrimSpace(out), strings.TrimSpace(left)), nil
	})
}

// --- MissingClaim ----------------------------------------------------------

const orphanManifest = `apiVersion: v1
kind: Pod
metadata:
  name: orphan
  namespace: ` + stNS + `
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: minik8s/busybox:latest
    imagePullPolicy: IfNotPresent
    volumeMounts:
    - name: data
      mountPath: /data
  volumes:
  - name: data
    persistentVolumeClaim:
      claimName: missing-claim
`

func (s *storage) missingClaim(t *testing.T, ctx context.Context) {
	s.apply(t, ctx, orphanManifest)
	// kube-scheduler's words: the PreFilter's reason replaces the per-node
	// ones (a preemption note may follow).
	want := fmt.Sprintf(`0/%d nodes are available: persistentvolumeclaim "missing-claim" not found.`, s.nodes)
	within(t, ctx, time.Minute, "pod orphan Unschedulable with a FailedScheduling event", func(ctx context.Context) (bool, string, error) {
		var p api.Pod
		if err := s.c.KubectlJSON(ctx, &p, "get", "pod", "orphan", "-n", stNS); err != nil {
			return false, "", Retry(err)
		}
		var cond *api.PodCondition
		for i := range p.Status.Conditions {
			if p.Status.Conditions[i].Type == api.PodScheduled {
				cond = &p.Status.Conditions[i]
			}
		}
		if cond == nil || cond.Status != api.ConditionFalse || cond.Reason != "Unschedulable" || !strings.HasPrefix(cond.Message, want) {
			return false, fmt.Sprintf("PodScheduled %+v", cond), nil
		}
		events, err := s.events(ctx, "orphan")
		if err != nil {
			return false, "", err
		}
		for _, e := range events {
			if e.Type == "Warning" && e.Reason == "FailedScheduling" && strings.HasPrefix(e.Message, want) {
				return true, "", nil
			}
		}
		return false, fmt.Sprintf("events of orphan: %+v", events), nil
	})
	// It stays so: no node, no container.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		var p api.Pod
		if err := s.c.KubectlJSON(ctx, &p, "get", "pod", "orphan", "-n", stNS); err != nil {
			t.Fatal(err)
		}
		if p.Spec.NodeName != "" || p.Status.Phase != api.PodPending || len(p.Status.ContainerStatuses) > 0 {
			t.Fatalf("pod orphan without its claim: node %q, phase %s, containers %+v; want Pending on no node", p.Spec.NodeName, p.Status.Phase, p.Status.ContainerStatuses)
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(time.Second):
		}
	}
	out := s.kubectl(t, ctx, "describe", "pod", "orphan", "-n", stNS)
	if !strings.Contains(out, "FailedScheduling") || !strings.Contains(out, `persistentvolumeclaim "missing-claim" not found`) {
		t.Errorf("describe pod orphan does not show the reason:\n%s", out)
	}
	s.kubectl(t, ctx, "delete", "pod", "orphan", "-n", stNS, "--wait=false")
}

// event is what the scenario reads of a core/v1 Event.
type event struct {
	InvolvedObject struct {
		Kind string `json:"kind"`
		Name string `json:"name"`
	} `json:"involvedObject"`
	Type    string `json:"type"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// events are the namespace's events about the pod name.
func (s *storage) events(ctx context.Context, pod string) ([]event, error) {
	var l struct {
		Items []event `json:"items"`
	}
	if err := s.c.KubectlJSON(ctx, &l, "get", "events", "-n", stNS); err != nil {
		return nil, Retry(err)
	}
	var out []event
	for _, e := range l.Items {
		if e.InvolvedObject.Kind == "Pod" && e.InvolvedObject.Name == pod {
			out = append(out, e)
		}
	}
	return out, nil
}

// --- BadSubPath ------------------------------------------------------------

const badSubPathPod = `{
  "apiVersion": "v1",
  "kind": "Pod",
  "metadata": {"name": "bad-subpath", "namespace": "` + stNS + `"},
  "spec": {
    "containers": [{
      "name": "main",
      "image": "minik8s/busybox:latest",
      "volumeMounts": [{"name": "data", "mountPath": "/data", "subPath": "../x"}]
    }],
    "volumes": [{"name": "data", "emptyDir": {}}]
  }
}`

func (s *storage) badSubPath(t *testing.T, ctx context.Context) {
	// kube-apiserver's validation (validateLocalDescendingPath).
	const want = `Pod "bad-subpath" is invalid: spec.containers[0].volumeMounts[0].subPath: Invalid value: "../x": must not contain '..'`
	kc, err := kubeconfig.Load(s.c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := kc.ClientConfig("")
	if err != nil {
		t.Fatal(err)
	}
	cl, err := client.New(cc)
	if err != nil {
		t.Fatal(err)
	}
	// The namespace's default ServiceAccount may not be there yet: the
	// ServiceAccount admission would refuse first, with 500.
	within(t, ctx, time.Minute, "POST of a pod with subPath ../x refused with 422", func(ctx context.Context) (bool, string, error) {
		_, err := cl.Do(ctx, client.Request{Method: "POST", Path: "/api/v1/namespaces/" + stNS + "/pods", Body: []byte(badSubPathPod)})
		var se *apierrors.StatusError
		if !errors.As(err, &se) {
			return false, "", fmt.Errorf("the pod was accepted or the request failed: %v", err)
		}
		st := se.Status()
		if st.Code != 422 && strings.Contains(st.Message, "serviceaccount") {
			return false, "", Retry(err)
		}
		if st.Code != 422 || st.Reason != api.StatusReasonInvalid || st.Message != want {
			return false, "", fmt.Errorf("refused with %d %s %q, want 422 Invalid %q", st.Code, st.Reason, st.Message, want)
		}
		return true, "", nil
	})
	// kubectl-lite prints kube's message.
	_, err = s.c.RunInput(ctx, []byte(badSubPathPod), filepath.Join(s.c.Root, "bin", "kubectl-lite"), "--kubeconfig", s.c.Kubeconfig, "create", "-f", "-")
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("kubectl-lite create of the pod: %v, want the message %q", err, want)
	}
	out := s.kubectl(t, ctx, "get", "pod", "bad-subpath", "-n", stNS, "--ignore-not-found", "-o", "name")
	if strings.TrimSpace(out) != "" {
		t.Errorf("a refused pod exists: %s", out)
	}
}

// diagnose logs what a failed part needs to be understood.
func (s *storage) diagnose(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, args := range [][]string{
		{"get", "nodes", "-o", "wide"},
		{"get", "pods,pvc,statefulsets,deployments", "-n", stNS, "-o", "wide"},
		{"get", "pv,storageclass"},
		{"get", "pods", "-n", "kube-system", "-o", "wide"},
		{"get", "events", "-n", stNS},
	} {
		out, err := s.c.Kubectl(ctx, args...)
		if err != nil {
			out += err.Error()
		}
		t.Logf("kubectl-lite %s:\n%s", strings.Join(args, " "), out)
	}
	for _, svc := range []string{"controller-manager", "scheduler"} {
		t.Logf("last log lines of %s:\n%s", svc, s.c.Logs(ctx, svc, 40))
	}
	for _, node := range []string{"node-1", "node-2"} {
		out, err := s.onNode(ctx, node, "ls -la /var/lib/minik8s/storage")
		if err != nil {
			out += err.Error()
		}
		t.Logf("%s: ls -la /var/lib/minik8s/storage:\n%s", node, out)
	}
}
