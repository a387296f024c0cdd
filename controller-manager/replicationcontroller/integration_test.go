package replicationcontroller_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
	"github.com/minik8s/minik8s/controller-manager/controllermanagertest"
	"github.com/minik8s/minik8s/internal/client"
)

func ptr[T any](v T) *T { return &v }

func newRC(name string, replicas int32) *api.ReplicationController {
	return &api.ReplicationController{
		ObjectMeta: api.ObjectMeta{Name: name},
		Spec: api.ReplicationControllerSpec{
			Replicas: ptr(replicas),
			Selector: map[string]string{"name": name},
			Template: &api.PodTemplateSpec{
				ObjectMeta: api.ObjectMeta{Labels: map[string]string{"name": name}},
				Spec:       api.PodSpec{Containers: []api.Container{{Name: "c", Image: "busybox"}}},
			},
		},
	}
}

// controlledBy returns the pods of ns whose controllerRef is the RC uid.
func controlledBy(t *testing.T, cl *controllermanagertest.Cluster, ns string, uid api.UID) []api.Pod {
	t.Helper()
	list, err := client.Resource[api.Pod](cl.Client).Namespace(ns).List(cl.Context(10*time.Second), client.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []api.Pod
	for _, p := range list.Items {
		if ref := api.GetControllerOf(&p.ObjectMeta); ref != nil && ref.UID == uid && p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

// TestReplicationController runs the "replicationcontroller" controller
// against our apiserver through the steps of kube's conformance specs
// (test/e2e/apps/rc.go): adopting a matching orphan, creating the missing
// pods with controllerRefs of kind ReplicationController and events from
// "replication-controller", the status counts, scaling through /scale,
// releasing a pod whose labels no longer match, and the garbage collector
// deleting the RC's pods with it.
func TestReplicationController(t *testing.T) {
	cl := controllermanagertest.Start(t, []string{"replicationcontroller", "garbagecollector"}, nil)
	ctx := cl.Context(2 * time.Minute)
	cl.Namespace("rc")
	pods := client.Resource[api.Pod](cl.Client).Namespace("rc")
	rcs := client.Resource[api.ReplicationController](cl.Client).Namespace("rc")

	orphan := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "orphan", Labels: map[string]string{"name": "web"}},
		Spec: api.PodSpec{Containers: []api.Container{{Name: "c", Image: "busybox"}}}}
	if _, err := pods.Create(ctx, orphan); err != nil {
		t.Fatal(err)
	}
	rc, err := rcs.Create(ctx, newRC("web", 1))
	if err != nil {
		t.Fatal(err)
	}
	cl.Eventually(30*time.Second, "the orphan adopted", func() (bool, error) {
		p, err := pods.Get(ctx, "orphan")
		if err != nil {
			return false, err
		}
		ref := api.GetControllerOf(&p.ObjectMeta)
		return ref != nil && ref.UID == rc.UID && ref.Kind == "ReplicationController" && ref.APIVersion == "v1" &&
			ref.BlockOwnerDeletion != nil && *ref.BlockOwnerDeletion, nil
	})
	cl.Eventually(30*time.Second, "status replicas 1", func() (bool, error) {
		got, err := rcs.Get(ctx, "web")
		return err == nil && got.Status.Replicas == 1 && got.Status.FullyLabeledReplicas == 1 &&
			got.Status.ObservedGeneration == got.Generation, err
	})
	if n := len(controlledBy(t, cl, "rc", rc.UID)); n != 1 {
		t.Fatalf("pods of the rc = %d after adoption, want 1 (none created)", n)
	}

	// Scale through /scale, as "should get and update a ReplicationController scale".
	var scale api.Scale
	if err := rcs.Subresource("web", "scale").Patch(ctx, client.MergePatchType, []byte(`{"spec":{"replicas":3}}`), &scale); err != nil {
		t.Fatal(err)
	}
	cl.Eventually(30*time.Second, "3 pods", func() (bool, error) {
		return len(controlledBy(t, cl, "rc", rc.UID)) == 3, nil
	})
	for _, p := range controlledBy(t, cl, "rc", rc.UID) {
		if p.Name != "orphan" {
			cl.SetPodStatus("rc", p.Name, api.PodRunning, "10.0.0.9", true)
		}
	}
	cl.Eventually(30*time.Second, "status 3 replicas, 2 ready and available", func() (bool, error) {
		got, err := rcs.Get(ctx, "web")
		return err == nil && got.Status.Replicas == 3 && got.Status.FullyLabeledReplicas == 3 &&
			got.Status.ReadyReplicas == 2 && got.Status.AvailableReplicas == 2 && got.Status.ObservedGeneration == got.Generation, err
	})
	events, err := client.Resource[api.Event](cl.Client).Namespace("rc").List(ctx, client.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created := 0
	for _, e := range events.Items {
		if e.Reason == "SuccessfulCreate" && e.InvolvedObject.Kind == "ReplicationController" && e.InvolvedObject.Name == "web" &&
			e.Source.Component == "replication-controller" {
			created++
		}
	}
	if created != 2 {
		t.Errorf("SuccessfulCreate events of replication-controller on the rc = %d, want 2: %+v", created, events.Items)
	}

	// Release, as "should release no longer matching pods".
	if _, err := pods.Patch(ctx, "orphan", client.MergePatchType, []byte(`{"metadata":{"labels":{"name":"released"}}}`)); err != nil {
		t.Fatal(err)
	}
	cl.Eventually(30*time.Second, "the pod released and replaced", func() (bool, error) {
		p, err := pods.Get(ctx, "orphan")
		if err != nil {
			return false, err
		}
		return len(p.OwnerReferences) == 0 && len(controlledBy(t, cl, "rc", rc.UID)) == 3, nil
	})

	// The garbage collector deletes the rc's pods with it (not the released one).
	if err := rcs.Delete(ctx, "web", &api.DeleteOptions{PropagationPolicy: ptr(api.DeletePropagationBackground)}); err != nil {
		t.Fatal(err)
	}
	cl.Eventually(60*time.Second, "the rc's pods collected", func() (bool, error) {
		list, err := pods.List(ctx, client.ListOptions{})
		if err != nil {
			return false, err
		}
		return len(list.Items) == 1 && list.Items[0].Name == "orphan", nil
	})
}

// TestReplicationControllerFailureCondition is "should surface a failure
// condition on a common issue like exceeded quota": an RC the pods quota
// refuses gets the ReplicaFailure condition (reason FailedCreate), which
// goes once scaled within the quota.
func TestReplicationControllerFailureCondition(t *testing.T) {
	cl := controllermanagertest.Start(t, []string{"replicationcontroller", "resourcequota"}, nil)
	ctx := cl.Context(2 * time.Minute)
	cl.Namespace("q")
	quota := &api.ResourceQuota{ObjectMeta: api.ObjectMeta{Name: "condition-test"},
		Spec: api.ResourceQuotaSpec{Hard: api.ResourceList{"pods": resource.MustParse("2")}}}
	quotas := client.Resource[api.ResourceQuota](cl.Client).Namespace("q")
	if _, err := quotas.Create(ctx, quota); err != nil {
		t.Fatal(err)
	}
	cl.Eventually(30*time.Second, "the quota's status", func() (bool, error) {
		q, err := quotas.Get(ctx, "condition-test")
		return err == nil && len(q.Status.Hard) > 0, err
	})
	rcs := client.Resource[api.ReplicationController](cl.Client).Namespace("q")
	if _, err := rcs.Create(ctx, newRC("condition-test", 3)); err != nil {
		t.Fatal(err)
	}
	cl.Eventually(30*time.Second, "the ReplicaFailure condition", func() (bool, error) {
		got, err := rcs.Get(ctx, "condition-test")
		if err != nil {
			return false, err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == "ReplicaFailure" && c.Status == api.ConditionTrue && c.Reason == "FailedCreate" && c.Message != "" {
				return true, nil
			}
		}
		return false, fmt.Errorf("conditions %+v", got.Status.Conditions)
	})
	if _, err := rcs.Patch(ctx, "condition-test", client.MergePatchType, []byte(`{"spec":{"replicas":2}}`)); err != nil {
		t.Fatal(err)
	}
	cl.Eventually(30*time.Second, "the condition removed", func() (bool, error) {
		got, err := rcs.Get(ctx, "condition-test")
		return err == nil && len(got.Status.Conditions) == 0 && got.Status.Replicas == 2, err
	})
}
