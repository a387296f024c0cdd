package operator

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"mime"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
	cmapp "github.com/minik8s/minik8s/controller-manager/app"
	"github.com/minik8s/minik8s/internal/oracle"
)

const (
	operatorNS  = "memcached-operator-system"
	operatorSA  = "memcached-operator-controller-manager"
	leaseName   = "memcached-operator.cache.example.com"
	workloadNS  = "demo"
	defaultImg  = "memcached:1.6.26-alpine3.19"
	controlName = "memcached"
)

// TestOperator runs a controller-runtime operator as its author would ship
// it (a ServiceAccount's token in a kubeconfig, kubebuilder's RBAC, leader
// election, secure metrics behind TokenReview and SubjectAccessReview)
// against minik8s' apiserver over TLS, with minik8s' controller-manager
// running the garbage collector, deployment and replicaset controllers.
// Two replicas of the operator run: one leads, the other takes over when
// the leader steps down.
func TestOperator(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts an apiserver and a controller-manager (skipped with -short)")
	}
	logs := captureLogs(t)
	s := apiservertest.Start(t, apiservertest.WithTLS)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// The controller-manager with its own kubeconfig, as a cluster runs it.
	cmOpts := cmapp.DefaultOptions()
	cmOpts.Client.Kubeconfig = s.PKI().Path("controller-manager.kubeconfig")
	cmOpts.Controllers = []string{"garbagecollector", "deployment", "replicaset"}
	cmOpts.Serving.SecurePort = 0
	runUntilCleanup(t, "controller-manager", func(ctx context.Context) error {
		return cmapp.Run(ctx, cmOpts, logs.slog)
	})

	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	adminCfg, err := clientcmd.BuildConfigFromFlags("", s.Options.WriteKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := client.New(adminCfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	adminCS := kubernetes.NewForConfigOrDie(adminCfg)

	// What `make deploy` of a kubebuilder project creates: the CRD, the
	// namespace, the ServiceAccount and its RBAC.
	crd := &apiextensionsv1.CustomResourceDefinition{}
	readYAML(t, "testdata/memcached-crd.yaml", crd)
	must(t, "create CRD", admin.Create(ctx, crd))
	eventually(t, 20*time.Second, "the CRD to be Established", func() error {
		if err := admin.Get(ctx, client.ObjectKeyFromObject(crd), crd); err != nil {
			return err
		}
		for _, c := range crd.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("conditions %+v", crd.Status.Conditions)
	})
	for _, ns := range []string{operatorNS, workloadNS} {
		must(t, "create namespace", admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	}
	createRBAC(ctx, t, admin)
	kubeconfig := serviceAccountKubeconfig(ctx, t, adminCS, adminCfg, operatorNS, operatorSA)

	// The operator reads KUBECONFIG as ctrl.GetConfig does for a binary
	// run outside the cluster.
	t.Setenv("KUBECONFIG", kubeconfig)
	opCfg, err := config.GetConfig()
	if err != nil {
		t.Fatal(err)
	}
	if opCfg.ContentType != "" {
		t.Fatalf("the operator's config sets content type %q; the test wants controller-runtime's defaults", opCfg.ContentType)
	}
	wire := &wireLog{}
	opCfg.Wrap(wire.wrap)
	metricsAddr, probeAddr := freeAddr(t), freeAddr(t)
	leader := startOperator(t, opCfg, scheme, metricsAddr, probeAddr, logs)
	select {
	case <-leader.mgr.Elected():
	case <-time.After(30 * time.Second):
		t.Fatal("the first operator was not elected leader in 30s")
	}
	lease := &coordinationv1.Lease{}
	must(t, "get lease", admin.Get(ctx, types.NamespacedName{Namespace: operatorNS, Name: leaseName}, lease))
	firstHolder := ptr.Deref(lease.Spec.HolderIdentity, "")
	if firstHolder == "" || ptr.Deref(lease.Spec.LeaseDurationSeconds, 0) != 15 {
		t.Fatalf("lease after election: holder %q, duration %v", firstHolder, lease.Spec.LeaseDurationSeconds)
	}
	standby := startOperator(t, opCfg, scheme, "0", "0", logs)

	t.Run("create", func(t *testing.T) {
		mc := &Memcached{ObjectMeta: metav1.ObjectMeta{Name: "cache", Namespace: workloadNS}, Spec: MemcachedSpec{Size: 2}}
		must(t, "create memcached", admin.Create(ctx, mc))
		if mc.Spec.Image != defaultImg || mc.Spec.Port != 11211 {
			t.Errorf("schema defaults not applied: %+v", mc.Spec)
		}
		dep := waitDeployment(ctx, t, admin, "cache", func(d *appsv1.Deployment) error {
			return checkDeployment(d, mc, 2, defaultImg)
		})
		// The deployment and replicaset controllers make two pods; the
		// Deployment's status change reaches the operator through Owns.
		waitStatus(ctx, t, admin, "cache", func(m *Memcached) error {
			c := meta.FindStatusCondition(m.Status.Conditions, ConditionAvailable)
			switch {
			case m.Generation != 1 || len(m.Finalizers) != 1 || m.Finalizers[0] != Finalizer:
				// Metadata (the finalizer) and status writes leave a
				// custom object's generation alone.
				return fmt.Errorf("generation %d, finalizers %q", m.Generation, m.Finalizers)
			case m.Status.ObservedGeneration != m.Generation:
				return fmt.Errorf("observedGeneration %d, generation %d", m.Status.ObservedGeneration, m.Generation)
			case m.Status.Replicas != 2:
				return fmt.Errorf("status.replicas %d", m.Status.Replicas)
			case m.Status.Selector != "app.kubernetes.io/instance=cache,app.kubernetes.io/name=memcached":
				return fmt.Errorf("status.selector %q", m.Status.Selector)
			case c == nil || c.Status != metav1.ConditionFalse || c.Reason != "Progressing" || c.ObservedGeneration != m.Generation:
				// No kubelet here: the pods never become available.
				return fmt.Errorf("condition %+v", c)
			}
			return nil
		})
		// The ConfigMap, server-side applied.
		eventually(t, 10*time.Second, "configmap cache-config", func() error {
			cm := &corev1.ConfigMap{}
			if err := admin.Get(ctx, types.NamespacedName{Namespace: workloadNS, Name: "cache-config"}, cm); err != nil {
				return err
			}
			if ref := metav1.GetControllerOf(cm); ref == nil || ref.UID != mc.UID || ref.Kind != "Memcached" {
				return fmt.Errorf("controller reference %+v", ref)
			}
			if cm.Data["memcached.conf"] != "--port=11211\n--memory-limit=64\n" {
				return fmt.Errorf("data %q", cm.Data)
			}
			if len(cm.ManagedFields) != 1 || cm.ManagedFields[0].Manager != FieldManager || cm.ManagedFields[0].Operation != metav1.ManagedFieldsOperationApply {
				return fmt.Errorf("managedFields %+v", cm.ManagedFields)
			}
			return nil
		})
		// The event the operator wrote through events.k8s.io/v1.
		eventually(t, 10*time.Second, "the DeploymentCreated event", func() error {
			var evs eventsv1.EventList
			if err := admin.List(ctx, &evs, client.InNamespace(workloadNS)); err != nil {
				return err
			}
			for _, e := range evs.Items {
				if e.Reason == "DeploymentCreated" && e.Regarding.Kind == "Memcached" && e.Regarding.Name == "cache" &&
					e.Related != nil && e.Related.Name == dep.Name && e.ReportingController == controlName {
					return nil
				}
			}
			return fmt.Errorf("%d events, none DeploymentCreated", len(evs.Items))
		})
	})

	t.Run("update spec", func(t *testing.T) {
		patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"image":"memcached:1.6.27"}}`))
		mc := &Memcached{ObjectMeta: metav1.ObjectMeta{Name: "cache", Namespace: workloadNS}}
		must(t, "patch memcached", admin.Patch(ctx, mc, patch))
		waitDeployment(ctx, t, admin, "cache", func(d *appsv1.Deployment) error {
			return checkDeployment(d, mc, 2, "memcached:1.6.27")
		})
		waitStatus(ctx, t, admin, "cache", func(m *Memcached) error {
			if m.Status.ObservedGeneration != m.Generation {
				return fmt.Errorf("observedGeneration %d, generation %d", m.Status.ObservedGeneration, m.Generation)
			}
			return nil
		})
	})

	t.Run("scale subresource", func(t *testing.T) {
		// What `kubectl scale memcached/cache --replicas=3` does.
		mc := &Memcached{ObjectMeta: metav1.ObjectMeta{Name: "cache", Namespace: workloadNS}}
		scale := &autoscalingv1.Scale{}
		must(t, "get scale", admin.SubResource("scale").Get(ctx, mc, scale))
		cur := &Memcached{}
		must(t, "get memcached", admin.Get(ctx, client.ObjectKeyFromObject(mc), cur))
		if scale.Spec.Replicas != 2 || scale.Status.Replicas != cur.Status.Replicas || scale.Status.Selector != "app.kubernetes.io/instance=cache,app.kubernetes.io/name=memcached" {
			t.Fatalf("scale = %+v", scale)
		}
		// The operator's status writes race with this read-modify-write:
		// a stale resourceVersion is a conflict, and the client retries.
		must(t, "update scale", retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := admin.SubResource("scale").Get(ctx, mc, scale); err != nil {
				return err
			}
			scale.Spec.Replicas = 3
			return admin.SubResource("scale").Update(ctx, mc, client.WithSubResourceBody(scale))
		}))
		must(t, "get memcached", admin.Get(ctx, client.ObjectKeyFromObject(mc), mc))
		waitDeployment(ctx, t, admin, "cache", func(d *appsv1.Deployment) error {
			return checkDeployment(d, mc, 3, "memcached:1.6.27")
		})
		// status.replicas (the scale's) follows the Deployment's, which
		// counts the pods of both ReplicaSets of the image change's rollout
		// (that never finishes: no kubelet runs the pods).
		waitStatus(ctx, t, admin, "cache", func(m *Memcached) error {
			d := &appsv1.Deployment{}
			if err := admin.Get(ctx, client.ObjectKeyFromObject(m), d); err != nil {
				return err
			}
			if d.Status.Replicas < 3 || m.Status.Replicas != d.Status.Replicas {
				return fmt.Errorf("status.replicas %d, the deployment's %d", m.Status.Replicas, d.Status.Replicas)
			}
			return nil
		})
		must(t, "get scale", admin.SubResource("scale").Get(ctx, mc, scale))
		if scale.Spec.Replicas != 3 || scale.Status.Replicas < 3 {
			t.Errorf("scale after update = %+v", scale)
		}
	})

	t.Run("owned objects deleted", func(t *testing.T) {
		old := &appsv1.Deployment{}
		must(t, "get deployment", admin.Get(ctx, types.NamespacedName{Namespace: workloadNS, Name: "cache"}, old))
		must(t, "delete deployment", admin.Delete(ctx, old))
		mc := &Memcached{}
		must(t, "get memcached", admin.Get(ctx, types.NamespacedName{Namespace: workloadNS, Name: "cache"}, mc))
		waitDeployment(ctx, t, admin, "cache", func(d *appsv1.Deployment) error {
			if d.UID == old.UID {
				return fmt.Errorf("still the old deployment")
			}
			return checkDeployment(d, mc, 3, "memcached:1.6.27")
		})
		// The ConfigMap's deletion reaches the operator through its
		// metadata-only informer.
		oldCM := &corev1.ConfigMap{}
		must(t, "get configmap", admin.Get(ctx, types.NamespacedName{Namespace: workloadNS, Name: "cache-config"}, oldCM))
		must(t, "delete configmap", admin.Delete(ctx, oldCM))
		eventually(t, 20*time.Second, "configmap cache-config again", func() error {
			cm := &corev1.ConfigMap{}
			if err := admin.Get(ctx, types.NamespacedName{Namespace: workloadNS, Name: "cache-config"}, cm); err != nil {
				return err
			}
			if cm.UID == oldCM.UID {
				return fmt.Errorf("still the old configmap")
			}
			return nil
		})
	})

	t.Run("metrics and probes", func(t *testing.T) {
		for _, path := range []string{"/healthz", "/readyz"} {
			code, body := get(t, "http://"+probeAddr+path, "")
			if code != http.StatusOK || body != "ok" {
				t.Errorf("GET %s = %d %q", path, code, body)
			}
		}
		url := "https://" + metricsAddr + "/metrics"
		if code, _ := get(t, url, ""); code != http.StatusUnauthorized {
			t.Errorf("metrics without a token = %d, want 401", code)
		}
		// The operator's own token authenticates but may not read /metrics.
		opToken := token(ctx, t, adminCS, operatorNS, operatorSA)
		if code, body := get(t, url, opToken); code != http.StatusForbidden {
			t.Errorf("metrics with a token lacking the metrics-reader role = %d %q, want 403", code, body)
		}
		code, body := get(t, url, token(ctx, t, adminCS, operatorNS, "prometheus"))
		if code != http.StatusOK {
			t.Fatalf("metrics as prometheus = %d %q", code, body)
		}
		for _, want := range []string{
			`controller_runtime_reconcile_total{controller="memcached",result="success"}`,
			`workqueue_adds_total{controller="memcached",name="memcached"}`,
			// Both replicas share the process's registry: the value is the
			// standby's or the leader's.
			`leader_election_master_status{name="` + leaseName + `"}`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("metrics lack %s", want)
			}
		}
	})

	t.Run("leader hand-over", func(t *testing.T) {
		select {
		case <-standby.mgr.Elected():
			t.Fatal("the standby operator was elected while the leader runs")
		default:
		}
		leader.stop(t)
		select {
		case <-standby.mgr.Elected():
		case <-time.After(30 * time.Second):
			t.Fatal("the standby operator was not elected in 30s after the leader stepped down")
		}
		must(t, "get lease", admin.Get(ctx, types.NamespacedName{Namespace: operatorNS, Name: leaseName}, lease))
		if h := ptr.Deref(lease.Spec.HolderIdentity, ""); h == "" || h == firstHolder || ptr.Deref(lease.Spec.LeaseTransitions, 0) < 1 {
			t.Errorf("lease after hand-over: holder %q (first %q), transitions %v", h, firstHolder, lease.Spec.LeaseTransitions)
		}
		mc := &Memcached{ObjectMeta: metav1.ObjectMeta{Name: "cache", Namespace: workloadNS}}
		must(t, "patch memcached", admin.Patch(ctx, mc, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"size":1}}`))))
		waitDeployment(ctx, t, admin, "cache", func(d *appsv1.Deployment) error {
			return checkDeployment(d, mc, 1, "memcached:1.6.27")
		})
	})

	t.Run("kubectl", func(t *testing.T) {
		// The real kubectl, as the cluster's admin: the CRD's printer
		// columns, and `kubectl scale` (a merge patch of the scale
		// subresource) that the operator carries to the Deployment.
		kubectl := func(args ...string) string {
			t.Helper()
			cctx, ccancel := context.WithTimeout(ctx, time.Minute)
			defer ccancel()
			out, err := exec.CommandContext(cctx, oracle.Path(t, "kubectl"), append([]string{"--kubeconfig", s.Options.WriteKubeconfig, "-n", workloadNS}, args...)...).CombinedOutput()
			if err != nil {
				t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
			}
			return string(out)
		}
		if out := kubectl("scale", "memcached/cache", "--replicas=2"); out != "memcached.cache.example.com/cache scaled\n" {
			t.Errorf("kubectl scale: %q", out)
		}
		mc := &Memcached{}
		must(t, "get memcached", admin.Get(ctx, types.NamespacedName{Namespace: workloadNS, Name: "cache"}, mc))
		waitDeployment(ctx, t, admin, "cache", func(d *appsv1.Deployment) error {
			return checkDeployment(d, mc, 2, "memcached:1.6.27")
		})
		out := kubectl("get", "memcacheds")
		if lines := strings.Split(out, "\n"); len(lines) != 3 || lines[0] != "NAME    SIZE   AVAILABLE   AGE" || !strings.HasPrefix(lines[1], "cache   2      False       ") {
			t.Errorf("kubectl get memcacheds:\n%s", out)
		}
	})

	t.Run("delete", func(t *testing.T) {
		mc := &Memcached{}
		must(t, "get memcached", admin.Get(ctx, types.NamespacedName{Namespace: workloadNS, Name: "cache"}, mc))
		dep := &appsv1.Deployment{}
		must(t, "get deployment", admin.Get(ctx, types.NamespacedName{Namespace: workloadNS, Name: "cache"}, dep))
		must(t, "delete memcached", admin.Delete(ctx, mc))
		// The operator removes its finalizer; the object goes.
		eventually(t, 20*time.Second, "the memcached to go", func() error {
			err := admin.Get(ctx, client.ObjectKeyFromObject(mc), &Memcached{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("memcached still there (%v)", err)
		})
		// Background propagation: the garbage collector deletes the
		// Deployment and ConfigMap, then the ReplicaSets and pods.
		for _, obj := range []client.Object{&appsv1.Deployment{}, &corev1.ConfigMap{}} {
			name := "cache"
			if _, ok := obj.(*corev1.ConfigMap); ok {
				name = "cache-config"
			}
			eventually(t, 30*time.Second, fmt.Sprintf("the garbage collector to delete %T %s", obj, name), func() error {
				err := admin.Get(ctx, types.NamespacedName{Namespace: workloadNS, Name: name}, obj)
				if apierrors.IsNotFound(err) {
					return nil
				}
				return fmt.Errorf("still there (%v)", err)
			})
		}
		eventually(t, 30*time.Second, "the garbage collector to delete the pods", func() error {
			var pods corev1.PodList
			if err := admin.List(ctx, &pods, client.InNamespace(workloadNS)); err != nil {
				return err
			}
			if len(pods.Items) != 0 {
				return fmt.Errorf("%d pods left", len(pods.Items))
			}
			return nil
		})
	})
	if t.Failed() {
		return
	}
	// What went over the wire: protobuf for built-in kinds, JSON for the
	// custom resource, an apply patch for the ConfigMap, informers' lists
	// streamed as watches, and no request refused for its form.
	for _, w := range []struct{ call, req, resp string }{
		{"GET apps/deployments watch-list", "", protobuf},
		{"POST apps/deployments", protobuf, protobuf},
		{"PUT apps/deployments", protobuf, protobuf},
		{"GET configmaps watch-list", " (accept " + protobuf + ";as=PartialObjectMetadata)", protobuf},
		{"PATCH configmaps", "application/apply-patch+yaml", "application/json"},
		{"GET cache.example.com/memcacheds watch-list", "", "application/json"},
		{"PUT cache.example.com/memcacheds", "application/json", "application/json"},
		{"PUT cache.example.com/memcacheds/status", "application/json", "application/json"},
		{"POST coordination.k8s.io/leases", protobuf, protobuf},
		{"PUT coordination.k8s.io/leases", protobuf, protobuf},
		{"POST events.k8s.io/events", protobuf, protobuf},
		// The metrics filter's clients speak JSON.
		{"POST authentication.k8s.io/tokenreviews", "application/json", "application/json"},
		{"POST authorization.k8s.io/subjectaccessreviews", "application/json", "application/json"},
	} {
		if got := wire.seen(w.call); !got[w.req+" -> "+w.resp] || len(got) != 1 {
			t.Errorf("%s: sent and answered %v, want %s -> %s", w.call, keys(got), w.req, w.resp)
		}
	}
	if bad := wire.refused(); len(bad) > 0 {
		t.Errorf("requests refused: %v", bad)
	}
	if errs := logs.errors(); len(errs) > 0 {
		t.Errorf("the operator or controller-manager logged errors:\n%s", strings.Join(errs, "\n"))
	}
}

const protobuf = "application/vnd.kubernetes.protobuf"

// wireLog records, per call ("METHOD resource[/subresource][ watch]"), the
// content types of the operator's requests and the apiserver's answers,
// and the answers that refused a request for its form.
type wireLog struct {
	mu    sync.Mutex
	calls map[string]map[string]bool
	bad   []string
}

func (w *wireLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err != nil {
			return resp, err
		}
		call := req.Method + " " + resourceOf(req.URL.Path)
		if q := req.URL.Query(); q.Get("watch") == "true" && q.Get("sendInitialEvents") == "true" {
			call += " watch-list" // a list streamed as a watch (client-go's WatchListClient)
		} else if q.Get("watch") == "true" {
			call += " watch"
		}
		// The media type, and what a client asked to have it as
		// (PartialObjectMetadata, Table).
		media := func(v string) string {
			mt, params, _ := mime.ParseMediaType(v)
			if params["as"] != "" {
				mt += ";as=" + params["as"]
			}
			return mt
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.calls == nil {
			w.calls = map[string]map[string]bool{}
		}
		if w.calls[call] == nil {
			w.calls[call] = map[string]bool{}
		}
		sent := media(req.Header.Get("Content-Type"))
		if accept, _, _ := strings.Cut(req.Header.Get("Accept"), ","); strings.Contains(accept, "as=") {
			sent += " (accept " + media(accept) + ")"
		}
		w.calls[call][sent+" -> "+media(resp.Header.Get("Content-Type"))] = true
		switch resp.StatusCode {
		case http.StatusBadRequest, http.StatusNotAcceptable, http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity, http.StatusInternalServerError:
			w.bad = append(w.bad, fmt.Sprintf("%s %s: %d", req.Method, req.URL, resp.StatusCode))
		}
		return resp, nil
	})
}

