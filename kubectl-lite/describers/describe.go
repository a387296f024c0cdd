package describers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/labels"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/resource"
)

// Describe writes the description of u.
func Describe(ctx context.Context, out io.Writer, c *client.Client, u *client.Unstructured, showEvents bool, now time.Time) error {
	var evs []api.Event
	if showEvents {
		var err error
		if evs, err = events(ctx, c, u); err != nil {
			return err
		}
	}
	w := newWriter(out)
	defer w.flush()
	switch u.GetKind() {
	case "Pod":
		p, err := decode[api.Pod](u)
		if err != nil {
			return err
		}
		describePod(w, p, evs, now)
	case "Deployment":
		d, err := decode[api.Deployment](u)
		if err != nil {
			return err
		}
		old, cur, err := controlledReplicaSets(ctx, c, d)
		if err != nil {
			return err
		}
		describeDeployment(w, d, old, cur, evs, now)
	case "ReplicaSet":
		rs, err := decode[api.ReplicaSet](u)
		if err != nil {
			return err
		}
		pods, err := podsOf(ctx, c, rs)
		if err != nil {
			return err
		}
		describeReplicaSet(w, rs, pods, evs, now)
	case "StatefulSet":
		s, err := decode[api.StatefulSet](u)
		if err != nil {
			return err
		}
		pods, err := podsControlledBy(ctx, c, &s.ObjectMeta, s.Spec.Selector)
		if err != nil {
			return err
		}
		describeStatefulSet(w, s, pods, evs, now)
	case "DaemonSet":
		ds, err := decode[api.DaemonSet](u)
		if err != nil {
			return err
		}
		pods, err := podsControlledBy(ctx, c, &ds.ObjectMeta, ds.Spec.Selector)
		if err != nil {
			return err
		}
		describeDaemonSet(w, ds, pods, evs, now)
	case "Service":
		s, err := decode[api.Service](u)
		if err != nil {
			return err
		}
		// kubectl reads the service's EndpointSlices; it shows none
		// when they cannot be listed.
		var slices []api.EndpointSlice
		if l, err := client.Resource[api.EndpointSlice](c).Namespace(s.Namespace).List(ctx,
			client.ListOptions{LabelSelector: api.LabelServiceName + "=" + s.Name}); err == nil {
			slices = l.Items
		}
		describeService(w, s, slices, evs, now)
	case "Node":
		n, err := decode[api.Node](u)
		if err != nil {
			return err
		}
		lease, err := client.Resource[api.Lease](c).Namespace("kube-node-lease").Get(ctx, n.Name)
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		pods, err := client.Resource[api.Pod](c).Namespace("").List(ctx, client.ListOptions{FieldSelector: "spec.nodeName=" + n.Name})
		if err != nil {
			return err
		}
		describeNode(w, n, lease, pods.Items, evs, now)
	case "ConfigMap":
		cm, err := decode[api.ConfigMap](u)
		if err != nil {
			return err
		}
		describeConfigMap(w, cm, evs, now)
	case "Secret":
		s, err := decode[api.Secret](u)
		if err != nil {
			return err
		}
		describeSecret(w, s)
	case "HorizontalPodAutoscaler":
		if u.GetAPIVersion() == "autoscaling/v1" {
			// kubectl describes the v2 view of an HPA.
			v1, err := decode[api.HorizontalPodAutoscalerV1](u)
			if err != nil {
				return err
			}
			b, _ := json.Marshal(api.HPAFromV1(v1))
			var v2 map[string]any
			if err := json.Unmarshal(b, &v2); err != nil {
				return err
			}
			u = &client.Unstructured{Object: v2}
		}
		h, err := decode[autoscalingv2.HorizontalPodAutoscaler](u)
		if err != nil {
			return err
		}
		describeHPA(w, h, evs, now)
	case "Namespace":
		ns, err := decode[api.Namespace](u)
		if err != nil {
			return err
		}
		quotas, err := listOrNil[corev1.ResourceQuota](ctx, c, "resourcequotas", ns.Name)
		if err != nil {
			return err
		}
		limits, err := listOrNil[corev1.LimitRange](ctx, c, "limitranges", ns.Name)
		if err != nil {
			return err
		}
		describeNamespace(w, ns, quotas, limits)
	case "Job":
		j, err := decode[api.Job](u)
		if err != nil {
			return err
		}
		describeJob(w, j, evs, now)
	case "CronJob":
		cj, err := decode[api.CronJob](u)
		if err != nil {
			return err
		}
		describeCronJob(w, cj, evs, now)
	case "PodDisruptionBudget":
		pdb, err := decode[api.PodDisruptionBudget](u)
		if err != nil {
			return err
		}
		describePDB(w, pdb, evs, now)
	case "ServiceAccount":
		sa, err := decode[api.ServiceAccount](u)
		if err != nil {
			return err
		}
		describeServiceAccount(w, sa, evs, now)
	case "ResourceQuota":
		q, err := decode[corev1.ResourceQuota](u)
		if err != nil {
			return err
		}
		describeQuota(w, q)
	case "LimitRange":
		lr, err := decode[corev1.LimitRange](u)
		if err != nil {
			return err
		}
		describeLimitRange(w, lr)
	case "Endpoints":
		ep, err := decode[api.Endpoints](u)
		if err != nil {
			return err
		}
		describeEndpoints(w, ep, evs, now)
	case "EndpointSlice":
		eps, err := decode[api.EndpointSlice](u)
		if err != nil {
			return err
		}
		describeEndpointSlice(w, eps, evs, now)
	case "Role":
		r, err := decode[rbacv1.Role](u)
		if err != nil {
			return err
		}
		describeRules(w, metaOf(u), r.Rules)
	case "ClusterRole":
		r, err := decode[rbacv1.ClusterRole](u)
		if err != nil {
			return err
		}
		describeRules(w, metaOf(u), r.Rules)
	case "RoleBinding":
		b, err := decode[api.RoleBinding](u)
		if err != nil {
			return err
		}
		describeBinding(w, &b.ObjectMeta, b.RoleRef, b.Subjects)
	case "ClusterRoleBinding":
		b, err := decode[api.ClusterRoleBinding](u)
		if err != nil {
			return err
		}
		describeBinding(w, &b.ObjectMeta, b.RoleRef, b.Subjects)
	case "PersistentVolume":
		pv, err := decode[corev1.PersistentVolume](u)
		if err != nil {
			return err
		}
		describePersistentVolume(w, pv, evs, now)
	case "PersistentVolumeClaim":
		pvc, err := decode[api.PersistentVolumeClaim](u)
		if err != nil {
			return err
		}
		pods, err := podsUsingClaim(ctx, c, pvc)
		if err != nil {
			return err
		}
		describePersistentVolumeClaim(w, pvc, pods, evs, now)
	case "StorageClass":
		sc, err := decode[api.StorageClass](u)
		if err != nil {
			return err
		}
		describeStorageClass(w, sc, evs, now)
	case "Ingress", "IngressClass", "NetworkPolicy":
		if err := describeNetworking(ctx, w, c, u, evs, now); err != nil {
			return err
		}
	default:
		describeGeneric(w, u.Object, evs, now)
	}
	return nil
}

