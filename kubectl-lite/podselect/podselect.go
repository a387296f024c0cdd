package podselect

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/labels"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/resource"
)

// DefaultContainerAnnotation names the container logs and exec use when
// none is given.
const DefaultContainerAnnotation = "kubectl.kubernetes.io/default-container"

// Pod resolves "NAME", "pod/NAME" or a workload "TYPE/NAME" to a pod.
func Pod(ctx context.Context, streams cli.Streams, c *client.Client, ns, arg string) (*api.Pod, error) {
	pods := client.Resource[api.Pod](c).Namespace(ns)
	if !strings.Contains(arg, "/") {
		return pods.Get(ctx, arg)
	}
	sel, err := resource.Parse([]string{arg}, ns, false)
	if err != nil {
		return nil, err
	}
	r := sel.Refs[0]
	if r.Info.Kind == "Pod" {
		return pods.Get(ctx, r.Name)
	}
	u, err := c.Dynamic(r.Info).Namespace(ns).Get(ctx, r.Name)
	if err != nil {
		return nil, err
	}
	spec, _ := u.Object["spec"].(map[string]any)
	selMap, _ := spec["selector"].(map[string]any)
	ml, _ := selMap["matchLabels"].(map[string]any)
	if len(ml) == 0 {
		return nil, fmt.Errorf("cannot attach to %s: selector for %s not implemented", r.Info.Kind, r)
	}
	set := labels.Set{}
	for k, v := range ml {
		set[k] = fmt.Sprint(v)
	}
	pod, n, err := FirstPod(ctx, c, ns, set)
	if err != nil {
		return nil, err
	}
	if n > 1 {
		fmt.Fprintf(streams.ErrOut, "Found %d pods, using pod/%s\n", n, pod.Name)
	}
	return pod, nil
}

// FirstPod is the first by name of the pods of ns that selector matches,
// and how many matched: the pod kubectl picks for a workload or a
// Service. No match is kubectl's "timed out waiting for the condition".
func FirstPod(ctx context.Context, c *client.Client, ns string, selector labels.Set) (*api.Pod, int, error) {
	l, err := client.Resource[api.Pod](c).Namespace(ns).List(ctx, client.ListOptions{LabelSelector: labels.SelectorFromSet(selector).String()})
	if err != nil {
		return nil, 0, err
	}
	if len(l.Items) == 0 {
		return nil, 0, fmt.Errorf("timed out waiting for the condition")
	}
	sort.Slice(l.Items, func(i, j int) bool { return l.Items[i].Name < l.Items[j].Name })
	return &l.Items[0], len(l.Items), nil
}

// Container is pod's container, init container or ephemeral container
// named name, or nil.
func Container(pod *api.Pod, name string) *api.Container {
	for _, cs := range [][]api.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range cs {
			if cs[i].Name == name {
				return &cs[i]
			}
		}
	}
	for i := range pod.Spec.EphemeralContainers {
		if pod.Spec.EphemeralContainers[i].Name == name {
			return &pod.Spec.EphemeralContainers[i].Container
		}
	}
	return nil
}

// DefaultContainer picks the annotated default container or the first,
// saying so on stderr when the pod has several, as kubectl does.
func DefaultContainer(streams cli.Streams, p *api.Pod) string {
	if name := p.Annotations[DefaultContainerAnnotation]; name != "" {
		for _, ctr := range p.Spec.Containers {
			if ctr.Name == name {
				return name
			}
		}
		fmt.Fprintf(streams.ErrOut, "Default container name %q not found in pod %s\n", name, p.Name)
	}
	if len(p.Spec.Containers) == 0 {
		return ""
	}
	if len(p.Spec.Containers) > 1 {
		names := make([]string, len(p.Spec.Containers))
		for i, ctr := range p.Spec.Containers {
			names[i] = ctr.Name
		}
		fmt.Fprintf(streams.ErrOut, "Defaulted container %q out of: %s\n", names[0], strings.Join(names, ", "))
	}
	return p.Spec.Containers[0].Name
}