func (w *wireLog) seen(call string) map[string]bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.calls[call])
}

func (w *wireLog) refused() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.bad)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// resourceOf names the group, resource and subresource of an API path
// ("apps/deployments", "configmaps", "cache.example.com/memcacheds/status").
func resourceOf(path string) (name string) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) > 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) > 3 && parts[0] == "apis":
		group := parts[1]
		defer func() { name = group + "/" + name }()
		parts = parts[3:]
	default:
		return path
	}
	if len(parts) > 2 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	if len(parts) == 3 {
		return parts[0] + "/" + parts[2]
	}
	return parts[0]
}

func keys(m map[string]bool) []string { return slices.Sorted(maps.Keys(m)) }

// operator is one running replica of the operator.
type operator struct {
	mgr    ctrl.Manager
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
}

// startOperator builds the manager as kubebuilder's cmd/main.go does; its
// metrics and probes are served on the given addresses ("0": off).
func startOperator(t *testing.T, cfg *rest.Config, scheme *runtime.Scheme, metricsAddr, probeAddr string, logs *logCapture) *operator {
	t.Helper()
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: scheme,
		// Only the Deployments this operator manages are cached, as
		// operators in busy clusters do.
		Cache: cache.Options{ByObject: map[client.Object]cache.ByObject{
			&appsv1.Deployment{}: {Label: labels.SelectorFromSet(labels.Set{"app.kubernetes.io/managed-by": "memcached-operator"})},
		}},
		Metrics: metricsserver.Options{
			BindAddress:    metricsAddr,
			SecureServing:  true,
			FilterProvider: filters.WithAuthenticationAndAuthorization,
			CertDir:        t.TempDir(),
		},
		HealthProbeBindAddress:        probeAddr,
		LeaderElection:                true,
		LeaderElectionID:              leaseName,
		LeaderElectionNamespace:       operatorNS,
		LeaderElectionReleaseOnCancel: true,
		// Two replicas run in one test process.
		Controller: ctrlconfig.Controller{SkipNameValidation: ptr.To(true)},
		Logger:     logs.logr,
	})
	if err != nil {
		t.Fatalf("new manager: %v", err)
	}
	r := &Reconciler{Client: mgr.GetClient(), Scheme: mgr.GetScheme(), Recorder: mgr.GetEventRecorder(controlName)}
	if err := r.SetupWithManager(mgr, controlName); err != nil {
		t.Fatalf("setup controller: %v", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		t.Fatal(err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	op := &operator{mgr: mgr, cancel: cancel, done: make(chan error, 1)}
	go func() { op.done <- mgr.Start(ctx) }()
	t.Cleanup(func() { op.stop(t) })
	return op
}

// stop cancels the manager and waits for it (it steps down first).
func (o *operator) stop(t *testing.T) {
	o.once.Do(func() {
		o.cancel()
		select {
		case err := <-o.done:
			if err != nil {
				t.Errorf("manager returned: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("manager did not stop in 30s")
		}
	})
}

// createRBAC makes kubebuilder's config/rbac for the operator's
// ServiceAccount (manager role, leader-election role in its namespace,
// metrics-auth role) and a "prometheus" ServiceAccount with the
// metrics-reader role.
func createRBAC(ctx context.Context, t *testing.T, c client.Client) {
	t.Helper()
	all := []string{"create", "delete", "get", "list", "patch", "update", "watch"}
	objs := []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: operatorSA, Namespace: operatorNS}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "prometheus", Namespace: operatorNS}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "memcached-operator-manager-role"}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"cache.example.com"}, Resources: []string{"memcacheds"}, Verbs: all},
			{APIGroups: []string{"cache.example.com"}, Resources: []string{"memcacheds/finalizers"}, Verbs: []string{"update"}},
			{APIGroups: []string{"cache.example.com"}, Resources: []string{"memcacheds/status"}, Verbs: []string{"get", "patch", "update"}},
			{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: all},
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: all},
			{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
		}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "memcached-operator-manager-rolebinding"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "memcached-operator-manager-role"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: operatorSA, Namespace: operatorNS}}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "memcached-operator-leader-election-role", Namespace: operatorNS}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: all},
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: all},
			{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
		}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "memcached-operator-leader-election-rolebinding", Namespace: operatorNS},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "memcached-operator-leader-election-role"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: operatorSA, Namespace: operatorNS}}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "memcached-operator-metrics-auth-role"}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}, Verbs: []string{"create"}},
			{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"subjectaccessreviews"}, Verbs: []string{"create"}},
		}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "memcached-operator-metrics-auth-rolebinding"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "memcached-operator-metrics-auth-role"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: operatorSA, Namespace: operatorNS}}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "memcached-operator-metrics-reader"}, Rules: []rbacv1.PolicyRule{
			{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}},
		}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "prometheus-metrics-reader"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "memcached-operator-metrics-reader"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "prometheus", Namespace: operatorNS}}},
	}
	for _, o := range objs {
		must(t, "create "+o.GetName(), c.Create(ctx, o))
	}
}

