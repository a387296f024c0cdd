package describers

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
	"github.com/minik8s/minik8s/kubectl-lite/printers"
)

// PodTemplate writes kubectl's "Pod Template:" section (used by describe
// of workloads and by rollout history --revision).
func PodTemplate(out io.Writer, t *api.PodTemplateSpec) {
	w := newWriter(out)
	podTemplate(w, t)
	w.flush()
}

func podTemplate(w *prefixWriter, t *api.PodTemplateSpec) {
	w.write(level0, "Pod Template:\n")
	if t == nil {
		w.write(level1, "<unset>")
		return
	}
	w.labels("  Labels", t.Labels)
	if len(t.Annotations) > 0 {
		w.annotations("  Annotations", t.Annotations)
	}
	if t.Spec.ServiceAccountName != "" {
		w.write(level1, "Service Account:\t%s\n", t.Spec.ServiceAccountName)
	}
	if len(t.Spec.InitContainers) > 0 {
		containers(w, "Init Containers", t.Spec.InitContainers, nil, "  ")
	}
	containers(w, "Containers", t.Spec.Containers, nil, "  ")
	volumes(w, t.Spec.Volumes, "  ")
	if t.Spec.PriorityClassName != "" {
		w.write(level1, "Priority Class Name:\t%s\n", t.Spec.PriorityClassName)
	}
	w.labels("  Node-Selectors", t.Spec.NodeSelector)
	w.tolerations("  Tolerations", t.Spec.Tolerations)
}

func containers(w *prefixWriter, label string, cs []api.Container, statuses []api.ContainerStatus, space string) {
	byName := map[string]api.ContainerStatus{}
	for _, s := range statuses {
		byName[s.Name] = s
	}
	w.write(level0, "%s%s:\n", space, label)
	for _, c := range cs {
		st, ok := byName[c.Name]
		nameIndent := ""
		if space != "" {
			nameIndent = " "
		}
		w.write(level1, "%s%v:\n", nameIndent, c.Name)
		if ok {
			w.write(level2, "Container ID:\t%s\n", st.ContainerID)
		}
		w.write(level2, "Image:\t%s\n", c.Image)
		if ok {
			w.write(level2, "Image ID:\t%s\n", st.ImageID)
		}
		ports, hostPorts := containerPorts(c.Ports)
		if strings.Contains(ports, ",") {
			w.write(level2, "Ports:\t%s\n", ports)
		} else {
			w.write(level2, "Port:\t%s\n", printers.OrNone(ports))
		}
		if strings.Contains(hostPorts, ",") {
			w.write(level2, "Host Ports:\t%s\n", hostPorts)
		} else {
			w.write(level2, "Host Port:\t%s\n", printers.OrNone(hostPorts))
		}
		if len(c.Command) > 0 {
			w.write(level2, "Command:\n")
			for _, s := range c.Command {
				for _, line := range strings.Split(s, "\n") {
					w.write(level3, "%s\n", line)
				}
			}
		}
		if len(c.Args) > 0 {
			w.write(level2, "Args:\n")
			for _, s := range c.Args {
				for _, line := range strings.Split(s, "\n") {
					w.write(level3, "%s\n", line)
				}
			}
		}
		if ok {
			containerState(w, "State", st.State)
			if st.LastTerminationState.Terminated != nil {
				containerState(w, "Last State", st.LastTerminationState)
			}
			w.write(level2, "Ready:\t%v\n", boolString(st.Ready))
			w.write(level2, "Restart Count:\t%d\n", st.RestartCount)
		}
		resourceList(w, level2, "Limits", c.Resources.Limits)
		resourceList(w, level2, "Requests", c.Resources.Requests)
		probe(w, "Liveness", c.LivenessProbe)
		probe(w, "Readiness", c.ReadinessProbe)
		probe(w, "Startup", c.StartupProbe)
		env(w, c)
		mounts(w, c.VolumeMounts)
	}
}

