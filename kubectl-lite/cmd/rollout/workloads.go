package rollout

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/resource"
)

// workloadKinds are the kinds status, history, undo and restart take.
var workloadKinds = []string{"Deployment", "StatefulSet", "DaemonSet"}

// StatefulSetStatus is kubectl's StatefulSetStatusViewer.
func StatefulSetStatus(sts *api.StatefulSet) (string, bool, error) {
	if sts.Spec.UpdateStrategy.Type != "RollingUpdate" {
		return "", true, fmt.Errorf("rollout status is only available for %s strategy type", "RollingUpdate")
	}
	if sts.Status.ObservedGeneration == 0 || sts.Generation > sts.Status.ObservedGeneration {
		return "Waiting for statefulset spec update to be observed...\n", false, nil
	}
	if sts.Spec.Replicas != nil && sts.Status.ReadyReplicas < *sts.Spec.Replicas {
		return fmt.Sprintf("Waiting for %d pods to be ready...\n", *sts.Spec.Replicas-sts.Status.ReadyReplicas), false, nil
	}
	if ru := sts.Spec.UpdateStrategy.RollingUpdate; ru != nil {
		if sts.Spec.Replicas != nil && ru.Partition != nil && sts.Status.UpdatedReplicas < *sts.Spec.Replicas-*ru.Partition {
			return fmt.Sprintf("Waiting for partitioned roll out to finish: %d out of %d new pods have been updated...\n",
				sts.Status.UpdatedReplicas, *sts.Spec.Replicas-*ru.Partition), false, nil
		}
		return fmt.Sprintf("partitioned roll out complete: %d new pods have been updated...\n", sts.Status.UpdatedReplicas), true, nil
	}
	if sts.Status.UpdateRevision != sts.Status.CurrentRevision {
		return fmt.Sprintf("waiting for statefulset rolling update to complete %d pods at revision %s...\n",
			sts.Status.UpdatedReplicas, sts.Status.UpdateRevision), false, nil
	}
	return fmt.Sprintf("statefulset rolling update complete %d pods at revision %s...\n", sts.Status.CurrentReplicas, sts.Status.CurrentRevision), true, nil
}

// DaemonSetStatus is kubectl's DaemonSetStatusViewer.
func DaemonSetStatus(ds *api.DaemonSet) (string, bool, error) {
	if ds.Spec.UpdateStrategy.Type != "RollingUpdate" {
		return "", true, fmt.Errorf("rollout status is only available for %s strategy type", "RollingUpdate")
	}
	if ds.Generation <= ds.Status.ObservedGeneration {
		if ds.Status.UpdatedNumberScheduled < ds.Status.DesiredNumberScheduled {
			return fmt.Sprintf("Waiting for daemon set %q rollout to finish: %d out of %d new pods have been updated...\n",
				ds.Name, ds.Status.UpdatedNumberScheduled, ds.Status.DesiredNumberScheduled), false, nil
		}
		if ds.Status.NumberAvailable < ds.Status.DesiredNumberScheduled {
			return fmt.Sprintf("Waiting for daemon set %q rollout to finish: %d of %d updated pods are available...\n",
				ds.Name, ds.Status.NumberAvailable, ds.Status.DesiredNumberScheduled), false, nil
		}
		return fmt.Sprintf("daemon set %q successfully rolled out\n", ds.Name), true, nil
	}
	return "Waiting for daemon set spec update to be observed...\n", false, nil
}

// entry is one revision of a rollout history.
type entry struct {
	template api.PodTemplateSpec
	cause    string
}

// revisionTemplate decodes the template of a ControllerRevision (its data
// replaces spec.template).
func revisionTemplate(rev *api.ControllerRevision) (api.PodTemplateSpec, error) {
	var d struct {
		Spec struct {
			Template api.PodTemplateSpec `json:"template"`
		} `json:"spec"`
	}
	err := json.Unmarshal(rev.Data, &d)
	return d.Spec.Template, err
}

// ownerOf returns the uid and template of a StatefulSet or DaemonSet.
func ownerOf(ctx context.Context, c *client.Client, r resource.Ref) (api.UID, *api.PodTemplateSpec, error) {
	switch r.Info.Kind {
	case "StatefulSet":
		s, err := client.Resource[api.StatefulSet](c).Namespace(r.Namespace).Get(ctx, r.Name)
		if err != nil {
			return "", nil, err
		}
		return s.UID, &s.Spec.Template, nil
	default:
		ds, err := client.Resource[api.DaemonSet](c).Namespace(r.Namespace).Get(ctx, r.Name)
		if err != nil {
			return "", nil, err
		}
		return ds.UID, &ds.Spec.Template, nil
	}
}

// controllerHistory returns the revisions the object controls, by number.
func controllerHistory(ctx context.Context, c *client.Client, r resource.Ref, uid api.UID) (map[int64]entry, error) {
	l, err := client.Resource[api.ControllerRevision](c).Namespace(r.Namespace).List(ctx, client.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := map[int64]entry{}
	for i := range l.Items {
		rev := &l.Items[i]
		if ref := api.GetControllerOf(&rev.ObjectMeta); ref == nil || ref.UID != uid {
			continue
		}
		t, err := revisionTemplate(rev)
		if err != nil {
			return nil, fmt.Errorf("decode revision %s: %w", rev.Name, err)
		}
		out[rev.Revision] = entry{template: t, cause: rev.Annotations[api.ChangeCauseAnnotation]}
	}
	return out, nil
}

// undoControllerHistory is kubectl's StatefulSet and DaemonSet rollbacker:
// the template of the chosen revision (the one before the latest by
// default) replaces the object's.
func undoControllerHistory(ctx context.Context, c *client.Client, r resource.Ref, toRevision int64) (string, error) {
	uid, cur, err := ownerOf(ctx, c, r)
	if err != nil {
		return "", err
	}
	h, err := controllerHistory(ctx, c, r, uid)
	if err != nil {
		return "", err
	}
	if toRevision == 0 && len(h) <= 1 {
		return "", fmt.Errorf("no last revision to roll back to")
	}
	if toRevision == 0 {
		previous, latest := int64(-1), int64(-1)
		for v := range h {
			switch {
			case v > latest:
				previous, latest = latest, v
			case v > previous:
				previous = v
			}
		}
		toRevision = previous
	}
	e, ok := h[toRevision]
	if !ok {
		return "", fmt.Errorf("unable to find specified revision %v in history", toRevision)
	}
	a, _ := json.Marshal(e.template)
	b, _ := json.Marshal(cur)
	if string(a) == string(b) {
		return fmt.Sprintf("skipped rollback (current template already matches revision %d)", toRevision), nil
	}
	p, err := json.Marshal([]map[string]any{{"op": "replace", "path": "/spec/template", "value": e.template}})
	if err != nil {
		return "", err
	}
	if _, err := c.Dynamic(r.Info).Namespace(r.Namespace).Patch(ctx, r.Name, client.JSONPatchType, p); err != nil {
		return "", fmt.Errorf("failed restoring revision %d: %w", toRevision, err)
	}
	return "rolled back", nil
}
