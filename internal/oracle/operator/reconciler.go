package operator

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

// ConditionAvailable is the condition the reconciler reports.
const ConditionAvailable = "Available"

// Reconciler keeps, for each Memcached, a Deployment of the same name
// that it controls (ownerReference with controller=true), and writes the
// Memcached's status through the status subresource.
type Reconciler struct {
	Client   client.Client
	Scheme   *runtime.Scheme
	Recorder recorder.EventRecorder
}

// SetupWithManager registers the controller: Memcached objects, and the
// Deployments they own (an owned Deployment's change reconciles its owner).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, name string) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&Memcached{}).
		Owns(&appsv1.Deployment{}).
		Named(name).
		Complete(r)
}

// Reconcile is level-based: it reads the Memcached, makes its Deployment
// match, and records what it saw.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	logger := log.FromContext(ctx)
	var mc Memcached
	if err := r.Client.Get(ctx, req.NamespacedName, &mc); err != nil {
		// Deleted: the garbage collector removes what it owned.
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !mc.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	selector := map[string]string{
		"app.kubernetes.io/name":     "memcached",
		"app.kubernetes.io/instance": mc.Name,
	}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: mc.Name, Namespace: mc.Namespace}}
	op, err := controllerutil.CreateOrUpdate(ctx, r.Client, dep, func() error {
		if dep.Labels == nil {
			dep.Labels = map[string]string{}
		}
		for k, v := range selector {
			dep.Labels[k] = v
		}
		dep.Labels["app.kubernetes.io/managed-by"] = "memcached-operator"
		size := mc.Spec.Size
		dep.Spec.Replicas = &size
		if dep.CreationTimestamp.IsZero() {
			dep.Spec.Selector = &metav1.LabelSelector{MatchLabels: selector}
		}
		dep.Spec.Template.Labels = selector
		c := corev1.Container{
			Name:    "memcached",
			Image:   mc.Spec.Image,
			Command: []string{"memcached", fmt.Sprintf("--port=%d", mc.Spec.Port), "--memory-limit=64", "-o", "modern", "-v"},
			Ports:   []corev1.ContainerPort{{Name: "memcached", ContainerPort: mc.Spec.Port, Protocol: corev1.ProtocolTCP}},
		}
		if len(dep.Spec.Template.Spec.Containers) == 1 {
			// Keep what the server defaulted; set what this operator owns.
			cur := &dep.Spec.Template.Spec.Containers[0]
			cur.Name, cur.Image, cur.Command, cur.Ports = c.Name, c.Image, c.Command, c.Ports
			if len(cur.Ports) == 1 && cur.Ports[0].Protocol == "" {
				cur.Ports[0].Protocol = corev1.ProtocolTCP
			}
		} else {
			dep.Spec.Template.Spec.Containers = []corev1.Container{c}
		}
		return controllerutil.SetControllerReference(&mc, dep, r.Scheme)
	})
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("reconcile deployment %s/%s: %w", dep.Namespace, dep.Name, err)
	}
	if op != controllerutil.OperationResultNone {
		logger.Info("deployment reconciled", "operation", op)
		r.Recorder.Eventf(&mc, dep, corev1.EventTypeNormal, "Deployment"+opVerb(op), "Reconcile",
			"Deployment %s %s with %d replicas of %s", dep.Name, op, mc.Spec.Size, mc.Spec.Image)
	}

	status := mc.DeepCopy().Status
	status.Replicas = dep.Status.Replicas
	status.Selector = labels.SelectorFromSet(selector).String()
	status.ObservedGeneration = mc.Generation
	cond := metav1.Condition{Type: ConditionAvailable, ObservedGeneration: mc.Generation}
	if dep.Status.AvailableReplicas >= mc.Spec.Size {
		cond.Status, cond.Reason = metav1.ConditionTrue, "MinimumReplicasAvailable"
		cond.Message = fmt.Sprintf("Deployment %s has %d available replicas", dep.Name, dep.Status.AvailableReplicas)
	} else {
		cond.Status, cond.Reason = metav1.ConditionFalse, "Progressing"
		cond.Message = fmt.Sprintf("Deployment %s has %d of %d replicas available", dep.Name, dep.Status.AvailableReplicas, mc.Spec.Size)
	}
	meta.SetStatusCondition(&status.Conditions, cond)
	if equality.Semantic.DeepEqual(status, mc.Status) {
		return ctrl.Result{}, nil
	}
	mc.Status = status
	if err := r.Client.Status().Update(ctx, &mc); err != nil {
		return ctrl.Result{}, fmt.Errorf("update status of %s: %w", req.NamespacedName, err)
	}
	return ctrl.Result{}, nil
}

// opVerb names an event reason after what CreateOrUpdate did.
func opVerb(op controllerutil.OperationResult) string {
	switch op {
	case controllerutil.OperationResultCreated:
		return "Created"
	case controllerutil.OperationResultUpdated:
		return "Updated"
	}
	return string(op)
}
