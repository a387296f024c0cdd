package admission

import (
	"context"
	"reflect"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
)

func TestDefaultTolerationSeconds(t *testing.T) {
	t.Parallel()
	pods := resourceInfo(t, "", "pods")
	secs := func(v int64) *int64 { return &v }
	notReady := func(s int64) api.Toleration {
		return api.Toleration{Key: api.TaintNodeNotReady, Operator: api.TolerationOpExists, Effect: api.TaintEffectNoExecute, TolerationSeconds: secs(s)}
	}
	unreachable := func(s int64) api.Toleration {
		return api.Toleration{Key: api.TaintNodeUnreachable, Operator: api.TolerationOpExists, Effect: api.TaintEffectNoExecute, TolerationSeconds: secs(s)}
	}
	dedicated := api.Toleration{Key: "dedicated", Operator: api.TolerationOpEqual, Value: "db", Effect: api.TaintEffectNoSchedule}
	tests := []struct {
		name string
		have []api.Toleration
		want []api.Toleration
	}{
		{"none", nil, []api.Toleration{notReady(300), unreachable(300)}},
		{"others are kept", []api.Toleration{dedicated}, []api.Toleration{dedicated, notReady(300), unreachable(300)}},
		{"own not-ready kept", []api.Toleration{notReady(60)}, []api.Toleration{notReady(60), unreachable(300)}},
		{"own unreachable kept", []api.Toleration{unreachable(0)}, []api.Toleration{unreachable(0), notReady(300)}},
		{"forever", []api.Toleration{{Key: api.TaintNodeNotReady, Operator: api.TolerationOpExists, Effect: api.TaintEffectNoExecute}},
			[]api.Toleration{{Key: api.TaintNodeNotReady, Operator: api.TolerationOpExists, Effect: api.TaintEffectNoExecute}, unreachable(300)}},
		{"any effect of the key", []api.Toleration{{Key: api.TaintNodeUnreachable, Operator: api.TolerationOpExists}},
			[]api.Toleration{{Key: api.TaintNodeUnreachable, Operator: api.TolerationOpExists}, notReady(300)}},
		{"tolerates everything", []api.Toleration{{Operator: api.TolerationOpExists}}, []api.Toleration{{Operator: api.TolerationOpExists}}},
		{"every key, NoExecute", []api.Toleration{{Operator: api.TolerationOpExists, Effect: api.TaintEffectNoExecute}},
			[]api.Toleration{{Operator: api.TolerationOpExists, Effect: api.TaintEffectNoExecute}}},
		{"NoSchedule does not count", []api.Toleration{{Key: api.TaintNodeNotReady, Operator: api.TolerationOpExists, Effect: api.TaintEffectNoSchedule}},
			[]api.Toleration{{Key: api.TaintNodeNotReady, Operator: api.TolerationOpExists, Effect: api.TaintEffectNoSchedule}, notReady(300), unreachable(300)}},
	}
	p := NewDefaultTolerationSeconds()
	for _, tc := range tests {
		for _, op := range []Operation{Create, Update} {
			pod := &api.Pod{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "p"}, Spec: api.PodSpec{Tolerations: tc.have}}
			if !p.Handles(op) {
				t.Fatalf("%s not handled", op)
			}
			if err := p.Admit(context.Background(), &Attributes{Operation: op, Resource: pods, Namespace: "default", Name: "p", Object: pod}); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if !reflect.DeepEqual(pod.Spec.Tolerations, tc.want) {
				t.Errorf("%s (%s): tolerations %+v, want %+v", tc.name, op, pod.Spec.Tolerations, tc.want)
			}
		}
	}
	if p.Handles(Delete) {
		t.Error("handles delete")
	}

	// The flags set the periods, and each pod gets its own values.
	custom := &DefaultTolerationSeconds{NotReadySeconds: 30, UnreachableSeconds: 45}
	a, b := &api.Pod{}, &api.Pod{}
	for _, pod := range []*api.Pod{a, b} {
		if err := custom.Admit(context.Background(), &Attributes{Operation: Create, Resource: pods, Object: pod}); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(a.Spec.Tolerations, []api.Toleration{notReady(30), unreachable(45)}) {
		t.Errorf("custom: %+v", a.Spec.Tolerations)
	}
	*a.Spec.Tolerations[0].TolerationSeconds = 1
	if *b.Spec.Tolerations[0].TolerationSeconds != 30 {
		t.Error("pods share tolerationSeconds")
	}

	// Subresources and other kinds are left alone; a non-pod is a bad request.
	status := &api.Pod{}
	if err := p.Admit(context.Background(), &Attributes{Operation: Update, Resource: pods, Subresource: "status", Object: status}); err != nil || status.Spec.Tolerations != nil {
		t.Errorf("status write: %v %+v", err, status.Spec.Tolerations)
	}
	nodes := resourceInfo(t, "", "nodes")
	if err := p.Admit(context.Background(), &Attributes{Operation: Create, Resource: nodes, Object: &api.Node{}}); err != nil {
		t.Errorf("node: %v", err)
	}
	err := p.Admit(context.Background(), &Attributes{Operation: Create, Resource: pods, Object: &api.Node{}})
	if !apierrors.IsBadRequest(err) || err.Error() != "expected *api.Pod but got *api.Node" {
		t.Errorf("non-pod: %v", err)
	}
}

// In a chain, the tolerations are added before validation sees the pod.
func TestAdmissionChainOrder(t *testing.T) {
	t.Parallel()
	pods := resourceInfo(t, "", "pods")
	var seen []api.Toleration
	check := validatorFunc(func(a *Attributes) error {
		seen = a.Object.(*api.Pod).Spec.Tolerations
		return nil
	})
	chain := NewChain(&NodeRestriction{}, NewDefaultTolerationSeconds(), check)
	a := &Attributes{Operation: Create, Resource: pods, Namespace: "default", Name: "p", Object: &api.Pod{}}
	if err := chain.Admit(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if err := chain.Validate(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 {
		t.Errorf("validator saw %+v", seen)
	}
}

type validatorFunc func(a *Attributes) error

func (validatorFunc) Name() string                                      { return "test" }
func (validatorFunc) Handles(Operation) bool                            { return true }
func (f validatorFunc) Validate(_ context.Context, a *Attributes) error { return f(a) }