// serviceAccountKubeconfig writes a kubeconfig holding a token of the
// ServiceAccount and the cluster's CA, as `kubectl create token` and
// `kubectl config set-credentials --token` would.
func serviceAccountKubeconfig(ctx context.Context, t *testing.T, cs kubernetes.Interface, admin *rest.Config, ns, sa string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["minik8s"] = &clientcmdapi.Cluster{Server: admin.Host, CertificateAuthorityData: admin.CAData}
	cfg.AuthInfos[sa] = &clientcmdapi.AuthInfo{Token: token(ctx, t, cs, ns, sa)}
	cfg.Contexts[sa] = &clientcmdapi.Context{Cluster: "minik8s", AuthInfo: sa, Namespace: ns}
	cfg.CurrentContext = sa
	path := filepath.Join(t.TempDir(), "operator.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func token(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, sa string) string {
	t.Helper()
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token for %s/%s: %v", ns, sa, err)
	}
	return tr.Status.Token
}

// checkDeployment compares the owned Deployment with what the operator
// should have made of mc.
func checkDeployment(d *appsv1.Deployment, mc *Memcached, size int32, image string) error {
	ref := metav1.GetControllerOf(d)
	switch {
	case ref == nil || ref.APIVersion != "cache.example.com/v1alpha1" || ref.Kind != "Memcached" || ref.Name != mc.Name ||
		ref.UID != mc.UID || !ptr.Deref(ref.BlockOwnerDeletion, false):
		return fmt.Errorf("controller reference %+v", ref)
	case ptr.Deref(d.Spec.Replicas, -1) != size:
		return fmt.Errorf("replicas %v, want %d", ptr.Deref(d.Spec.Replicas, -1), size)
	case len(d.Spec.Template.Spec.Containers) != 1:
		return fmt.Errorf("%d containers", len(d.Spec.Template.Spec.Containers))
	}
	c := d.Spec.Template.Spec.Containers[0]
	if c.Image != image || len(c.Ports) != 1 || c.Ports[0].ContainerPort != 11211 || c.Command[1] != "--port=11211" {
		return fmt.Errorf("container %+v", c)
	}
	return nil
}

