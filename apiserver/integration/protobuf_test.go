package integration

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"sigs.k8s.io/yaml"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
)

const protobufType = "application/vnd.kubernetes.protobuf"

// exchange is one request client-go made and the answer's encoding.
type exchange struct {
	method, path, query     string
	requestType, answerType string
	code                    int
}

// wireRecorder records every exchange of a client, to check what went
// over the wire rather than what the client made of it.
type wireRecorder struct {
	mu        sync.Mutex
	exchanges []exchange
}

func (w *wireRecorder) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err == nil {
			w.mu.Lock()
			w.exchanges = append(w.exchanges, exchange{method: req.Method, path: req.URL.Path, query: req.URL.RawQuery,
				requestType: req.Header.Get("Content-Type"), answerType: resp.Header.Get("Content-Type"), code: resp.StatusCode})
			w.mu.Unlock()
		}
		return resp, err
	})
}

func (w *wireRecorder) all() []exchange {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]exchange(nil), w.exchanges...)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestClientGoProtobuf drives the apiserver with client-go's typed
// clientset at its default settings, which speak protobuf for built-in
// kinds, and checks on the wire that every body and every answer was
// protobuf: CRUD and status of pods (and their binding), deployments
// (and their scale), configmaps, nodes, leases, events and namespaces,
// an informer's list and watch, and errors as Status.
func TestClientGoProtobuf(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	rec := &wireRecorder{}
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: s.URL(), QPS: 100, Burst: 200, WrapTransport: rec.wrap})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const ns = "pb"

	// kubectl create namespace sends this.
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace: %v", err)
	}

	// An informer: list, then watch, both in protobuf.
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	seen := make(chan string, 100)
	informer := factory.Core().V1().Pods().Informer()
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { seen <- "add " + obj.(*corev1.Pod).Name },
		UpdateFunc: func(_, obj any) {
			p := obj.(*corev1.Pod)
			seen <- "update " + p.Name + " " + p.Spec.NodeName + " " + string(p.Status.Phase)
		},
		DeleteFunc: func(obj any) {
			if p, ok := obj.(*corev1.Pod); ok {
				seen <- "delete " + p.Name
			}
		},
	}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	factory.Start(stop)
	defer factory.Shutdown()
	defer close(stop)
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		t.Fatal("pod informer did not sync")
	}
	expectSeen := func(want string) {
		t.Helper()
		for {
			select {
			case got := <-seen:
				if got == want {
					return
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("the informer never saw %q", want)
			}
		}
	}

	t.Run("pods", func(t *testing.T) {
		pods := cs.CoreV1().Pods(ns)
		created, err := pods.Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"app": "pb"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox:1.36",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}}}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		if created.UID == "" || created.Status.Phase != corev1.PodPending || created.Spec.RestartPolicy != corev1.RestartPolicyAlways {
			t.Fatalf("created: uid=%q phase=%q restartPolicy=%q", created.UID, created.Status.Phase, created.Spec.RestartPolicy)
		}
		expectSeen("add p")
		if err := pods.Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Target: corev1.ObjectReference{Kind: "Node", Name: "n1"}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("bind: %v", err)
		}
		expectSeen("update p n1 Pending")
		got, err := pods.Get(ctx, "p", metav1.GetOptions{})
		if err != nil || got.Spec.NodeName != "n1" || got.Spec.Containers[0].Resources.Requests.Cpu().MilliValue() != 250 {
			t.Fatalf("get: %v %+v", err, got)
		}
		got.Status.Phase = corev1.PodRunning
		got.Status.PodIP = "10.1.2.3"
		st, err := pods.UpdateStatus(ctx, got, metav1.UpdateOptions{})
		if err != nil || st.Status.Phase != corev1.PodRunning || st.Status.PodIP != "10.1.2.3" {
			t.Fatalf("update status: %v", err)
		}
		expectSeen("update p n1 Running")
		st.Labels["tier"] = "web"
		upd, err := pods.Update(ctx, st, metav1.UpdateOptions{})
		if err != nil || upd.Labels["tier"] != "web" {
			t.Fatalf("update: %v", err)
		}
		// A stale write is a Conflict client-go recognises.
		if _, err := pods.Update(ctx, st, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
			t.Fatalf("stale update: %v", err)
		}
		list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: "tier=web"})
		if err != nil || len(list.Items) != 1 || list.ResourceVersion == "" {
			t.Fatalf("list: %v %+v", err, list)
		}
		zero := int64(0)
		if err := pods.Delete(ctx, "p", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			t.Fatalf("delete: %v", err)
		}
		expectSeen("delete p")
	})

	t.Run("errors", func(t *testing.T) {
		_, err := cs.CoreV1().Pods(ns).Get(ctx, "missing", metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			t.Fatalf("get missing: %v", err)
		}
		if d := err.(apierrors.APIStatus).Status().Details; d == nil || d.Name != "missing" || d.Kind != "pods" {
			t.Fatalf("details of %v: %+v", err, d)
		}
		_, err = cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "bad"}}, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) {
			t.Fatalf("create without containers: %v", err)
		}
		if d := err.(apierrors.APIStatus).Status().Details; d == nil || len(d.Causes) == 0 || d.Causes[0].Field == "" {
			t.Fatalf("causes of %v: %+v", err, d)
		}
		_, err = cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if !apierrors.IsAlreadyExists(err) {
			t.Fatalf("create namespace twice: %v", err)
		}
	})

	t.Run("deployments", func(t *testing.T) {
		deps := cs.AppsV1().Deployments(ns)
		replicas := int32(2)
		created, err := deps.Create(ctx, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "d"},
			Spec: appsv1.DeploymentSpec{Replicas: &replicas,
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "d"}},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "d"}},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1.27"}}}}},
		}, metav1.CreateOptions{})
		if err != nil || *created.Spec.RevisionHistoryLimit != 10 {
			t.Fatalf("create: %v", err)
		}
		sc, err := deps.GetScale(ctx, "d", metav1.GetOptions{})
		if err != nil || sc.Spec.Replicas != 2 {
			t.Fatalf("get scale: %v %+v", err, sc)
		}
		sc.Spec.Replicas = 4
		if sc, err = deps.UpdateScale(ctx, "d", sc, metav1.UpdateOptions{}); err != nil || sc.Spec.Replicas != 4 {
			t.Fatalf("update scale: %v", err)
		}
		got, err := deps.Get(ctx, "d", metav1.GetOptions{})
		if err != nil || *got.Spec.Replicas != 4 {
			t.Fatalf("get: %v", err)
		}
		got.Status.ObservedGeneration, got.Status.Replicas = got.Generation, 4
		if st, err := deps.UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil || st.Status.Replicas != 4 {
			t.Fatalf("update status: %v", err)
		}
		if l, err := deps.List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 1 {
			t.Fatalf("list: %v", err)
		}
		if err := deps.Delete(ctx, "d", metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete: %v", err)
		}
	})

	t.Run("configmaps", func(t *testing.T) {
		cms := cs.CoreV1().ConfigMaps(ns)
		cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"},
			Data: map[string]string{"k": "v"}, BinaryData: map[string][]byte{"b": {0, 1, 2}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		if cm, err = cms.Get(ctx, "cm", metav1.GetOptions{}); err != nil || cm.Data["k"] != "v" {
			t.Fatalf("get: %v", err)
		}
		cm.Data["k2"] = "v2"
		if cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil || cm.Data["k2"] != "v2" || !bytes.Equal(cm.BinaryData["b"], []byte{0, 1, 2}) {
			t.Fatalf("update: %v %+v", err, cm)
		}
		if l, err := cms.List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 1 {
			t.Fatalf("list: %v", err)
		}
		if err := cms.Delete(ctx, "cm", metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete: %v", err)
		}
		for _, name := range []string{"a", "b"} {
			if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"set": "x"}}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if err := cms.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "set=x"}); err != nil {
			t.Fatalf("delete collection: %v", err)
		}
		if l, err := cms.List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 0 {
			t.Fatalf("after delete collection: %v %d", err, len(l.Items))
		}
	})

	t.Run("nodes", func(t *testing.T) {
		nodes := cs.CoreV1().Nodes()
		n, err := nodes.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "pbn"},
			Status: corev1.NodeStatus{Capacity: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("8Gi")}}}, metav1.CreateOptions{})
		if err != nil || n.Status.Capacity.Memory().Value() != 8<<30 {
			t.Fatalf("create: %v", err)
		}
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now()}}
		if n, err = nodes.UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil || len(n.Status.Conditions) != 1 {
			t.Fatalf("update status: %v", err)
		}
		n.Spec.Unschedulable = true
		if n, err = nodes.Update(ctx, n, metav1.UpdateOptions{}); err != nil || !n.Spec.Unschedulable {
			t.Fatalf("update: %v", err)
		}
		if l, err := nodes.List(ctx, metav1.ListOptions{FieldSelector: "spec.unschedulable=true"}); err != nil || len(l.Items) != 1 {
			t.Fatalf("list: %v", err)
		}
		if n, err = nodes.Get(ctx, "pbn", metav1.GetOptions{}); err != nil || n.Status.Capacity.Memory().Value() != 8<<30 {
			t.Fatalf("get: %v", err)
		}
		if err := nodes.Delete(ctx, "pbn", metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete: %v", err)
		}
	})

	t.Run("leases", func(t *testing.T) {
		leases := cs.CoordinationV1().Leases(ns)
		holder, secs := "me", int32(15)
		now := metav1.NowMicro()
		l, err := leases.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "l"},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &secs, RenewTime: &now}}, metav1.CreateOptions{})
		if err != nil || *l.Spec.HolderIdentity != "me" || l.Spec.RenewTime == nil {
			t.Fatalf("create: %v %+v", err, l)
		}
		if l, err = leases.Get(ctx, "l", metav1.GetOptions{}); err != nil || *l.Spec.LeaseDurationSeconds != 15 {
			t.Fatalf("get: %v", err)
		}
		if ls, err := leases.List(ctx, metav1.ListOptions{}); err != nil || len(ls.Items) != 1 {
			t.Fatalf("list: %v", err)
		}
		// JSON keeps microseconds, as kube-apiserver with JSON storage does.
		later := metav1.NewMicroTime(now.Add(time.Second).Truncate(time.Microsecond))
		l.Spec.RenewTime = &later
		if l, err = leases.Update(ctx, l, metav1.UpdateOptions{}); err != nil || !l.Spec.RenewTime.Equal(&later) {
			t.Fatalf("update: %v", err)
		}
		if err := leases.Delete(ctx, "l", metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete: %v", err)
		}
	})

	t.Run("events", func(t *testing.T) {
		events := cs.CoreV1().Events(ns)
		e, err := events.Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e"},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "p"}, Reason: "Tested", Message: "m",
			Type: corev1.EventTypeNormal, Count: 1, FirstTimestamp: metav1.Now(), LastTimestamp: metav1.Now(),
			Source: corev1.EventSource{Component: "test"}}, metav1.CreateOptions{})
		if err != nil || e.Reason != "Tested" {
			t.Fatalf("create: %v", err)
		}
		if e, err = events.Get(ctx, "e", metav1.GetOptions{}); err != nil || e.Count != 1 {
			t.Fatalf("get: %v", err)
		}
		e.Count = 2
		if e, err = events.Update(ctx, e, metav1.UpdateOptions{}); err != nil || e.Count != 2 {
			t.Fatalf("update: %v", err)
		}
		if l, err := events.List(ctx, metav1.ListOptions{FieldSelector: "reason=Tested"}); err != nil || len(l.Items) != 1 {
			t.Fatalf("list: %v", err)
		}
		if err := events.Delete(ctx, "e", metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete: %v", err)
		}
	})

	// What went over the wire: every body client-go sent was protobuf,
	// every answer too, and the informer watched in protobuf frames.
	// (client-go's Bind, hand-written, sends and accepts JSON.)
	watched := false
	for _, x := range rec.all() {
		if !strings.HasPrefix(x.path, "/api/") && !strings.HasPrefix(x.path, "/apis/") || strings.HasSuffix(x.path, "/binding") {
			continue
		}
		if x.requestType != "" && x.requestType != protobufType {
			t.Errorf("%s %s sent %s", x.method, x.path, x.requestType)
		}
		want := protobufType
		if strings.Contains(x.query, "watch=true") {
			want, watched = protobufType+";stream=watch", true
		}
		if x.answerType != want {
			t.Errorf("%s %s?%s: answer %d in %q, want %q", x.method, x.path, x.query, x.code, x.answerType, want)
		}
	}
	if !watched {
		t.Error("the informer never watched")
	}
}

