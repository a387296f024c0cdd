package controller

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/events"
)

// PodControl creates and deletes the pods of a controller; unit tests may
// substitute a fake.
type PodControl interface {
	// CreatePod creates a pod from template owned (as controller) by
	// owner through ref, named after the owner with a random suffix.
	CreatePod(ctx context.Context, namespace string, template *api.PodTemplateSpec, owner api.Object, ref api.OwnerReference) error
	// DeletePod deletes the named pod of owner.
	DeletePod(ctx context.Context, namespace, name string, owner api.Object) error
}

// RealPodControl is PodControl through the API, recording kube's
// SuccessfulCreate / FailedCreate / SuccessfulDelete / FailedDelete events
// on the owner.
type RealPodControl struct {
	Client   *client.Client
	Recorder events.Recorder
}

var _ PodControl = RealPodControl{}

// Event reasons of pod control, as kube spells them.
const (
	FailedCreatePodReason     = "FailedCreate"
	SuccessfulCreatePodReason = "SuccessfulCreate"
	FailedDeletePodReason     = "FailedDelete"
	SuccessfulDeletePodReason = "SuccessfulDelete"
)

// PodFromTemplate builds the pod a controller creates: the template's
// labels, annotations, finalizers and spec, generateName "OWNER-" (or the
// template's own generateName, as an Indexed job's "JOB-INDEX-") and the
// owner reference.
func PodFromTemplate(template *api.PodTemplateSpec, owner api.Object, ref api.OwnerReference) *api.Pod {
	t := api.DeepCopy(template)
	meta := owner.GetObjectMeta()
	prefix := t.GenerateName
	if prefix == "" {
		prefix = meta.Name + "-"
	}
	if len(prefix) > MaxGeneratedNameLength {
		prefix = prefix[:MaxGeneratedNameLength]
	}
	return &api.Pod{
		TypeMeta: api.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: api.ObjectMeta{
			GenerateName:    prefix,
			Namespace:       meta.Namespace,
			Labels:          maps.Clone(t.Labels),
			Annotations:     maps.Clone(t.Annotations),
			Finalizers:      slices.Clone(t.Finalizers),
			OwnerReferences: []api.OwnerReference{ref},
		},
		Spec: t.Spec,
	}
}

// MaxGeneratedNameLength is the longest generateName that leaves room for
// the apiserver's 5-character random suffix in a 63-character name.
const MaxGeneratedNameLength = 58

// CreatePod implements PodControl.
func (c RealPodControl) CreatePod(ctx context.Context, namespace string, template *api.PodTemplateSpec, owner api.Object, ref api.OwnerReference) error {
	pod := PodFromTemplate(template, owner, ref)
	pod.Namespace = namespace
	if len(pod.Labels) == 0 {
		return fmt.Errorf("unable to create pods, no labels")
	}
	created, err := client.Resource[api.Pod](c.Client).Namespace(namespace).Create(ctx, pod)
	if err != nil {
		if ctx.Err() == nil {
			c.Recorder.Eventf(owner, api.EventTypeWarning, FailedCreatePodReason, "Error creating: %v", err)
		}
		return err
	}
	c.Recorder.Eventf(owner, api.EventTypeNormal, SuccessfulCreatePodReason, "Created pod: %v", created.Name)
	return nil
}

// DeletePod implements PodControl.
func (c RealPodControl) DeletePod(ctx context.Context, namespace, name string, owner api.Object) error {
	if err := client.Resource[api.Pod](c.Client).Namespace(namespace).Delete(ctx, name, nil); err != nil {
		if ctx.Err() == nil {
			c.Recorder.Eventf(owner, api.EventTypeWarning, FailedDeletePodReason, "Error deleting: %v", err)
		}
		return err
	}
	c.Recorder.Eventf(owner, api.EventTypeNormal, SuccessfulDeletePodReason, "Deleted pod: %v", name)
	return nil
}