func waitDeployment(ctx context.Context, t *testing.T, c client.Client, name string, check func(*appsv1.Deployment) error) *appsv1.Deployment {
	t.Helper()
	d := &appsv1.Deployment{}
	eventually(t, 20*time.Second, "deployment "+name, func() error {
		if err := c.Get(ctx, types.NamespacedName{Namespace: workloadNS, Name: name}, d); err != nil {
			return err
		}
		return check(d)
	})
	return d
}

func waitStatus(ctx context.Context, t *testing.T, c client.Client, name string, check func(*Memcached) error) {
	t.Helper()
	eventually(t, 20*time.Second, "status of memcached "+name, func() error {
		m := &Memcached{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: workloadNS, Name: name}, m); err != nil {
			return err
		}
		return check(m)
	})
}

// get fetches url (TLS unverified: the metrics server's certificate is
// self-signed, as Prometheus' insecure_skip_verify in kubebuilder's
// ServiceMonitor) with an optional bearer token.
func get(t *testing.T, url, bearer string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	var resp *http.Response
	var err error
	eventually(t, 10*time.Second, "GET "+url, func() error {
		resp, err = hc.Do(req)
		return err
	})
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// freeAddr returns a loopback address whose port was free a moment ago
// (controller-runtime binds its servers itself).
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func runUntilCleanup(t *testing.T, what string, run func(context.Context) error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s returned: %v", what, err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("%s did not stop in 30s", what)
		}
	})
}

