package garbagecollector_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/controller-manager/controllermanagertest"
	"github.com/minik8s/minik8s/controller-manager/garbagecollector"
	"github.com/minik8s/minik8s/internal/client"
)

// Custom objects as owners, which the collector finds through discovery
// once their CRD exists: deleting one in the background deletes its
// dependents; in the foreground it waits for them; with orphan it keeps
// them, without the reference.
func TestCustomResourceOwners(t *testing.T) {
	garbagecollector.DiscoveryInterval = 200 * time.Millisecond
	cl := controllermanagertest.Start(t, []string{"garbagecollector"}, nil)
	ctx := cl.Context(2 * time.Minute)
	c := cl.Client
	cl.Namespace(ns)
	crd := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"apps.stable.example.com"},
"spec":{"group":"stable.example.com","scope":"Namespaced","names":{"plural":"apps","kind":"App"},
"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`
	if _, err := c.Do(ctx, client.Request{Method: "POST", Path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", Body: []byte(crd)}); err != nil {
		t.Fatal(err)
	}
	const path = "/apis/stable.example.com/v1/namespaces/" + ns + "/apps"
	cl.Eventually(10*time.Second, "apps served", func() (bool, error) {
		_, err := c.Do(ctx, client.Request{Path: path})
		return err == nil, nil
	})
	for _, tc := range []struct {
		name, propagation string
		wantDependents    int
	}{
		{"background", "Background", 0},
		{"foreground", "Foreground", 0},
		{"orphan", "Orphan", 2},
	} {
		data, err := c.Do(ctx, client.Request{Method: "POST", Path: path, Body: []byte(`{"apiVersion":"stable.example.com/v1","kind":"App","metadata":{"name":"` + tc.name + `"}}`)})
		if err != nil {
			t.Fatal(err)
		}
		var app api.CustomObject
		if err := json.Unmarshal(data, &app); err != nil {
			t.Fatal(err)
		}
		ref := api.OwnerReference{APIVersion: "stable.example.com/v1", Kind: "App", Name: app.Name, UID: app.UID, BlockOwnerDeletion: ptr(true)}
		dependents(t, ctx, c, ref, tc.name, 2)
		time.Sleep(500 * time.Millisecond) // the collector sees the owner and its dependents
		body := `{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"` + tc.propagation + `"}`
		if _, err := c.Do(ctx, client.Request{Method: "DELETE", Path: path + "/" + tc.name, Body: []byte(body)}); err != nil {
			t.Fatal(err)
		}
		cl.Eventually(30*time.Second, tc.name+": owner gone", func() (bool, error) {
			_, err := c.Do(ctx, client.Request{Path: path + "/" + tc.name})
			return apierrors.IsNotFound(err), nil
		})
		cl.Eventually(30*time.Second, tc.name+": dependents handled", func() (bool, error) {
			pods := podsOf(t, ctx, c, tc.name)
			if len(pods) != tc.wantDependents {
				return false, nil
			}
			for _, p := range pods {
				if len(p.OwnerReferences) != 0 {
					return false, nil
				}
			}
			return true, nil
		})
	}
}

// An owner of a kind the collector has not discovered yet (its CRD is
// newer than the collector's last look) and deleted at once, as an
// operator's test or a quick `kubectl apply; kubectl delete` does: the
// collector looks again on meeting the unknown kind, instead of leaving
// the dependents to the next periodic discovery and the queue's back-off.
func TestCustomOwnerDeletedBeforeDiscovery(t *testing.T) {
	saved := garbagecollector.DiscoveryInterval
	garbagecollector.DiscoveryInterval = time.Hour
	t.Cleanup(func() { garbagecollector.DiscoveryInterval = saved })
	cl := controllermanagertest.Start(t, []string{"garbagecollector"}, nil)
	ctx := cl.Context(2 * time.Minute)
	c := cl.Client
	cl.Namespace(ns)
	// The collector runs (and has looked once) when it deletes a pod
	// whose owner never existed.
	dependents(t, ctx, c, api.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: "never", UID: "never"}, "probe", 1)
	cl.Eventually(30*time.Second, "the collector to run", func() (bool, error) {
		return len(podsOf(t, ctx, c, "probe")) == 0, nil
	})
	time.Sleep(200 * time.Millisecond)

	crd := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.stable.example.com"},
"spec":{"group":"stable.example.com","scope":"Namespaced","names":{"plural":"widgets","kind":"Widget"},
"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`
	if _, err := c.Do(ctx, client.Request{Method: "POST", Path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", Body: []byte(crd)}); err != nil {
		t.Fatal(err)
	}
	const path = "/apis/stable.example.com/v1/namespaces/" + ns + "/widgets"
	cl.Eventually(10*time.Second, "widgets served", func() (bool, error) {
		_, err := c.Do(ctx, client.Request{Path: path})
		return err == nil, nil
	})
	data, err := c.Do(ctx, client.Request{Method: "POST", Path: path, Body: []byte(`{"apiVersion":"stable.example.com/v1","kind":"Widget","metadata":{"name":"w"}}`)})
	if err != nil {
		t.Fatal(err)
	}
	var w api.CustomObject
	if err := json.Unmarshal(data, &w); err != nil {
		t.Fatal(err)
	}
	dependents(t, ctx, c, api.OwnerReference{APIVersion: "stable.example.com/v1", Kind: "Widget", Name: w.Name, UID: w.UID, BlockOwnerDeletion: ptr(true)}, "widget", 2)
	if _, err := c.Do(ctx, client.Request{Method: "DELETE", Path: path + "/w"}); err != nil {
		t.Fatal(err)
	}
	cl.Eventually(15*time.Second, "the widget's dependents deleted", func() (bool, error) {
		return len(podsOf(t, ctx, c, "widget")) == 0, nil
	})
}
