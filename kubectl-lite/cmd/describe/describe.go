package describe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/labels"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/manifest"
	"github.com/minik8s/minik8s/kubectl-lite/resource"
)

// NewCommand returns the describe command.
func NewCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		selector      string
		allNamespaces bool
		showEvents    bool
		files         manifest.Files
	)
	cmd := &cobra.Command{
		Use:   "describe (TYPE [NAME_PREFIX | -l label] | TYPE/NAME)",
		Short: "Show details of a specific resource or group of resources",
		Long: `Show details of a specific resource or group of resources.

Prints a detailed description of the selected resources, including related
resources such as events or controllers. A NAME_PREFIX describes every
object whose name starts with it when no object has that exact name.`,
		Example: `  kubectl-lite describe pod web-1
  kubectl-lite describe deployment/web
  kubectl-lite describe nodes
  kubectl-lite describe pods -l app=web`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ns, err := g.DefaultNamespace()
			if err != nil {
				return err
			}
			if allNamespaces {
				ns = ""
			}
			if len(files.Filenames) == 0 && len(args) == 0 {
				return errors.New("You must specify the type of resource to describe. Use \"kubectl-lite api-resources\" for a complete list of supported resources.")
			}
			c, err := g.Client()
			if err != nil {
				return err
			}
			var sel resource.Selection
			switch {
			case len(files.Filenames) > 0:
				if len(args) > 0 {
					return errors.New("there is no need to specify a resource type as a separate argument when passing arguments in resource/name form")
				}
				var err error
				if sel.Refs, err = files.Refs(cmd.Context(), streams, g); err != nil {
					return err
				}
			default:
				// Kinds the built-in table does not know (custom
				// resources) are found through discovery, as kubectl does.
				if sel, err = g.Parse(cmd.Context(), args, ns, true); err != nil {
					return err
				}
			}
			ctx := cmd.Context()
			var objs []*client.Unstructured
			// A missing name is reported and the others still described,
			// as kubectl does; the last error is the exit status.
			failures := cli.Failures{Out: streams.ErrOut}
			var notFound error
			nfailed := 0
			for _, r := range sel.Refs {
				if r.Info.Namespaced && r.Namespace == "" {
					return errors.New("a resource cannot be retrieved by name across all namespaces")
				}
				u, err := c.Dynamic(r.Info).Namespace(r.Namespace).Get(ctx, r.Name)
				if err != nil {
					if apierrors.IsNotFound(err) {
						notFound = err
					}
					nfailed++
					failures.Add(err)
					continue
				}
				objs = append(objs, u)
			}
			for _, info := range sel.Types {
				l, err := c.Dynamic(info).Namespace(nsFor(info, ns)).List(ctx, client.ListOptions{LabelSelector: selector})
				if err != nil {
					return err
				}
				for i := range l.Items {
					objs = append(objs, &l.Items[i])
				}
			}
			// kubectl shows events for one object only, unless
			// --show-events is given.
			if (failures.Last() != nil || len(objs) > 1) && !cmd.Flags().Changed("show-events") {
				showEvents = false
			}
			// Two arguments and one of them not found: kubectl takes them
			// as "TYPE NAME_PREFIX" and describes every object whose name
			// starts with NAME_PREFIX, each followed by a blank line. As
			// "TYPE/NAME TYPE/NAME" nothing matches: only the error shows.
			if notFound != nil && nfailed == 1 && len(args) == 2 && len(sel.Refs) == 2 {
				return notFound
			}
			if notFound != nil && nfailed == 1 && len(args) == 2 && len(sel.Refs) == 1 {
				matches, err := withPrefix(ctx, c, sel.Refs[0])
				if err != nil {
					return err
				}
				if len(matches) == 0 {
					return notFound
				}
				for _, u := range matches {
					if err := Describe(ctx, streams.Out, c, u, showEvents, time.Now()); err != nil {
						return err
					}
					fmt.Fprintln(streams.Out)
				}
				return nil
			}
			if len(objs) == 0 && failures.Last() != nil {
				return failures.Last()
			}
			if len(objs) == 0 {
				clusterScoped := len(sel.Types) > 0
				for _, info := range sel.Types {
					clusterScoped = clusterScoped && !info.Namespaced
				}
				if ns == "" || clusterScoped {
					fmt.Fprintln(streams.ErrOut, "No resources found")
				} else {
					fmt.Fprintf(streams.ErrOut, "No resources found in %s namespace.\n", ns)
				}
				return nil
			}
			for i, u := range objs {
				if i > 0 {
					fmt.Fprintln(streams.Out)
					fmt.Fprintln(streams.Out)
				}
				if err := Describe(ctx, streams.Out, c, u, showEvents, time.Now()); err != nil {
					return err
				}
			}
			return failures.Last()
		},
	}
	f := cmd.Flags()
	f.StringVarP(&selector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.")
	f.BoolVarP(&allNamespaces, "all-namespaces", "A", false, "If present, list the requested object(s) across all namespaces.")
	f.BoolVar(&showEvents, "show-events", true, "If true, display events related to the described object.")
	files.Bind(cmd, "Filename, directory, or URL to files containing the resource to describe")
	return cmd
}

func nsFor(info api.ResourceInfo, ns string) string {
	if info.Namespaced {
		return ns
	}
	return ""
}

// withPrefix lists the objects of r's kind whose names start with r's
// name.
func withPrefix(ctx context.Context, c *client.Client, r resource.Ref) ([]*client.Unstructured, error) {
	l, err := c.Dynamic(r.Info).Namespace(r.Namespace).List(ctx, client.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []*client.Unstructured
	for i := range l.Items {
		if strings.HasPrefix(l.Items[i].GetName(), r.Name) {
			out = append(out, &l.Items[i])
		}
	}
	return out, nil
}

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
