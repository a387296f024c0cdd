package crd_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
)

// deleteCounter is a validating admission webhook that records when each
// custom object was asked to be deleted, and allows or refuses it.
type deleteCounter struct {
	refuse bool
	mu     sync.Mutex
	calls  map[string][]time.Time
}

func (d *deleteCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var review struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Request    struct {
			UID       string `json:"uid"`
			Name      string `json:"name"`
			Operation string `json:"operation"`
		} `json:"request"`
	}
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	allowed := true
	if review.Request.Operation == "DELETE" {
		d.mu.Lock()
		d.calls[review.Request.Name] = append(d.calls[review.Request.Name], time.Now())
		d.mu.Unlock()
		allowed = !d.refuse
	}
	resp := map[string]any{"uid": review.Request.UID, "allowed": allowed}
	if !allowed {
		resp["status"] = map[string]any{"code": 403, "message": "deletions are held by this test"}
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": resp})
}

// deletes returns the times name was asked to be deleted.
func (d *deleteCounter) deletes(name string) []time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]time.Time(nil), d.calls[name]...)
}

// TestCleanupRetryPace deletes a CRD whose clean-up cannot finish, because
// its one object is held by a finalizer or because every deletion of it is
// refused (by a webhook, which also counts the clean-up's passes: each
// pass deletes the object once), and bounds the passes over 12 s: the one
// the deletion starts, one its own first status writes start, and one per
// 5 s tick, not a pass per status write the passes themselves make.
func TestCleanupRetryPace(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		refuse     bool
		finalizers string
		reason     string
	}{
		{name: "held by a finalizer", finalizers: `["example.com/hold"]`, reason: "InstanceDeletionInProgress"},
		{name: "deletion refused", refuse: true, finalizers: `[]`, reason: "InstanceDeletionFailed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cleanupPace(t, tc.refuse, tc.finalizers, tc.reason)
		})
	}
}

func cleanupPace(t *testing.T, refuse bool, finalizers, reason string) {
	c := apiservertest.Start(t, apiservertest.WithTLS).AdminClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	do := func(method, path, body string) ([]byte, error) {
		return c.Do(ctx, client.Request{Method: method, Path: path, Body: []byte(body)})
	}
	must := func(method, path, body string) []byte {
		t.Helper()
		b, err := do(method, path, body)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		return b
	}
	// eventually polls f until it is true, failing the test after a minute.
	eventually := func(what string, f func() bool) {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); !f(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("still waiting for %s", what)
			}
		}
	}

	hook := &deleteCounter{refuse: refuse, calls: map[string][]time.Time{}}
	srv := httptest.NewTLSServer(hook)
	defer srv.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})

	const crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	const objects = "/apis/example.com/v1/namespaces/default/gadgets"
	must("POST", crds, `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"gadgets.example.com"},
		"spec":{"group":"example.com","names":{"plural":"gadgets","kind":"Gadget"},"scope":"Namespaced",
		"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`)
	eventually("the CRD to be served", func() bool { _, err := do("GET", objects, ""); return err == nil })
	caJSON, _ := json.Marshal(ca)
	must("POST", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", `{"apiVersion":"admissionregistration.k8s.io/v1",
		"kind":"ValidatingWebhookConfiguration","metadata":{"name":"count-deletes"},"webhooks":[{"name":"count-deletes.example.com",
		"clientConfig":{"url":"`+srv.URL+`/","caBundle":`+string(caJSON)+`},
		"rules":[{"operations":["DELETE"],"apiGroups":["example.com"],"apiVersions":["*"],"resources":["gadgets"]}],
		"failurePolicy":"Fail","sideEffects":"None","admissionReviewVersions":["v1"]}]}`)
	// The webhook is called once the apiserver has seen its configuration.
	for i := 0; ; i++ {
		name := fmt.Sprintf("probe-%d", i)
		must("POST", objects, `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"`+name+`"}}`)
		_, _ = do("DELETE", objects+"/"+name, "")
		if len(hook.deletes(name)) > 0 {
			break
		}
		if i == 3000 {
			t.Fatal("the webhook is never called")
		}
		time.Sleep(20 * time.Millisecond)
	}
	must("POST", objects, `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"held","finalizers":`+finalizers+`}}`)

	must("DELETE", crds+"/gadgets.example.com", "")
	eventually("the clean-up to fail with "+reason, func() bool {
		var crd struct {
			Status struct {
				Conditions []struct{ Type, Status, Reason string } `json:"conditions"`
			} `json:"status"`
		}
		if err := json.Unmarshal(must("GET", crds+"/gadgets.example.com", ""), &crd); err != nil {
			t.Fatal(err)
		}
		for _, cond := range crd.Status.Conditions {
			if cond.Type == "Terminating" && cond.Status == "True" && cond.Reason == reason {
				return true
			}
		}
		return false
	})
	// Retried: the tick after the first passes deletes the object again.
	eventually("a retried pass", func() bool { return len(hook.deletes("held")) >= 2 })
	first := hook.deletes("held")[0]
	const window = 12 * time.Second
	time.Sleep(time.Until(first.Add(window)))
	passes := 0
	for _, at := range hook.deletes("held") {
		if !at.After(first.Add(window)) {
			passes++
		}
	}
	// 2 started by the deletion and its own first status writes, at most
	// 3 ticks of 5 s in 12 s, and one for a write racing a pass.
	if passes > 6 {
		t.Errorf("%d clean-up passes in %v, want at most 6 (one per 5 s tick): %s", passes, window,
			strings.Join(sinceFirst(hook.deletes("held")), " "))
	}
	t.Logf("%d clean-up passes in %v", passes, window)
}

// sinceFirst is when the first 20 passes came, after the first.
func sinceFirst(at []time.Time) []string {
	var out []string
	for i, t := range at {
		if i == 20 {
			return append(out, "...")
		}
		out = append(out, t.Sub(at[0]).Round(time.Millisecond).String())
	}
	return out
}
