package pods_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/apiserver/app"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubelet/token"
)

// clockFetcher issues numbered tokens that expire after the asked
// lifetime on a clock the test moves.
type clockFetcher struct {
	mu    sync.Mutex
	now   time.Time
	n     int
	asked []api.TokenRequest
	// fail, when set, is the error of every request.
	fail error
}

func (f *clockFetcher) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *clockFetcher) advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
}

func (f *clockFetcher) RequestToken(_ context.Context, ns, name string, tr *api.TokenRequest) (*api.TokenRequest, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, *tr)
	if f.fail != nil {
		return nil, f.fail
	}
	f.n++
	out := *tr
	out.Status = api.TokenRequestStatus{Token: fmt.Sprintf("token-%s-%s-%d", ns, name, f.n),
		ExpirationTimestamp: api.Time{Time: f.now.Add(time.Duration(*tr.Spec.ExpirationSeconds) * time.Second)}}
	return &out, nil
}

const saDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// serviceAccountVolume is the volume ServiceAccount admission injects.
func serviceAccountVolume(name string) api.Volume {
	exp := int64(3607)
	return api.Volume{Name: name, VolumeSource: api.VolumeSource{Projected: &api.ProjectedVolumeSource{Sources: []api.VolumeProjection{
		{ServiceAccountToken: &api.ServiceAccountTokenProjection{ExpirationSeconds: &exp, Path: "token"}},
		{ConfigMap: &api.ConfigMapProjection{LocalObjectReference: api.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []api.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
		{DownwardAPI: &api.DownwardAPIProjection{Items: []api.DownwardAPIVolumeFile{{Path: "namespace", FieldRef: &api.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
	}}}}
}

// A pod with the service account volume sees its token, the cluster CA
// and its namespace; the token is asked for the pod's service account
// bound to the pod and replaced once 80% of its lifetime has passed; an
// edited kube-root-ca.crt and new labels reach the files (downwardAPI
// volume too); the container finds the apiserver in its environment.
func TestProjectedAndDownwardAPIVolumes(t *testing.T) {
	f := &clockFetcher{now: time.Now()}
	tokens := token.NewManager(f)
	tokens.Now = f.Now
	nd := newNode(t, func(nd *node) {
		nd.opts.VolumeResyncPeriod = time.Second
		nd.opts.Tokens = tokens
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cms := client.Resource[api.ConfigMap](nd.c).Namespace("default")
	if _, err := cms.Create(ctx, &api.ConfigMap{ObjectMeta: api.ObjectMeta{Name: "kube-root-ca.crt"}, Data: map[string]string{"ca.crt": "CA-1"}}); err != nil {
		t.Fatal(err)
	}
	p := nd.pod("sa", api.Container{Name: "main", Command: sh("sleep 600"), VolumeMounts: []api.VolumeMount{
		{Name: "kube-api-access-abcde", MountPath: saDir, ReadOnly: true},
		{Name: "podinfo", MountPath: "/etc/podinfo"},
	}})
	p.Labels = map[string]string{"app": "web"}
	p.Annotations = map[string]string{"build": "1"}
	p.Spec.ServiceAccountName = "builder"
	m400 := int32(0o400)
	p.Spec.Volumes = []api.Volume{serviceAccountVolume("kube-api-access-abcde"),
		{Name: "podinfo", VolumeSource: api.VolumeSource{DownwardAPI: &api.DownwardAPIVolumeSource{Items: []api.DownwardAPIVolumeFile{
			{Path: "name", FieldRef: &api.ObjectFieldSelector{FieldPath: "metadata.name"}},
			{Path: "uid", FieldRef: &api.ObjectFieldSelector{FieldPath: "metadata.uid"}},
			{Path: "labels", FieldRef: &api.ObjectFieldSelector{FieldPath: "metadata.labels"}, Mode: &m400},
			{Path: "annotations", FieldRef: &api.ObjectFieldSelector{FieldPath: "metadata.annotations"}},
		}}}}}
	p = nd.create(p)
	got := nd.waitPod("sa", 60*time.Second, "Running", running)
	cat := func(path string) string {
		out, code := nd.exec(got, "main", "cat", path)
		if code != 0 {
			t.Fatalf("cat %s: exit %d: %s", path, code, out)
		}
		return out
	}
	for path, want := range map[string]string{
		saDir + "/token": "token-default-builder-1", saDir + "/ca.crt": "CA-1", saDir + "/namespace": "default",
		"/etc/podinfo/name": "sa", "/etc/podinfo/uid": string(p.UID), "/etc/podinfo/labels": `app="web"`, "/etc/podinfo/annotations": `build="1"`,
	} {
		if got := cat(path); got != want {
			t.Errorf("%s = %q, want %q", path, got, want)
		}
	}
	if out, _ := nd.exec(got, "main", "stat", "-L", "-c", "%a", "/etc/podinfo/labels"); strings.TrimSpace(out) != "400" {
		t.Errorf("labels mode %q, want 400", out)
	}
	if out, _ := nd.exec(got, "main", "ls", "-l", saDir+"/token"); !strings.HasSuffix(strings.TrimSpace(out), "-> ..data/token") {
		t.Errorf("token is %q, want a link through ..data", out)
	}
	f.mu.Lock()
	first := f.asked[0]
	f.mu.Unlock()
	if r := first.Spec.BoundObjectRef; r == nil || r.Kind != "Pod" || r.APIVersion != "v1" || r.Name != "sa" || r.UID != p.UID ||
		*first.Spec.ExpirationSeconds != 3607 || len(first.Spec.Audiences) != 0 {
		t.Errorf("token request %+v (bound to %+v)", first.Spec, first.Spec.BoundObjectRef)
	}
	env, _ := nd.exec(got, "main", "env")
	for _, v := range []string{"KUBERNETES_SERVICE_HOST=", "KUBERNETES_SERVICE_PORT=", "KUBERNETES_PORT_443_TCP_PROTO=tcp"} {
		if !strings.Contains(env, v) {
			t.Errorf("env has no %s: %s", v, env)
		}
	}

	// Not yet 80% of the lifetime: the same token.
	f.advance(2800 * time.Second)
	time.Sleep(2500 * time.Millisecond)
	if got := cat(saDir + "/token"); got != "token-default-builder-1" {
		t.Errorf("token replaced before 80%% of its lifetime: %q", got)
	}
	// Past it: a new one within a volume resync.
	f.advance(100 * time.Second)
	waitExec(t, nd, got, saDir+"/token", "token-default-builder-2")

	cm, err := cms.Get(ctx, "kube-root-ca.crt")
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["ca.crt"] = "CA-2"
	if _, err := cms.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	waitExec(t, nd, got, saDir+"/ca.crt", "CA-2")

	cur, err := nd.pods().Get(ctx, "sa")
	if err != nil {
		t.Fatal(err)
	}
	cur.Labels["tier"] = "front"
	if _, err := nd.pods().Update(ctx, cur); err != nil {
		t.Fatal(err)
	}
	waitExec(t, nd, got, "/etc/podinfo/labels", "app=\"web\"\ntier=\"front\"")

	// A failing TokenRequest keeps the valid token in place and says so.
	f.mu.Lock()
	f.fail = fmt.Errorf(`serviceaccounts "builder" not found`)
	f.mu.Unlock()
	f.advance(3000 * time.Second) // due for refresh, still valid
	time.Sleep(2500 * time.Millisecond)
	if got := cat(saDir + "/token"); got != "token-default-builder-2" {
		t.Errorf("token after a failed refresh: %q", got)
	}
	f.advance(700 * time.Second) // expired: the volume cannot be written
	nd.waitEvent("sa", `FailedMount: MountVolume.SetUp failed for volume "kube-api-access-abcde" : failed to fetch token: serviceaccounts "builder" not found`, 20*time.Second)
}

// waitExec waits until cat path in the pod's container prints want.
func waitExec(t *testing.T, nd *node, p *api.Pod, path, want string) {
	t.Helper()
	var out string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if out, _ = nd.exec(p, "main", "cat", path); out == want {
			return
		}
	}
	t.Fatalf("%s = %q, want %q", path, out, want)
}

// A pod whose service account volume cannot be written stays
// ContainerCreating with kube's FailedMount message.
func TestProjectedVolumeFailedMount(t *testing.T) {
	f := &clockFetcher{now: time.Now()}
	nd := newNode(t, func(nd *node) { nd.opts.Tokens = token.NewManager(f) })
	p := nd.pod("nomount", api.Container{Name: "main", Command: sh("sleep 600"),
		VolumeMounts: []api.VolumeMount{{Name: "kube-api-access-xyz12", MountPath: saDir}}})
	p.Spec.Volumes = []api.Volume{serviceAccountVolume("kube-api-access-xyz12")}
	nd.create(p)
	nd.waitEvent("nomount", `FailedMount: MountVolume.SetUp failed for volume "kube-api-access-xyz12" : configmap "kube-root-ca.crt" not found`, 30*time.Second)
	nd.waitPod("nomount", 10*time.Second, "Pending, its container ContainerCreating", func(p *api.Pod) bool {
		w := status(p, "main").State.Waiting
		return p.Status.Phase == api.PodPending && w != nil && w.Reason == "ContainerCreating"
	})
}

// offsetClock is the real clock moved forward by what the test adds.
type offsetClock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *offsetClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *offsetClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

// The whole path with the real apiserver: ServiceAccount admission injects
// kube-api-access-XXXXX, the kubelet fills it through the TokenRequest
// API, and the token the container reads authenticates as
// system:serviceaccount:default:default over TLS verified with the
// volume's ca.crt. Past 80% of its lifetime the kubelet puts a new token
// in place, which authenticates too; once the pod is gone its token does
// not.
func TestServiceAccountTokenAuthenticates(t *testing.T) {
	clock := &offsetClock{}
	nd := newNodeOn(t, []func(*app.Options){apiservertest.WithTLS, func(o *app.Options) { o.DisableAdmissionPlugins = nil }},
		func(nd *node) {
			nd.opts.VolumeResyncPeriod = time.Second
			tm := token.NewManager(token.APIFetcher{Client: nd.c})
			tm.Now = clock.Now
			nd.opts.Tokens = tm
		})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	caPEM, err := os.ReadFile(filepath.Join(nd.server.Options.CertDir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	// What the serviceaccount controller and root-ca-cert-publisher keep.
	if _, err := client.Resource[api.ServiceAccount](nd.c).Namespace("default").Create(ctx, &api.ServiceAccount{ObjectMeta: api.ObjectMeta{Name: "default"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Resource[api.ConfigMap](nd.c).Namespace("default").Create(ctx, &api.ConfigMap{ObjectMeta: api.ObjectMeta{Name: "kube-root-ca.crt"},
		Data: map[string]string{"ca.crt": string(caPEM)}}); err != nil {
		t.Fatal(err)
	}
	p := nd.create(nd.pod("identity", api.Container{Name: "main", Command: sh("sleep 600")}))
	if len(p.Spec.Volumes) != 1 || !strings.HasPrefix(p.Spec.Volumes[0].Name, "kube-api-access-") || p.Spec.Volumes[0].Projected == nil {
		t.Fatalf("admission did not inject the service account volume: %+v", p.Spec.Volumes)
	}
	got := nd.waitPod("identity", 60*time.Second, "Running", running)
	cat := func(path string) string {
		out, code := nd.exec(got, "main", "cat", path)
		if code != 0 {
			t.Fatalf("cat %s: exit %d: %s", path, code, out)
		}
		return out
	}
	if ns := cat(saDir + "/namespace"); ns != "default" {
		t.Errorf("namespace file %q", ns)
	}
	ca := cat(saDir + "/ca.crt")
	if ca != string(caPEM) {
		t.Errorf("ca.crt is not the cluster CA")
	}
	whoami := func(tok string) (api.SelfSubjectReview, error) {
		c, err := client.New(&client.Config{Host: "https://127.0.0.1:" + fmt.Sprint(nd.server.Options.SecurePort), CAData: []byte(ca), BearerToken: tok, QPS: -1})
		if err != nil {
			t.Fatal(err)
		}
		var out api.SelfSubjectReview
		b, err := c.Do(ctx, client.Request{Method: "POST", Path: "/apis/authentication.k8s.io/v1/selfsubjectreviews",
			Body: []byte(`{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`)})
		if err != nil {
			return out, err
		}
		return out, json.Unmarshal(b, &out)
	}
	first := cat(saDir + "/token")
	r, err := whoami(first)
	if err != nil {
		t.Fatalf("the pod's token does not authenticate: %v", err)
	}
	if u := r.Status.UserInfo; u.Username != "system:serviceaccount:default:default" ||
		!slices.Contains(u.Groups, "system:serviceaccounts") || !slices.Contains(u.Groups, "system:serviceaccounts:default") {
		t.Errorf("the pod's token is %+v", u)
	}
	clock.advance(2900 * time.Second) // past 80% of 3607 s
	var second string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if second = cat(saDir + "/token"); second != first {
			break
		}
	}
	if second == first {
		t.Fatal("token not refreshed past 80% of its lifetime")
	}
	if _, err := whoami(second); err != nil {
		t.Errorf("the refreshed token does not authenticate: %v", err)
	}
	if err := nd.pods().Delete(ctx, "identity", nil); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		_, err := whoami(second)
		if apierrors.IsUnauthorized(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the token of a deleted pod: %v, want 401", err)
		}
	}
}