// protobufBody encodes obj as client-go does (k8s.io/apimachinery's
// serializer over client-go's scheme), independently of the apiserver.
func protobufBody(t testing.TB, obj runtime.Object) []byte {
	t.Helper()
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), protobufType)
	if !ok {
		t.Fatal("client-go has no protobuf serializer")
	}
	data, err := runtime.Encode(scheme.Codecs.EncoderForVersion(info.Serializer, obj.GetObjectKind().GroupVersionKind().GroupVersion()), obj)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestProtobufNegotiation covers what client-go does not send: bodies that
// do not decode, media types the server does not speak, and Accept headers
// with preferences, each answered as kube-apiserver answers them, with
// nothing stored.
func TestProtobufNegotiation(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	const pods = "/api/v1/namespaces/default/pods"
	pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Name: "neg"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	good := protobufBody(t, pod)
	cm := protobufBody(t, &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: "neg"}})
	wrongGroup := protobufBody(t, &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, ObjectMeta: metav1.ObjectMeta{Name: "neg"}})
	unknownKind := bytes.Replace(good, []byte("\x12\x03Pod"), []byte("\x12\x03Pox"), 1)

	send := func(method, path, contentType, accept string, body []byte) (int, string, []byte) {
		t.Helper()
		req, err := http.NewRequest(method, s.URL()+path, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Content-Type"), data
	}

	for _, tc := range []struct {
		name, contentType, accept string
		body                      []byte
		code                      int
		message                   string
	}{
		{"not protobuf", protobufType, "", []byte(`{"kind":"Pod"}`), 400,
			`the object provided is unrecognized (must be of type Pod): provided data does not appear to be a protobuf message, expected prefix [107 56 115 0] (7b226b696e64223a22506f64227d)`},
		{"truncated", protobufType, "", good[:len(good)/2], 400, `the object provided is unrecognized (must be of type Pod): unexpected EOF (6b38730`},
		{"unknown kind", protobufType, "", unknownKind, 400, `Pox in version "v1" cannot be handled as a Pod: no kind "Pox" is registered for version "v1"`},
		{"wrong kind", protobufType, "", cm, 400, `ConfigMap in version "v1" cannot be handled as a Pod: the kind in the data (ConfigMap) does not match the expected kind`},
		{"wrong group", protobufType, "", wrongGroup, 400, `the API version in the data (apps/v1) does not match the expected API version (v1)`},
		{"empty", protobufType, "", nil, 400, `the request body is empty`},
		{"unsupported body", "text/plain", "", good, 415,
			"the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf"},
		{"unacceptable answer", protobufType, "text/html", good, 406,
			"only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"},
		{"conversion not served", protobufType, "application/json;as=NoSuchKind;v=v1;g=meta.k8s.io", good, 406, "only the following media types are accepted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, ct, body := send(http.MethodPost, pods, tc.contentType, tc.accept, tc.body)
			if code != tc.code || ct != "application/json" || !bytes.Contains(body, []byte(`"code":`)) {
				t.Fatalf("got %d %s %s, want %d Status", code, ct, body, tc.code)
			}
			if !bytes.Contains(body, []byte(strings.ReplaceAll(tc.message, `"`, `\"`))) {
				t.Fatalf("message of %s, want %q", body, tc.message)
			}
		})
	}
	if code, _, body := send(http.MethodGet, pods+"/neg", "", "", nil); code != http.StatusNotFound {
		t.Fatalf("a refused request stored something: %d %s", code, body)
	}

	// Accept: preferences (q), wildcards and fallbacks, as goautoneg orders them.
	if code, _, body := send(http.MethodPost, pods, protobufType, protobufType, good); code != http.StatusCreated || !bytes.HasPrefix(body, []byte("k8s\x00")) {
		t.Fatalf("create: %d %q", code, body)
	}
	// A subresource's body: the scheduler's Binding.
	binding := protobufBody(t, &corev1.Binding{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Binding"},
		ObjectMeta: metav1.ObjectMeta{Name: "neg"}, Target: corev1.ObjectReference{Kind: "Node", Name: "n1"}})
	if code, ct, body := send(http.MethodPost, pods+"/neg/binding", protobufType, protobufType, binding); code != http.StatusCreated || ct != protobufType {
		t.Fatalf("bind: %d %s %q", code, ct, body)
	}
	for _, tc := range []struct{ accept, want string }{
		{"", "application/json"},
		{"*/*", "application/json"},
		{"application/*", "application/json"},
		{"application/yaml", "application/yaml"},
		{"application/json;q=0.5, application/vnd.kubernetes.protobuf", protobufType},
		{"application/vnd.kubernetes.protobuf;q=0.5, application/json", "application/json"},
		{"text/html, application/vnd.kubernetes.protobuf;q=0.1", protobufType},
		{"application/json;as=NoSuchKind;v=v1;g=meta.k8s.io, application/vnd.kubernetes.protobuf", protobufType},
		{"application/vnd.kubernetes.protobuf;stream=watch", protobufType},
	} {
		code, ct, body := send(http.MethodGet, pods+"/neg", "", tc.accept, nil)
		if code != http.StatusOK || ct != tc.want {
			t.Errorf("Accept %q: %d %s, want %s", tc.accept, code, ct, tc.want)
		}
		if ct == protobufType {
			var got corev1.Pod
			if _, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, &got); err != nil || got.Name != "neg" || got.Spec.NodeName != "n1" {
				t.Errorf("Accept %q: %v %+v", tc.accept, err, got)
			}
		}
	}
	// An error in protobuf for a client that asks for it.
	code, ct, body := send(http.MethodGet, pods+"/missing", "", protobufType, nil)
	var status metav1.Status
	if _, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, &status); code != 404 || ct != protobufType || err != nil ||
		status.Reason != metav1.StatusReasonNotFound || status.Details.Name != "missing" {
		t.Fatalf("missing pod: %d %s %v %+v", code, ct, err, status)
	}
	// A watch has no YAML form; the refusal is in YAML, as asked.
	code, _, body = send(http.MethodGet, pods+"?watch=true", "", "application/yaml", nil)
	status = metav1.Status{}
	if err := yaml.Unmarshal(body, &status); err != nil || code != 406 ||
		status.Message != "only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch" {
		t.Fatalf("YAML watch: %d %s", code, body)
	}
	// Patches stay JSON; a protobuf patch is 415 naming the patch types.
	code, _, body = send(http.MethodPatch, pods+"/neg", protobufType, "", good)
	if want := "accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json"; code != 415 || !bytes.Contains(body, []byte(want)) {
		t.Fatalf("protobuf patch: %d %s", code, body)
	}
}

