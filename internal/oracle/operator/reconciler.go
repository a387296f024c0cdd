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
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

const (
	// ConditionAvailable is the condition the reconciler reports.
	ConditionAvailable = "Available"
	// Finalizer holds a Memcached until the reconciler has seen its
	// deletion.
	Finalizer = "cache.example.com/finalizer"
	// FieldManager is the reconciler's name in managedFields.
	FieldManager = "memcached-operator"
)

// Reconciler keeps, for each Memcached, a Deployment of the same name and
// a ConfigMap NAME-config that it controls (ownerReference with
// controller=true), holds the Memcached with a finalizer, and writes its
// status through the status subresource.
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
		// Metadata is all a change of the ConfigMap needs to requeue its
		// owner (a PartialObjectMetadata informer, as many operators use
		// for kinds whose data they do not read).
		Owns(&corev1.ConfigMap{}, builder.OnlyMetadata).
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
		// The finalizer's cleanup is only an event: the garbage collector
		// deletes what the object owned once the finalizer is gone.
		if controllerutil.RemoveFinalizer(&mc, Finalizer) {
			r.Recorder.Eventf(&mc, nil, corev1.EventTypeNormal, "Finalized", "Finalize", "Memcached %s is finalized", mc.Name)
			if err := r.Client.Update(ctx, &mc); err != nil {
				return ctrl.Result{}, fmt.Errorf("remove finalizer of %s: %w", req.NamespacedName, err)
			}
		}
		return ctrl.Result{}, nil
	}
	if controllerutil.AddFinalizer(&mc, Finalizer) {
		if err := r.Client.Update(ctx, &mc); err != nil {
			return ctrl.Result{}, fmt.Errorf("add finalizer to %s: %w", req.NamespacedName, err)
		}
	}
	selector := map[string]string{
		"app.kubernetes.io/name":     "memcached",
		"app.kubernetes.io/instance": mc.Name,
	}
	// The configuration, written with server-side apply as newer
	// operators do.
	cm := corev1ac.ConfigMap(mc.Name+"-config", mc.Namespace).
		WithLabels(selector).
		WithOwnerReferences(metav1ac.OwnerReference().
			WithAPIVersion(GroupVersion.String()).WithKind("Memcached").WithName(mc.Name).WithUID(mc.UID).
			WithController(true).WithBlockOwnerDeletion(true)).
		WithData(map[string]string{"memcached.conf": fmt.Sprintf("--port=%d\n--memory-limit=64\n", mc.Spec.Port)})
	if err := r.Client.Apply(ctx, cm, client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
		return ctrl.Result{}, fmt.Errorf("apply configmap %s/%s: %w", mc.Namespace, *cm.Name, err)
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