func containerPorts(ps []api.ContainerPort) (ports, hostPorts string) {
	var p, h []string
	for _, cp := range ps {
		proto := cp.Protocol
		if proto == "" {
			proto = api.ProtocolTCP
		}
		p = append(p, fmt.Sprintf("%d/%s", cp.ContainerPort, proto))
		h = append(h, fmt.Sprintf("%d/%s", cp.HostPort, proto))
	}
	return strings.Join(p, ", "), strings.Join(h, ", ")
}

func containerState(w *prefixWriter, name string, s api.ContainerState) {
	switch {
	case s.Running != nil:
		w.write(level2, "%s:\tRunning\n", name)
		w.write(level3, "Started:\t%v\n", timestamp(s.Running.StartedAt))
	case s.Waiting != nil:
		w.write(level2, "%s:\tWaiting\n", name)
		if s.Waiting.Reason != "" {
			w.write(level3, "Reason:\t%s\n", s.Waiting.Reason)
		}
	case s.Terminated != nil:
		w.write(level2, "%s:\tTerminated\n", name)
		if s.Terminated.Reason != "" {
			w.write(level3, "Reason:\t%s\n", s.Terminated.Reason)
		}
		if s.Terminated.Message != "" {
			w.write(level3, "Message:\t%s\n", s.Terminated.Message)
		}
		w.write(level3, "Exit Code:\t%d\n", s.Terminated.ExitCode)
		if s.Terminated.Signal > 0 {
			w.write(level3, "Signal:\t%d\n", s.Terminated.Signal)
		}
		w.write(level3, "Started:\t%s\n", timestamp(s.Terminated.StartedAt))
		w.write(level3, "Finished:\t%s\n", timestamp(s.Terminated.FinishedAt))
	default:
		w.write(level2, "%s:\tWaiting\n", name)
	}
}

// resourceList prints "Title:" at level and each quantity, by name, one
// level below: a container's Limits and Requests, a node's Capacity and
// Allocatable.
func resourceList(w *prefixWriter, level int, title string, rl api.ResourceList) {
	if len(rl) == 0 {
		return
	}
	w.write(level, "%s:\n", title)
	for _, n := range slices.Sorted(maps.Keys(rl)) {
		q := rl[n]
		w.write(level+1, "%s:\t%s\n", n, q.String())
	}
}

func probe(w *prefixWriter, title string, p *api.Probe) {
	if p == nil {
		return
	}
	attrs := fmt.Sprintf("delay=%ds timeout=%ds period=%ds #success=%d #failure=%d",
		p.InitialDelaySeconds, p.TimeoutSeconds, p.PeriodSeconds, p.SuccessThreshold, p.FailureThreshold)
	switch {
	case p.Exec != nil:
		w.write(level2, "%s:\texec %v %s\n", title, p.Exec.Command, attrs)
	case p.HTTPGet != nil:
		scheme := strings.ToLower(string(p.HTTPGet.Scheme))
		if scheme == "" {
			scheme = "http"
		}
		host := p.HTTPGet.Host
		w.write(level2, "%s:\thttp-get %s://%s:%s%s %s\n", title, scheme, host, p.HTTPGet.Port.String(), p.HTTPGet.Path, attrs)
	case p.TCPSocket != nil:
		w.write(level2, "%s:\ttcp-socket %s:%s %s\n", title, p.TCPSocket.Host, p.TCPSocket.Port.String(), attrs)
	case p.GRPC != nil:
		w.write(level2, "%s:\tgrpc <pod>:%d %s %s\n", title, p.GRPC.Port, ptrString(p.GRPC.Service), attrs)
	default:
		w.write(level2, "%s:\tunknown %s\n", title, attrs)
	}
}