// TestProtobufWatchFrames reads a protobuf watch stream byte by byte: each
// frame a 4-byte big-endian length and a WatchEvent whose object is an
// enveloped object, as client-go's decoder expects.
func TestProtobufWatchFrames(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: s.URL()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL()+"/apis/apps/v1/namespaces/default/deployments?watch=true&allowWatchBookmarks=true", nil)
	req.Header.Set("Accept", protobufType+";stream=watch")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != protobufType+";stream=watch" {
		t.Fatalf("Content-Type %q", ct)
	}
	replicas := int32(1)
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "w"}, Spec: appsv1.DeploymentSpec{Replicas: &replicas,
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}}}
	if _, err := cs.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.AppsV1().Deployments("default").UpdateScale(ctx, "w", &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "w"},
		Spec: autoscalingv1.ScaleSpec{Replicas: 3}}, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct {
		typ      string
		replicas int32
	}{{"ADDED", 1}, {"MODIFIED", 3}} {
		ev, obj := readWatchFrame(t, resp.Body)
		for ev.Type == "BOOKMARK" {
			ev, obj = readWatchFrame(t, resp.Body)
		}
		dep, ok := obj.(*appsv1.Deployment)
		if ev.Type != want.typ || !ok || dep.Name != "w" || *dep.Spec.Replicas != want.replicas {
			t.Fatalf("event %s %T, want %s of w with %d replicas", ev.Type, obj, want.typ, want.replicas)
		}
	}
	// Bookmarks (every second in tests) are the kind with only a resourceVersion.
	ev, obj := readWatchFrame(t, resp.Body)
	if dep, ok := obj.(*appsv1.Deployment); ev.Type != "BOOKMARK" || !ok || dep.ResourceVersion == "" {
		t.Fatalf("event %s %T, want a BOOKMARK of a Deployment", ev.Type, obj)
	}
}

// readWatchFrame reads one frame of a protobuf watch stream: its event and
// the event's object.
func readWatchFrame(t *testing.T, r io.Reader) (metav1.WatchEvent, runtime.Object) {
	t.Helper()
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		t.Fatal(err)
	}
	frame := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(r, frame); err != nil {
		t.Fatal(err)
	}
	var ev metav1.WatchEvent
	if err := ev.Unmarshal(frame); err != nil {
		t.Fatalf("frame: %v", err)
	}
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(ev.Object.Raw, nil, nil)
	if err != nil {
		t.Fatalf("%s event object: %v", ev.Type, err)
	}
	return ev, obj
}