func eventually(t *testing.T, timeout time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s: %v", timeout, what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// logCapture keeps the operator's, client-go's and the controller-manager's
// logs in memory, prints them when the test fails (or always with
// MINIK8S_TEST_LOG set), and collects error-level records.
type logCapture struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	errs []string
	slog *slog.Logger
	logr logr.Logger
}

func captureLogs(t *testing.T) *logCapture {
	lc := &logCapture{}
	h := slog.NewTextHandler(lockedWriter{lc}, &slog.HandlerOptions{Level: slog.LevelDebug})
	lc.slog = slog.New(errorRecorder{Handler: h, lc: lc})
	lc.logr = logr.FromSlogHandler(lc.slog.Handler())
	ctrl.SetLogger(lc.logr)
	klog.SetLogger(lc.logr)
	t.Cleanup(func() {
		if t.Failed() || os.Getenv("MINIK8S_TEST_LOG") != "" {
			lc.mu.Lock()
			t.Logf("logs:\n%s", lc.buf.String())
			lc.mu.Unlock()
		}
	})
	return lc
}

func (lc *logCapture) errors() []string {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	return append([]string(nil), lc.errs...)
}

type lockedWriter struct{ lc *logCapture }

func (w lockedWriter) Write(p []byte) (int, error) {
	w.lc.mu.Lock()
	defer w.lc.mu.Unlock()
	return w.lc.buf.Write(p)
}