func ptrString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func env(w *prefixWriter, c api.Container) {
	for _, e := range c.EnvFrom {
		from, name, optional := "", "", false
		switch {
		case e.ConfigMapRef != nil:
			from, name = "ConfigMap", e.ConfigMapRef.Name
			optional = e.ConfigMapRef.Optional != nil && *e.ConfigMapRef.Optional
		case e.SecretRef != nil:
			from, name = "Secret", e.SecretRef.Name
			optional = e.SecretRef.Optional != nil && *e.SecretRef.Optional
		}
		if from == "" {
			continue
		}
		if len(c.EnvFrom) > 0 && e.Prefix == "" {
			w.write(level2, "Environment Variables from:\n")
			w.write(level3, "%s\t%s\tOptional: %t\n", name, from, optional)
		} else {
			w.write(level2, "Environment Variables from:\n")
			w.write(level3, "%s\t%s with prefix '%s'\tOptional: %t\n", name, from, e.Prefix, optional)
		}
	}
	none := ""
	if len(c.Env) == 0 {
		none = "\t<none>"
	}
	w.write(level2, "Environment:%s\n", none)
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			for i, s := range strings.Split(e.Value, "\n") {
				if i == 0 {
					w.write(level3, "%s:\t%s\n", e.Name, s)
				} else {
					w.write(level3, "\t%s\n", s)
				}
			}
			continue
		}
		vf := e.ValueFrom
		switch {
		case vf.FieldRef != nil:
			w.write(level3, "%s:\t (%s:%s)\n", e.Name, vf.FieldRef.APIVersion, vf.FieldRef.FieldPath)
		case vf.ResourceFieldRef != nil:
			w.write(level3, "%s:\t%s (%s)\n", e.Name, vf.ResourceFieldRef.Resource, vf.ResourceFieldRef.ContainerName)
		case vf.ConfigMapKeyRef != nil:
			opt := vf.ConfigMapKeyRef.Optional != nil && *vf.ConfigMapKeyRef.Optional
			w.write(level3, "%s:\t<set to the key '%s' of config map '%s'>\tOptional: %t\n", e.Name, vf.ConfigMapKeyRef.Key, vf.ConfigMapKeyRef.Name, opt)
		case vf.SecretKeyRef != nil:
			opt := vf.SecretKeyRef.Optional != nil && *vf.SecretKeyRef.Optional
			w.write(level3, "%s:\t<set to the key '%s' in secret '%s'>\tOptional: %t\n", e.Name, vf.SecretKeyRef.Key, vf.SecretKeyRef.Name, opt)
		}
	}
}

func mounts(w *prefixWriter, ms []api.VolumeMount) {
	none := ""
	if len(ms) == 0 {
		none = "\t<none>"
	}
	w.write(level2, "Mounts:%s\n", none)
	sorted := append([]api.VolumeMount(nil), ms...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].MountPath < sorted[j].MountPath })
	for _, m := range sorted {
		flags := []string{"rw"}
		if m.ReadOnly {
			flags = []string{"ro"}
		}
		if m.SubPath != "" {
			flags = append(flags, fmt.Sprintf("path=%q", m.SubPath))
		}
		w.write(level3, "%s from %s (%s)\n", m.MountPath, m.Name, strings.Join(flags, ","))
	}
}

// qosClass is the pod's QoS class, computed as Kubernetes does when the
// status does not carry it.
func qosClass(p *api.Pod) string {
	if p.Status.QOSClass != "" {
		return string(p.Status.QOSClass)
	}
	requests, limits := map[api.ResourceName]resource.Quantity{}, map[api.ResourceName]resource.Quantity{}
	guaranteed := true
	for _, c := range append(append([]api.Container(nil), p.Spec.InitContainers...), p.Spec.Containers...) {
		for _, n := range []api.ResourceName{api.ResourceCPU, api.ResourceMemory} {
			r, hasR := c.Resources.Requests[n]
			l, hasL := c.Resources.Limits[n]
			if hasR && !r.IsZero() {
				q := requests[n]
				q.Add(r)
				requests[n] = q
			}
			if hasL && !l.IsZero() {
				q := limits[n]
				q.Add(l)
				limits[n] = q
			} else {
				guaranteed = false
			}
			if hasR && hasL && r.Cmp(l) != 0 {
				guaranteed = false
			}
		}
	}
	if len(requests) == 0 && len(limits) == 0 {
		return "BestEffort"
	}
	if guaranteed && len(limits) == 2 {
		return "Guaranteed"
	}
	return "Burstable"
}

