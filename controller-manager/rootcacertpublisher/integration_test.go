package rootcacertpublisher_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/controller-manager/app"
	"github.com/minik8s/minik8s/controller-manager/controllermanagertest"
	"github.com/minik8s/minik8s/controller-manager/rootcacertpublisher"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/pki"
)

// kube-root-ca.crt holds --root-ca-file in every namespace, existing and
// new; edited or deleted, it is restored; other keys an editor added go.
func TestPublishRootCA(t *testing.T) {
	ca, err := pki.NewCA("minik8s-test-ca", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(caFile, ca.CertPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	cl := controllermanagertest.Start(t, []string{"root-ca-cert-publisher"}, func(o *app.Options) { o.Controller.RootCAFile = caFile })
	ctx := cl.Context(time.Minute)
	want := string(ca.CertPEM())
	published := func(ns string) func() (bool, error) {
		return func() (bool, error) {
			cm, err := client.Resource[api.ConfigMap](cl.Client).Namespace(ns).Get(ctx, rootcacertpublisher.ConfigMapName)
			if err != nil {
				return false, err
			}
			return len(cm.Data) == 1 && cm.Data["ca.crt"] == want &&
				cm.Annotations["kubernetes.io/description"] == rootcacertpublisher.Description, nil
		}
	}
	for _, ns := range []string{"default", "kube-system", "kube-public"} {
		cl.Eventually(10*time.Second, "kube-root-ca.crt in "+ns, published(ns))
	}
	cl.Namespace("team-a")
	cl.Eventually(time.Second, "kube-root-ca.crt in a new namespace", published("team-a"))

	cms := client.Resource[api.ConfigMap](cl.Client).Namespace("team-a")
	cm, err := cms.Get(ctx, rootcacertpublisher.ConfigMapName)
	if err != nil {
		t.Fatal(err)
	}
	cm.Data = map[string]string{"ca.crt": "tampered", "extra": "x"}
	delete(cm.Annotations, "kubernetes.io/description")
	if _, err := cms.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	cl.Eventually(2*time.Second, "edited kube-root-ca.crt restored", published("team-a"))

	if err := cms.Delete(ctx, rootcacertpublisher.ConfigMapName, nil); err != nil {
		t.Fatal(err)
	}
	cl.Eventually(2*time.Second, "deleted kube-root-ca.crt re-created", published("team-a"))
}