// errorRecorder notes every error-level record.
type errorRecorder struct {
	slog.Handler
	lc *logCapture
}

func (h errorRecorder) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError && !expectedError(r) {
		var b strings.Builder
		b.WriteString(r.Message)
		r.Attrs(func(a slog.Attr) bool {
			fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
			return true
		})
		h.lc.mu.Lock()
		h.lc.errs = append(h.lc.errs, b.String())
		h.lc.mu.Unlock()
	}
	return h.Handler.Handle(ctx, r)
}

func (h errorRecorder) WithAttrs(as []slog.Attr) slog.Handler {
	return errorRecorder{Handler: h.Handler.WithAttrs(as), lc: h.lc}
}

func (h errorRecorder) WithGroup(name string) slog.Handler {
	return errorRecorder{Handler: h.Handler.WithGroup(name), lc: h.lc}
}

// expectedError tells the error records every controller-runtime operator
// logs in normal operation: a write from a stale cache is a conflict, or
// finds the object already deleted (both requeued); a replica that stops
// ends its requests in flight and reports the lost election.
func expectedError(r slog.Record) bool {
	expected := false
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "err" {
			err := a.Value.String()
			expected = strings.Contains(err, "the object has been modified; please apply your changes to the latest version and try again") ||
				r.Message == "Reconciler error" && strings.HasSuffix(err, `"cache" not found`) ||
				strings.HasSuffix(err, "context canceled") ||
				r.Message == "error received after stop sequence was engaged" && err == "leader election lost"
		}
		return true
	})
	return expected
}
