package defaultpreemption

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/events"
)

// APIEvictor is the Evictor of a running scheduler: status patches and
// deletes through the apiserver, events through the recorder.
type APIEvictor struct {
	pods     *client.ResourceClient[api.Pod, *api.Pod]
	recorder events.Recorder
}

var _ Evictor = (*APIEvictor)(nil)

// NewAPIEvictor returns an evictor writing through c.
func NewAPIEvictor(c *client.Client, recorder events.Recorder) *APIEvictor {
	return &APIEvictor{pods: client.Resource[api.Pod](c), recorder: recorder}
}

// Preempt implements Evictor as kube's executor does: a strategic merge
// patch of pods/status adds DisruptionTarget=True (reason
// PreemptionByScheduler, "<scheduler>: preempting to accommodate a higher
// priority pod") unless the victim has it already, then a plain delete,
// then the Preempted event on the victim.
func (e *APIEvictor) Preempt(ctx context.Context, preemptor, victim *api.Pod, node string) error {
	pods := e.pods.Namespace(victim.Namespace)
	cond := api.PodCondition{
		Type:               api.DisruptionTarget,
		Status:             api.ConditionTrue,
		Reason:             api.PodReasonPreemptionByScheduler,
		Message:            fmt.Sprintf("%s: preempting to accommodate a higher priority pod", preemptor.Spec.SchedulerName),
		ObservedGeneration: victim.Generation,
		LastTransitionTime: api.Now(),
	}
	if needsCondition(victim, cond) {
		body, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": []api.PodCondition{cond}}})
		if err != nil {
			return err
		}
		if _, err := pods.Patch(ctx, victim.Name, client.StrategicMergePatchType, body, "status"); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("add DisruptionTarget condition: %w", err)
		}
	}
	if err := pods.Delete(ctx, victim.Name, nil); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("delete: %w", err)
	}
	e.recorder.Eventf(victim, api.EventTypeNormal, "Preempted", "Preempted by pod %v on node %v", preemptor.UID, node)
	return nil
}

// needsCondition is kube's UpdatePodCondition test: the condition is
// missing or differs in status, reason or message.
func needsCondition(p *api.Pod, c api.PodCondition) bool {
	for _, old := range p.Status.Conditions {
		if old.Type == c.Type {
			return old.Status != c.Status || old.Reason != c.Reason || old.Message != c.Message || old.ObservedGeneration != c.ObservedGeneration
		}
	}
	return true
}

// ClearNomination implements Evictor.
func (e *APIEvictor) ClearNomination(ctx context.Context, pod *api.Pod) error {
	if pod.Status.NominatedNodeName == "" {
		return nil
	}
	body := []byte(`{"status":{"nominatedNodeName":null}}`)
	_, err := e.pods.Namespace(pod.Namespace).Patch(ctx, pod.Name, client.StrategicMergePatchType, body, "status")
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
