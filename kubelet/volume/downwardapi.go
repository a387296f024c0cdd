package volume

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
)

// DownwardAPIPayload is kube's downwardAPI CollectData: each item's field
// of the pod (or resource of a named container) in a file; allocatable is
// the node's, which stands for limits a container does not set.
func DownwardAPIPayload(pod *api.Pod, items []api.DownwardAPIVolumeFile, def int32, allocatable api.ResourceList) (map[string]FileProjection, error) {
	out := map[string]FileProjection{}
	var errs []error
	for _, it := range items {
		var v string
		var err error
		switch {
		case it.FieldRef != nil:
			v, err = FieldValue(pod, it.FieldRef.FieldPath, pod.Status.PodIP, pod.Status.HostIP)
		case it.ResourceFieldRef != nil:
			c := container(pod, it.ResourceFieldRef.ContainerName)
			if c == nil {
				err = fmt.Errorf("container %q not found in pod %s/%s", it.ResourceFieldRef.ContainerName, pod.Namespace, pod.Name)
				break
			}
			v, err = ResourceValue(it.ResourceFieldRef, c, allocatable)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out[path.Clean(it.Path)] = FileProjection{Data: []byte(v), Mode: mode(it.Mode, def)}
	}
	if len(errs) > 0 {
		return nil, aggregate(errs)
	}
	return out, nil
}

// FieldValue is the downward API's value of a pod field (kube's
// ExtractFieldPathAsString with the kubelet's runtime fields): metadata
// name, namespace, uid, labels and annotations (whole, as key="value"
// lines, or one key), spec.nodeName and serviceAccountName, the pod's and
// host's IPs.
func FieldValue(pod *api.Pod, fieldPath, podIP, hostIP string) (string, error) {
	if k, ok := subscript(fieldPath, "metadata.labels"); ok {
		return pod.Labels[k], nil
	}
	if k, ok := subscript(fieldPath, "metadata.annotations"); ok {
		return pod.Annotations[k], nil
	}
	switch fieldPath {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "metadata.labels":
		return formatMap(pod.Labels), nil
	case "metadata.annotations":
		return formatMap(pod.Annotations), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.podIP", "status.podIPs":
		return podIP, nil
	case "status.hostIP", "status.hostIPs":
		return hostIP, nil
	}
	return "", fmt.Errorf("unsupported fieldPath: %v", fieldPath)
}

// subscript splits "metadata.labels['key']".
func subscript(fieldPath, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(fieldPath, prefix+"['")
	if !ok || !strings.HasSuffix(rest, "']") {
		return "", false
	}
	return strings.TrimSuffix(rest, "']"), true
}

// formatMap is kube's fieldpath.FormatMap: sorted key="value" lines.
func formatMap(m map[string]string) string {
	var b strings.Builder
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(k + "=" + strconv.Quote(m[k]))
	}
	return b.String()
}

// ResourceValue is kube's ExtractContainerResourceValue: a request or
// limit of c divided by the divisor (default 1), rounded up. An unset
// limit is the node's allocatable amount, as the kubelet merges them; an
// unset request is 0.
func ResourceValue(ref *api.ResourceFieldSelector, c *api.Container, allocatable api.ResourceList) (string, error) {
	kind, name, _ := strings.Cut(ref.Resource, ".")
	var list api.ResourceList
	switch kind {
	case "limits":
		list = c.Resources.Limits
	case "requests":
		list = c.Resources.Requests
	default:
		return "", fmt.Errorf("unsupported container resource : %v", ref.Resource)
	}
	q, ok := list[api.ResourceName(name)]
	if !ok && kind == "limits" {
		q, ok = allocatable[api.ResourceName(name)]
	}
	if !ok {
		return "0", nil
	}
	div := ref.Divisor
	if div.IsZero() {
		div = resource.MustParse("1")
	}
	if name == "cpu" {
		return strconv.FormatInt((q.MilliValue()+div.MilliValue()-1)/div.MilliValue(), 10), nil
	}
	return strconv.FormatInt((q.Value()+div.Value()-1)/div.Value(), 10), nil
}

func container(pod *api.Pod, name string) *api.Container {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return &pod.Spec.Containers[i]
		}
	}
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return &pod.Spec.InitContainers[i]
		}
	}
	return nil
}
