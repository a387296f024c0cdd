package replicationcontroller

import (
	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/controller-manager/controller"
	"github.com/minik8s/minik8s/controller-manager/replicaset"
)

const (
	// Name is the controller's name in --controllers.
	Name = "replicationcontroller"
	// Component is the events' source, as kube's.
	Component = "replication-controller"
)

// Kind is the ReplicaSet controller's view of ReplicationControllers.
var Kind = replicaset.Kind[api.ReplicationController]{
	Name: Name, Component: Component, APIVersion: "v1", Kind: "ReplicationController",
	View: View, WithStatus: WithStatus,
}

// New is the controller-manager's constructor.
func New(ctx *controller.Context) (controller.Interface, error) {
	return replicaset.NewFor(ctx, Kind)
}

// View reads rc as a ReplicaSet: the selector map becomes matchLabels (a
// nil map stays a nil selector, which selects nothing). The result shares
// rc's memory.
func View(rc *api.ReplicationController) *api.ReplicaSet {
	rs := &api.ReplicaSet{
		TypeMeta:   api.TypeMeta{APIVersion: "v1", Kind: "ReplicationController"},
		ObjectMeta: rc.ObjectMeta,
		Spec: api.ReplicaSetSpec{
			Replicas:        rc.Spec.Replicas,
			MinReadySeconds: rc.Spec.MinReadySeconds,
		},
		Status: api.ReplicaSetStatus{
			Replicas:             rc.Status.Replicas,
			FullyLabeledReplicas: rc.Status.FullyLabeledReplicas,
			ReadyReplicas:        rc.Status.ReadyReplicas,
			AvailableReplicas:    rc.Status.AvailableReplicas,
			ObservedGeneration:   rc.Status.ObservedGeneration,
		},
	}
	if rc.Spec.Selector != nil {
		rs.Spec.Selector = &api.LabelSelector{MatchLabels: rc.Spec.Selector}
	}
	if rc.Spec.Template != nil {
		rs.Spec.Template = *rc.Spec.Template
	}
	for _, c := range rc.Status.Conditions {
		rs.Status.Conditions = append(rs.Status.Conditions, api.ReplicaSetCondition{
			Type: api.ReplicaSetConditionType(c.Type), Status: c.Status, LastTransitionTime: c.LastTransitionTime,
			Reason: c.Reason, Message: c.Message,
		})
	}
	return rs
}

// WithStatus returns a copy of rc holding the ReplicaSet status st.
func WithStatus(rc *api.ReplicationController, st api.ReplicaSetStatus) *api.ReplicationController {
	out := api.DeepCopy(rc)
	out.Status = api.ReplicationControllerStatus{
		Replicas:             st.Replicas,
		FullyLabeledReplicas: st.FullyLabeledReplicas,
		ReadyReplicas:        st.ReadyReplicas,
		AvailableReplicas:    st.AvailableReplicas,
		ObservedGeneration:   st.ObservedGeneration,
	}
	for _, c := range st.Conditions {
		out.Status.Conditions = append(out.Status.Conditions, api.ReplicationControllerCondition{
			Type: string(c.Type), Status: c.Status, LastTransitionTime: c.LastTransitionTime,
			Reason: c.Reason, Message: c.Message,
		})
	}
	return out
}