func decode[T any](u *client.Unstructured) (*T, error) {
	b, err := json.Marshal(u)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", u.GetName(), err)
	}
	var out T
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&out); err != nil {
		return nil, fmt.Errorf("decode %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	return &out, nil
}

// metaOf is u's metadata as minik8s' type.
func metaOf(u *client.Unstructured) *api.ObjectMeta {
	var m struct {
		Meta api.ObjectMeta `json:"metadata"`
	}
	b, _ := json.Marshal(u)
	_ = json.Unmarshal(b, &m)
	return &m.Meta
}

// listOrNil lists a namespace's objects of a core kind; nil when the
// server does not serve the kind, as kubectl's namespace describer treats
// a 404.
func listOrNil[T any](ctx context.Context, c *client.Client, resource, ns string) ([]T, error) {
	info, ok := api.FindResource(resource)
	if !ok {
		return nil, nil
	}
	l, err := c.Dynamic(info).Namespace(ns).List(ctx, client.ListOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(l.Items))
	for i := range l.Items {
		t, err := decode[T](&l.Items[i])
		if err != nil {
			return nil, err
		}
		out = append(out, *t)
	}
	return out, nil
}

func podsOf(ctx context.Context, c *client.Client, rs *api.ReplicaSet) ([]api.Pod, error) {
	return podsControlledBy(ctx, c, &rs.ObjectMeta, rs.Spec.Selector)
}

// podsControlledBy lists the pods owner controls among those selector
// matches.
func podsControlledBy(ctx context.Context, c *client.Client, owner *api.ObjectMeta, selector *api.LabelSelector) ([]api.Pod, error) {
	sel, err := labels.SelectorFromLabelSelector(selector)
	if err != nil {
		return nil, err
	}
	rs := owner
	l, err := client.Resource[api.Pod](c).Namespace(rs.Namespace).List(ctx, client.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, err
	}
	var out []api.Pod
	for _, p := range l.Items {
		if api.IsControlledBy(&p.ObjectMeta, rs.UID) {
			out = append(out, p)
		}
	}
	return out, nil
}

// events are the events about u. Node events are matched by name, as the
// kubelet records them with the node name as uid.
func events(ctx context.Context, c *client.Client, u *client.Unstructured) ([]api.Event, error) {
	fs := "involvedObject.name=" + u.GetName() + ",involvedObject.kind=" + u.GetKind()
	ns := u.GetNamespace()
	if ns != "" {
		fs += ",involvedObject.namespace=" + ns
	}
	l, err := client.Resource[api.Event](c).Namespace(ns).List(ctx, client.ListOptions{FieldSelector: fs})
	if err != nil {
		return nil, err
	}
	uid := resource.UID(u)
	out := []api.Event{} // shown, even when there is none
	for _, e := range l.Items {
		if e.InvolvedObject.UID == "" || string(e.InvolvedObject.UID) == uid || string(e.InvolvedObject.UID) == u.GetName() {
			out = append(out, e)
		}
	}
	return out, nil
}
