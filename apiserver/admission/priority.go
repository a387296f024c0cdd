package admission

import (
	"context"
	"fmt"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
)

// PriorityClassLister reads PriorityClasses for the Priority plugin.
type PriorityClassLister interface {
	// GetPriorityClass returns the class named name; found is false when
	// there is none.
	GetPriorityClass(ctx context.Context, name string) (pc *api.PriorityClass, found bool, err error)
	// ListPriorityClasses returns every class.
	ListPriorityClasses(ctx context.Context) ([]*api.PriorityClass, error)
}

// Priority is Kubernetes' Priority admission plugin. A pod being created
// gets spec.priority and spec.preemptionPolicy from the PriorityClass its
// priorityClassName names, or from the class marked globalDefault (the
// lowest if several are), or 0 and PreemptLowerPriority when there is none;
// a class that does not exist, or a priority or policy the pod gives that
// differs from its class's, is refused (403) with kube's messages. An
// update keeps the stored priority and policy when the new pod omits them.
// A PriorityClass marked globalDefault is refused while another one is.
type Priority struct {
	Classes PriorityClassLister
}

var (
	_ Mutator   = (*Priority)(nil)
	_ Validator = (*Priority)(nil)
)

// Name implements Plugin.
func (*Priority) Name() string { return "Priority" }

// Handles implements Plugin.
func (*Priority) Handles(op Operation) bool { return op == Create || op == Update }

// Admit implements Mutator: the pods' priorities.
func (p *Priority) Admit(ctx context.Context, a *Attributes) error {
	if a.Resource.Group != "" || a.Resource.Resource != "pods" || a.Subresource != "" {
		return nil
	}
	pod, ok := a.Object.(*api.Pod)
	if !ok {
		return apierrors.NewBadRequest("resource was marked with kind Pod but was unable to be converted")
	}
	if a.Operation == Update {
		old, ok := a.OldObject.(*api.Pod)
		if !ok {
			return apierrors.NewBadRequest("resource was marked with kind Pod but was unable to be converted")
		}
		if pod.Spec.Priority == nil && old.Spec.Priority != nil {
			pod.Spec.Priority = old.Spec.Priority
		}
		if pod.Spec.PreemptionPolicy == nil && old.Spec.PreemptionPolicy != nil {
			pod.Spec.PreemptionPolicy = old.Spec.PreemptionPolicy
		}
		return nil
	}
	name, priority, policy, err := p.establish(ctx, a, pod.Spec.PriorityClassName)
	if err != nil {
		return err
	}
	pod.Spec.PriorityClassName = name
	if pod.Spec.Priority != nil && *pod.Spec.Priority != priority {
		return NewForbidden(a, fmt.Errorf("the integer value of priority (%d) must not be provided in pod spec; priority admission controller computed %d from the given PriorityClass name", *pod.Spec.Priority, priority))
	}
	pod.Spec.Priority = &priority
	if policy != nil {
		if pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy != *policy {
			return NewForbidden(a, fmt.Errorf("the string value of PreemptionPolicy (%s) must not be provided in pod spec; priority admission controller computed %s from the given PriorityClass name", *pod.Spec.PreemptionPolicy, *policy))
		}
		pp := *policy
		pod.Spec.PreemptionPolicy = &pp
	}
	return nil
}

// Validate implements Validator: one global default at most.
func (p *Priority) Validate(ctx context.Context, a *Attributes) error {
	if a.Resource.Group != "scheduling.k8s.io" || a.Resource.Resource != "priorityclasses" || a.Subresource != "" {
		return nil
	}
	pc, ok := a.Object.(*api.PriorityClass)
	if !ok {
		return apierrors.NewBadRequest("resource was marked with kind PriorityClass but was unable to be converted")
	}
	if !pc.GlobalDefault {
		return nil
	}
	def, err := p.globalDefault(ctx)
	if err != nil {
		return fmt.Errorf("failed to get default priority class: %v", err)
	}
	if def != nil && (a.Operation == Create || def.Name != pc.Name) {
		return NewForbidden(a, fmt.Errorf("PriorityClass %v is already marked as default. Only one default can exist", def.Name))
	}
	return nil
}

// establish is the class name, priority and preemption policy of a new
// pod naming class (or none).
func (p *Priority) establish(ctx context.Context, a *Attributes, class string) (string, int32, *api.PreemptionPolicy, error) {
	if class == "" {
		def, err := p.globalDefault(ctx)
		if err != nil {
			return "", 0, nil, fmt.Errorf("error occurred while retrieving default priority class: %w", err)
		}
		if def == nil {
			policy := api.PreemptLowerPriority
			return "", 0, &policy, nil
		}
		return def.Name, def.Value, def.PreemptionPolicy, nil
	}
	pc, found, err := p.Classes.GetPriorityClass(ctx, class)
	if err != nil {
		return "", 0, nil, fmt.Errorf("failed to resolve PriorityClass with name %s: %w", class, err)
	}
	if !found {
		return "", 0, nil, NewForbidden(a, fmt.Errorf("no PriorityClass with name %v was found", class))
	}
	return class, pc.Value, pc.PreemptionPolicy, nil
}

// globalDefault is the class marked globalDefault with the lowest value,
// nil if none is.
func (p *Priority) globalDefault(ctx context.Context) (*api.PriorityClass, error) {
	all, err := p.Classes.ListPriorityClasses(ctx)
	if err != nil {
		return nil, err
	}
	var def *api.PriorityClass
	for _, pc := range all {
		if pc.GlobalDefault && (def == nil || def.Value > pc.Value) {
			def = pc
		}
	}
	return def, nil
}