func describePod(w *prefixWriter, p *api.Pod, evs []api.Event, now time.Time) {
	w.write(level0, "Name:\t%s\n", p.Name)
	w.write(level0, "Namespace:\t%s\n", p.Namespace)
	if p.Spec.Priority != nil {
		w.write(level0, "Priority:\t%d\n", *p.Spec.Priority)
	}
	if p.Spec.PriorityClassName != "" {
		w.write(level0, "Priority Class Name:\t%s\n", p.Spec.PriorityClassName)
	}
	if p.Spec.RuntimeClassName != nil && *p.Spec.RuntimeClassName != "" {
		w.write(level0, "Runtime Class Name:\t%s\n", *p.Spec.RuntimeClassName)
	}
	if p.Spec.ServiceAccountName != "" {
		w.write(level0, "Service Account:\t%s\n", p.Spec.ServiceAccountName)
	}
	if p.Spec.NodeName == "" {
		w.write(level0, "Node:\t<none>\n")
	} else {
		w.write(level0, "Node:\t%s\n", p.Spec.NodeName+"/"+p.Status.HostIP)
	}
	if p.Status.StartTime != nil {
		w.write(level0, "Start Time:\t%s\n", timestamp(*p.Status.StartTime))
	}
	w.labels("Labels", p.Labels)
	w.annotations("Annotations", p.Annotations)
	if p.DeletionTimestamp != nil {
		w.write(level0, "Status:\tTerminating (lasts %s)\n", since(p.DeletionTimestamp.Time, now))
		if p.DeletionGracePeriodSeconds != nil {
			w.write(level0, "Termination Grace Period:\t%ds\n", *p.DeletionGracePeriodSeconds)
		}
	} else {
		w.write(level0, "Status:\t%s\n", string(p.Status.Phase))
	}
	if p.Status.Reason != "" {
		w.write(level0, "Reason:\t%s\n", p.Status.Reason)
	}
	if p.Status.Message != "" {
		w.write(level0, "Message:\t%s\n", p.Status.Message)
	}
	w.write(level0, "IP:\t%s\n", p.Status.PodIP)
	if len(p.Status.PodIPs) == 0 {
		w.write(level0, "IPs:\t<none>\n")
	} else {
		w.write(level0, "IPs:\n")
		for _, ip := range p.Status.PodIPs {
			w.write(level1, "IP:\t%s\n", ip.IP)
		}
	}
	if c := controller(&p.ObjectMeta); c != "" {
		w.write(level0, "Controlled By:\t%s\n", c)
	}
	if p.Status.NominatedNodeName != "" {
		w.write(level0, "NominatedNodeName:\t%s\n", p.Status.NominatedNodeName)
	}
	if len(p.Spec.InitContainers) > 0 {
		containers(w, "Init Containers", p.Spec.InitContainers, p.Status.InitContainerStatuses, "")
	}
	containers(w, "Containers", p.Spec.Containers, p.Status.ContainerStatuses, "")
	if len(p.Spec.EphemeralContainers) > 0 {
		ec := make([]api.Container, 0, len(p.Spec.EphemeralContainers))
		for _, c := range p.Spec.EphemeralContainers {
			ec = append(ec, c.Container)
		}
		containers(w, "Ephemeral Containers", ec, p.Status.EphemeralContainerStatuses, "")
	}
	if len(p.Status.Conditions) > 0 {
		w.write(level0, "Conditions:\n  Type\tStatus\n")
		for _, c := range p.Status.Conditions {
			w.write(level1, "%v \t%v \n", c.Type, c.Status)
		}
	}
	volumes(w, p.Spec.Volumes, "")
	w.write(level0, "QoS Class:\t%s\n", qosClass(p))
	w.labels("Node-Selectors", p.Spec.NodeSelector)
	w.tolerations("Tolerations", p.Spec.Tolerations)
	w.events(evs, now)
}
