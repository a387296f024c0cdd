package admission

import (
	"context"
	"fmt"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
)

// DefaultTolerationSecondsValue is the default of kube-apiserver's
// --default-not-ready-toleration-seconds and
// --default-unreachable-toleration-seconds.
const DefaultTolerationSecondsValue int64 = 300

// DefaultTolerationSeconds is Kubernetes' DefaultTolerationSeconds plugin:
// a pod that does not tolerate the node.kubernetes.io/not-ready or
// node.kubernetes.io/unreachable NoExecute taint gets a toleration for it
// with tolerationSeconds, so that the node lifecycle controller evicts it
// from a lost node after that long rather than at once. A toleration
// already matching the taint (same key or an empty key, NoExecute or an
// empty effect) is left alone. Like Kubernetes it runs on create and update
// of pods (not their subresources); adding tolerations is an allowed pod
// update.
type DefaultTolerationSeconds struct {
	// NotReadySeconds and UnreachableSeconds are the tolerationSeconds of
	// the added tolerations (the two flags).
	NotReadySeconds    int64
	UnreachableSeconds int64
}

var _ Mutator = (*DefaultTolerationSeconds)(nil)

// NewDefaultTolerationSeconds returns the plugin with both periods set to
// Kubernetes' default of 300 seconds.
func NewDefaultTolerationSeconds() *DefaultTolerationSeconds {
	return &DefaultTolerationSeconds{NotReadySeconds: DefaultTolerationSecondsValue, UnreachableSeconds: DefaultTolerationSecondsValue}
}

// Name implements Plugin.
func (*DefaultTolerationSeconds) Name() string { return "DefaultTolerationSeconds" }

// Handles implements Plugin.
func (*DefaultTolerationSeconds) Handles(op Operation) bool { return op == Create || op == Update }

// Admit implements Mutator.
func (p *DefaultTolerationSeconds) Admit(_ context.Context, a *Attributes) error {
	if a.Resource.Group != "" || a.Resource.Resource != "pods" || a.Subresource != "" {
		return nil
	}
	pod, ok := a.Object.(*api.Pod)
	if !ok {
		return apierrors.NewBadRequest(fmt.Sprintf("expected *api.Pod but got %T", a.Object))
	}
	notReady, unreachable := false, false
	for _, t := range pod.Spec.Tolerations {
		noExecute := t.Effect == api.TaintEffectNoExecute || t.Effect == ""
		if noExecute && (t.Key == api.TaintNodeNotReady || t.Key == "") {
			notReady = true
		}
		if noExecute && (t.Key == api.TaintNodeUnreachable || t.Key == "") {
			unreachable = true
		}
	}
	if !notReady {
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, api.Toleration{Key: api.TaintNodeNotReady,
			Operator: api.TolerationOpExists, Effect: api.TaintEffectNoExecute, TolerationSeconds: ptrTo(p.NotReadySeconds)})
	}
	if !unreachable {
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, api.Toleration{Key: api.TaintNodeUnreachable,
			Operator: api.TolerationOpExists, Effect: api.TaintEffectNoExecute, TolerationSeconds: ptrTo(p.UnreachableSeconds)})
	}
	return nil
}

func ptrTo[T any](v T) *T { return &v }
