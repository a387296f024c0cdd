package localpath

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/resource"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/kubeconfig"
)

// applyAddon creates the objects of deploy/addons/local-path-storage.yaml.
func applyAddon(ctx context.Context, t *testing.T, c *client.Client) {
	t.Helper()
	b, err := os.ReadFile("../../deploy/addons/local-path-storage.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(b), "\n---\n") {
		j, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		var tm api.TypeMeta
		if err := json.Unmarshal(j, &tm); err != nil {
			t.Fatal(err)
		}
		switch tm.Kind {
		case "ServiceAccount":
			create[api.ServiceAccount](ctx, t, c, j, "kube-system")
		case "ClusterRole":
			create[api.ClusterRole](ctx, t, c, j, "")
		case "ClusterRoleBinding":
			create[api.ClusterRoleBinding](ctx, t, c, j, "")
		case "Role":
			create[api.Role](ctx, t, c, j, "kube-system")
		case "RoleBinding":
			create[api.RoleBinding](ctx, t, c, j, "kube-system")
		case "StorageClass":
			create[api.StorageClass](ctx, t, c, j, "")
		default:
			t.Fatalf("unexpected kind %q in the add-on", tm.Kind)
		}
	}
}

func create[T any, PT interface {
	*T
	api.Object
}](ctx context.Context, t *testing.T, c *client.Client, j []byte, ns string) {
	t.Helper()
	obj := new(T)
	if err := json.Unmarshal(j, obj); err != nil {
		t.Fatal(err)
	}
	rc := client.Resource[T, PT](c)
	if ns != "" {
		rc = rc.Namespace(ns)
	}
	if _, err := rc.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create %s: %v", j, err)
	}
}

// The provisioner writes as its own service account, with the rules the
// add-on grants it: the controller-manager makes the account when it is
// missing and asks its token; before the add-on's bindings exist the
// account may do nothing, after them it may create volumes, patch claims
// and run helper pods in kube-system, but not pods elsewhere nor read
// secrets. The token is replaced once 80% of its lifetime has passed. The
// add-on's class is the default one.
func TestServiceAccountIdentity(t *testing.T) {
	srv := apiservertest.Start(t, apiservertest.WithTLS)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	kc, err := kubeconfig.Load(srv.Options.WriteKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := kc.ClientConfig("")
	if err != nil {
		t.Fatal(err)
	}
	admin := srv.AdminClient(t)
	now := time.Now()
	creds := &credentials{base: cfg, manager: admin, now: func() time.Time { return now }}
	if err := creds.refresh(ctx); err != nil {
		t.Fatal(err)
	}
	first := creds.client()
	if first == admin {
		t.Fatal("the provisioner's client is the controller-manager's")
	}
	const user = "system:serviceaccount:kube-system:local-path-provisioner-service-account"
	_, err = client.Resource[api.PersistentVolume](first).List(ctx, client.ListOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `"`+user+`"`) {
		t.Fatalf("list volumes before the add-on: %v, want forbidden to %s", err, user)
	}

	applyAddon(ctx, t, admin)
	dirOrCreate := api.HostPathDirectoryOrCreate
	pv := &api.PersistentVolume{ObjectMeta: api.ObjectMeta{Name: "pvc-identity"}, Spec: api.PersistentVolumeSpec{
		AccessModes:            []api.PersistentVolumeAccessMode{api.ReadWriteOnce},
		Capacity:               api.ResourceList{api.ResourceStorage: resource.MustParse("1Gi")},
		PersistentVolumeSource: api.PersistentVolumeSource{HostPath: &api.HostPathVolumeSource{Path: "/var/lib/minik8s/storage/x", Type: &dirOrCreate}},
	}}
	for {
		_, err = client.Resource[api.PersistentVolume](first).Create(ctx, pv)
		if err == nil {
			break
		}
		if !apierrors.IsForbidden(err) || ctx.Err() != nil {
			t.Fatalf("create a volume with the add-on's rules: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	empty := ""
	if _, err := client.Resource[api.PersistentVolumeClaim](admin).Namespace("default").Create(ctx, &api.PersistentVolumeClaim{
		ObjectMeta: api.ObjectMeta{Name: "c", Namespace: "default", Annotations: map[string]string{"volume.kubernetes.io/selected-node": "n"}},
		Spec: api.PersistentVolumeClaimSpec{AccessModes: []api.PersistentVolumeAccessMode{api.ReadWriteOnce}, StorageClassName: &empty,
			Resources: api.VolumeResourceRequirements{Requests: api.ResourceList{api.ResourceStorage: resource.MustParse("1Gi")}}},
	}); err != nil {
		t.Fatal(err)
	}
	ctl := &Controller{creds: creds, opts: Options{Namespace: "kube-system"}}
	if err := ctl.reschedule(ctx, &api.PersistentVolumeClaim{ObjectMeta: api.ObjectMeta{Name: "c", Namespace: "default"}}); err != nil {
		t.Errorf("patch a claim: %v", err)
	}
	hp, err := ctl.helperPod("claim:default/c", actionCreate, "helper-pod-create-pvc-identity", "/var/lib/minik8s/storage/x", "n", 1)
	if err != nil {
		t.Fatal(err)
	}
	hp.Spec.Containers[0].Image = "busybox"
	if _, err := client.Resource[api.Pod](first).Namespace("kube-system").Create(ctx, hp); err != nil {
		t.Errorf("create a helper pod in kube-system: %v", err)
	}
	hp.Namespace = "default"
	if _, err := client.Resource[api.Pod](first).Namespace("default").Create(ctx, hp); !apierrors.IsForbidden(err) {
		t.Errorf("create a pod in default: %v, want forbidden", err)
	}
	if _, err := client.Resource[api.Secret](first).Namespace("kube-system").List(ctx, client.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("list secrets: %v, want forbidden", err)
	}
	sc, err := client.Resource[api.StorageClass](admin).Get(ctx, "local-path")
	if err != nil {
		t.Fatal(err)
	}
	if sc.Annotations["storageclass.kubernetes.io/is-default-class"] != "true" || sc.Provisioner != ProvisionerName ||
		sc.VolumeBindingMode == nil || *sc.VolumeBindingMode != api.VolumeBindingWaitForFirstConsumer ||
		sc.ReclaimPolicy == nil || *sc.ReclaimPolicy != api.PersistentVolumeReclaimDelete {
		t.Errorf("the add-on's class: %+v", sc)
	}

	// Still fresh at 79% of an hour; replaced past 80%.
	now = now.Add(47 * time.Minute)
	if err := creds.refresh(ctx); err != nil || creds.client() != first {
		t.Fatalf("refresh at 47 min: %v, new client %v", err, creds.client() != first)
	}
	now = now.Add(2 * time.Minute)
	if err := creds.refresh(ctx); err != nil || creds.client() == first {
		t.Fatalf("refresh at 49 min: %v, same client %v", err, creds.client() == first)
	}
	if _, err := client.Resource[api.PersistentVolume](creds.client()).Get(ctx, "pvc-identity"); err != nil {
		t.Errorf("the new token: %v", err)
	}
}
