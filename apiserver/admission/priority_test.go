package admission

import (
	"context"
	"fmt"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
)

// fakeClasses is a PriorityClassLister over a fixed set.
type fakeClasses []*api.PriorityClass

func (f fakeClasses) GetPriorityClass(_ context.Context, name string) (*api.PriorityClass, bool, error) {
	for _, pc := range f {
		if pc.Name == name {
			return pc, true, nil
		}
	}
	return nil, false, nil
}

func (f fakeClasses) ListPriorityClasses(context.Context) ([]*api.PriorityClass, error) {
	return f, nil
}

func class(name string, value int32, def bool, policy api.PreemptionPolicy) *api.PriorityClass {
	return &api.PriorityClass{ObjectMeta: api.ObjectMeta{Name: name}, Value: value, GlobalDefault: def, PreemptionPolicy: &policy}
}

func TestPriorityAdmit(t *testing.T) {
	t.Parallel()
	pods := resourceInfo(t, "", "pods")
	high := class("high", 1000, false, api.PreemptNever)
	i32 := func(v int32) *int32 { return &v }
	never := api.PreemptNever
	tests := []struct {
		name    string
		classes fakeClasses
		spec    api.PodSpec
		want    string // priority policy class, or the error
	}{
		{"no class, no default", fakeClasses{high}, api.PodSpec{}, "0 PreemptLowerPriority "},
		{"named class", fakeClasses{high}, api.PodSpec{PriorityClassName: "high"}, "1000 Never high"},
		{"global default, lowest wins", fakeClasses{high, class("d1", 7, true, api.PreemptLowerPriority), class("d2", 5, true, api.PreemptLowerPriority)},
			api.PodSpec{}, "5 PreemptLowerPriority d2"},
		{"same priority given", fakeClasses{high}, api.PodSpec{PriorityClassName: "high", Priority: i32(1000), PreemptionPolicy: &never}, "1000 Never high"},
		{"unknown class", fakeClasses{high}, api.PodSpec{PriorityClassName: "nonesuch"},
			`pods "p" is forbidden: no PriorityClass with name nonesuch was found`},
		{"other priority given", fakeClasses{high}, api.PodSpec{PriorityClassName: "high", Priority: i32(3)},
			`pods "p" is forbidden: the integer value of priority (3) must not be provided in pod spec; priority admission controller computed 1000 from the given PriorityClass name`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pod := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "p", Namespace: "default"}, Spec: tc.spec}
			err := (&Priority{Classes: tc.classes}).Admit(context.Background(),
				&Attributes{Operation: Create, Resource: pods, Namespace: "default", Object: pod})
			got := ""
			if err != nil {
				if !apierrors.IsForbidden(err) {
					t.Errorf("not a 403: %v", err)
				}
				got = err.Error()
			} else {
				got = fmt.Sprintf("%d %s %s", *pod.Spec.Priority, *pod.Spec.PreemptionPolicy, pod.Spec.PriorityClassName)
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestPriorityUpdateKeepsPriority(t *testing.T) {
	t.Parallel()
	prio, policy := int32(1000), api.PreemptNever
	old := &api.Pod{Spec: api.PodSpec{Priority: &prio, PreemptionPolicy: &policy}}
	pod := &api.Pod{}
	a := &Attributes{Operation: Update, Resource: resourceInfo(t, "", "pods"), Name: "p", Object: pod, OldObject: old}
	if err := (&Priority{Classes: fakeClasses{}}).Admit(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if pod.Spec.Priority == nil || *pod.Spec.Priority != 1000 || pod.Spec.PreemptionPolicy == nil || *pod.Spec.PreemptionPolicy != api.PreemptNever {
		t.Errorf("update lost the priority: %+v", pod.Spec)
	}
}

func TestPriorityOneGlobalDefault(t *testing.T) {
	t.Parallel()
	pcs := resourceInfo(t, "scheduling.k8s.io", "priorityclasses")
	p := &Priority{Classes: fakeClasses{class("d1", 7, true, api.PreemptLowerPriority)}}
	err := p.Validate(context.Background(), &Attributes{Operation: Create, Resource: pcs, Object: class("d2", 5, true, api.PreemptLowerPriority)})
	if want := `priorityclasses.scheduling.k8s.io "d2" is forbidden: PriorityClass d1 is already marked as default. Only one default can exist`; err == nil || err.Error() != want {
		t.Errorf("second default: %v, want %s", err, want)
	}
	// The default itself may be updated.
	if err := p.Validate(context.Background(), &Attributes{Operation: Update, Resource: pcs, Name: "d1", Object: class("d1", 7, true, api.PreemptLowerPriority)}); err != nil {
		t.Errorf("update of the default: %v", err)
	}
}
