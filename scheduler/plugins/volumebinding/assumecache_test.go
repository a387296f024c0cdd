package volumebinding

import (
	"log/slog"
	"testing"

	"github.com/minik8s/minik8s/api"
)

func TestAssumeCache(t *testing.T) {
	t.Parallel()
	w := newWorld()
	w.add(volume("pv", "manual", "1Gi", ""))
	c := newBinder(w.listers(), w, 0, slog.New(slog.DiscardHandler)).pvCache
	cur, _ := c.Get("pv")

	stale := api.DeepCopy(cur)
	stale.ResourceVersion = "0"
	assumed := api.DeepCopy(cur)
	assumed.Spec.ClaimRef = &api.ObjectReference{Namespace: "ns", Name: "data"}
	if err := c.Assume("pv", assumed); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.Get("pv"); got.Spec.ClaimRef == nil {
		t.Error("Get does not return the assumed version")
	}
	if got, _ := c.GetAPIObj("pv"); got.Spec.ClaimRef != nil {
		t.Error("GetAPIObj returns the assumed version")
	}
	// The informer delivers a newer version: it wins over the assumption.
	newer := api.DeepCopy(cur)
	newer.ResourceVersion = w.nextRV()
	w.volumes.Update(newer)
	if got, _ := c.Get("pv"); got.Spec.ClaimRef != nil || got.ResourceVersion != newer.ResourceVersion {
		t.Errorf("Get = %+v after a newer informer version, want that version", got)
	}
	// An assumption made from an older version is refused.
	if err := c.Assume("pv", stale); err == nil {
		t.Error("Assume of a version older than the informer's succeeded")
	}
	if err := c.Assume("pv", assumed); err == nil {
		t.Error("Assume of the superseded version succeeded")
	}
	// Restore drops an assumption.
	again := api.DeepCopy(newer)
	again.Spec.ClaimRef = &api.ObjectReference{Namespace: "ns", Name: "other"}
	if err := c.Assume("pv", again); err != nil {
		t.Fatal(err)
	}
	c.Restore("pv")
	if got, _ := c.Get("pv"); got.Spec.ClaimRef != nil {
		t.Error("Restore kept the assumption")
	}
}
