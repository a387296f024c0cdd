package serviceaccount_test

import (
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/controller-manager/controllermanagertest"
	"github.com/minik8s/minik8s/internal/client"
)

// Every namespace gets a default ServiceAccount, the existing ones at
// start and new ones within a second; deleted, it comes back; one the
// user edited is left alone.
func TestDefaultServiceAccount(t *testing.T) {
	cl := controllermanagertest.Start(t, []string{"serviceaccount"}, nil)
	ctx := cl.Context(time.Minute)
	sas := func(ns string) *client.ResourceClient[api.ServiceAccount, *api.ServiceAccount] {
		return client.Resource[api.ServiceAccount](cl.Client).Namespace(ns)
	}
	for _, ns := range []string{"default", "kube-system"} {
		cl.Eventually(10*time.Second, "default ServiceAccount in "+ns, func() (bool, error) {
			_, err := sas(ns).Get(ctx, "default")
			return err == nil, err
		})
	}
	cl.Namespace("team-a")
	cl.Eventually(time.Second, "default ServiceAccount in a new namespace", func() (bool, error) {
		_, err := sas("team-a").Get(ctx, "default")
		return err == nil, err
	})
	old, err := sas("team-a").Get(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	if err := sas("team-a").Delete(ctx, "default", nil); err != nil {
		t.Fatal(err)
	}
	cl.Eventually(time.Second, "default ServiceAccount re-created", func() (bool, error) {
		sa, err := sas("team-a").Get(ctx, "default")
		return err == nil && sa.UID != old.UID, err
	})
	// An edit is the owner's: automountServiceAccountToken stays off.
	sa, err := sas("team-a").Get(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	off := false
	sa.AutomountServiceAccountToken = &off
	if _, err := sas("team-a").Update(ctx, sa); err != nil {
		t.Fatal(err)
	}
	// Other ServiceAccounts are not the controller's: a deleted one stays
	// deleted.
	if _, err := sas("team-a").Create(ctx, &api.ServiceAccount{ObjectMeta: api.ObjectMeta{Name: "builder"}}); err != nil {
		t.Fatal(err)
	}
	if err := sas("team-a").Delete(ctx, "builder", nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if _, err := sas("team-a").Get(ctx, "builder"); !apierrors.IsNotFound(err) {
		t.Errorf("builder after deletion: %v, want NotFound", err)
	}
	got, err := sas("team-a").Get(ctx, "default")
	if err != nil || got.AutomountServiceAccountToken == nil || *got.AutomountServiceAccountToken {
		t.Errorf("edited default ServiceAccount: %+v, %v", got, err)
	}
}
