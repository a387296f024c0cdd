package describers

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/labels"
	"github.com/minik8s/minik8s/api/resource"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/deployment"
	"github.com/minik8s/minik8s/kubectl-lite/printers"
)

// controlledReplicaSets are the ReplicaSets d controls: the one whose
// template matches d's (new) and the others that still have replicas (old).
func controlledReplicaSets(ctx context.Context, c *client.Client, d *api.Deployment) (old []api.ReplicaSet, current *api.ReplicaSet, err error) {
	rss, err := deployment.ReplicaSets(ctx, c, d)
	if err != nil {
		return nil, nil, err
	}
	for i := range rss {
		rs := &rss[i]
		if current == nil && api.EqualIgnoreHash(&rs.Spec.Template, &d.Spec.Template) {
			current = rs
			continue
		}
		if (rs.Spec.Replicas != nil && *rs.Spec.Replicas > 0) || rs.Status.Replicas > 0 {
			old = append(old, *rs)
		}
	}
	return old, current, nil
}

func replicaSetList(rss []api.ReplicaSet) string {
	if len(rss) == 0 {
		return "<none>"
	}
	parts := make([]string, len(rss))
	for i, rs := range rss {
		desired := int32(0)
		if rs.Spec.Replicas != nil {
			desired = *rs.Spec.Replicas
		}
		parts[i] = fmt.Sprintf("%s (%d/%d replicas created)", rs.Name, rs.Status.Replicas, desired)
	}
	return strings.Join(parts, ", ")
}

func describeDeployment(w *prefixWriter, d *api.Deployment, old []api.ReplicaSet, cur *api.ReplicaSet, evs []api.Event, now time.Time) {
	replicas := int32(1)
	if d.Spec.Replicas != nil {
		replicas = *d.Spec.Replicas
	}
	w.write(level0, "Name:\t%s\n", d.Name)
	w.write(level0, "Namespace:\t%s\n", d.Namespace)
	w.write(level0, "CreationTimestamp:\t%s\n", timestamp(d.CreationTimestamp))
	w.labels("Labels", d.Labels)
	w.annotations("Annotations", d.Annotations)
	w.write(level0, "Selector:\t%s\n", selectorString(d.Spec.Selector))
	w.write(level0, "Replicas:\t%d desired | %d updated | %d total | %d available | %d unavailable\n",
		replicas, d.Status.UpdatedReplicas, d.Status.Replicas, d.Status.AvailableReplicas, d.Status.UnavailableReplicas)
	w.write(level0, "StrategyType:\t%s\n", d.Spec.Strategy.Type)
	w.write(level0, "MinReadySeconds:\t%d\n", d.Spec.MinReadySeconds)
	if ru := d.Spec.Strategy.RollingUpdate; ru != nil {
		w.write(level0, "RollingUpdateStrategy:\t%s max unavailable, %s max surge\n", intOrPercent(ru.MaxUnavailable), intOrPercent(ru.MaxSurge))
	}
	podTemplate(w, &d.Spec.Template)
	if len(d.Status.Conditions) > 0 {
		w.write(level0, "Conditions:\n  Type\tStatus\tReason\n")
		w.write(level1, "----\t------\t------\n")
		for _, c := range d.Status.Conditions {
			w.write(level1, "%v \t%v\t%v\n", c.Type, c.Status, c.Reason)
		}
	}
	if len(old) > 0 || cur != nil {
		w.write(level0, "OldReplicaSets:\t%s\n", replicaSetList(old))
		var news []api.ReplicaSet
		if cur != nil {
			news = []api.ReplicaSet{*cur}
		}
		w.write(level0, "NewReplicaSet:\t%s\n", replicaSetList(news))
	}
	w.events(evs, now)
}

func intOrPercent(v *api.IntOrString) string {
	if v == nil {
		return "<nil>"
	}
	return v.String()
}

// podPhases counts pods by phase, as kubectl's getPodStatusForController.
func podPhases(pods []api.Pod) (running, waiting, succeeded, failed int) {
	for _, p := range pods {
		switch p.Status.Phase {
		case api.PodRunning:
			running++
		case api.PodPending:
			waiting++
		case api.PodSucceeded:
			succeeded++
		case api.PodFailed:
			failed++
		}
	}
	return
}

// describeStatefulSet is kubectl's.
func describeStatefulSet(w *prefixWriter, s *api.StatefulSet, pods []api.Pod, evs []api.Event, now time.Time) {
	replicas := int32(1)
	if s.Spec.Replicas != nil {
		replicas = *s.Spec.Replicas
	}
	w.write(level0, "Name:\t%s\n", s.Name)
	w.write(level0, "Namespace:\t%s\n", s.Namespace)
	w.write(level0, "CreationTimestamp:\t%s\n", s.CreationTimestamp.Time.Format(time.RFC1123Z))
	w.write(level0, "Selector:\t%s\n", selectorString(s.Spec.Selector))
	w.labels("Labels", s.Labels)
	w.annotations("Annotations", s.Annotations)
	if s.Spec.ServiceName != "" {
		w.write(level0, "Service Name:\t%s\n", s.Spec.ServiceName)
	}
	if s.Spec.PodManagementPolicy != "" {
		w.write(level0, "Pod Management Policy:\t%s\n", s.Spec.PodManagementPolicy)
	}
	w.write(level0, "Replicas:\t%d desired | %d total\n", replicas, s.Status.Replicas)
	w.write(level0, "Update Strategy:\t%s\n", s.Spec.UpdateStrategy.Type)
	if ru := s.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil {
		w.write(level1, "Partition:\t%d\n", *ru.Partition)
		if ru.MaxUnavailable != nil {
			w.write(level1, "MaxUnavailable:\t%s\n", intOrPercent(ru.MaxUnavailable))
		}
	}
	if p := s.Spec.PersistentVolumeClaimRetentionPolicy; p != nil {
		w.write(level0, "Persistent Volume Claim Retention Policy:\n")
		w.write(level1, "WhenDeleted:\t%s\n", p.WhenDeleted)
		w.write(level1, "WhenScaled:\t%s\n", p.WhenScaled)
	}
	running, waiting, succeeded, failed := podPhases(pods)
	w.write(level0, "Pods Status:\t%d Running / %d Waiting / %d Succeeded / %d Failed\n", running, waiting, succeeded, failed)
	podTemplate(w, &s.Spec.Template)
	if len(s.Spec.VolumeClaimTemplates) == 0 {
		w.write(level0, "Volume Claims:\t<none>\n")
	} else {
		w.write(level0, "Volume Claims:\n")
		for _, pvc := range s.Spec.VolumeClaimTemplates {
			w.write(level1, "Name:\t%s\n", pvc.Name)
			class := pvc.Annotations["volume.beta.kubernetes.io/storage-class"]
			if class == "" && pvc.Spec.StorageClassName != nil {
				class = *pvc.Spec.StorageClassName
			}
			w.write(level1, "StorageClass:\t%s\n", class)
			w.labels("  Labels", pvc.Labels)
			w.labels("  Annotations", pvc.Annotations)
			if c, ok := pvc.Spec.Resources.Requests["storage"]; ok {
				w.write(level1, "Capacity:\t%s\n", c.String())
			} else {
				w.write(level1, "Capacity:\t%s\n", "<default>")
			}
			w.write(level1, "Access Modes:\t%v\n", pvc.Spec.AccessModes)
		}
	}
	w.events(evs, now)
}

// describeDaemonSet is kubectl's.
func describeDaemonSet(w *prefixWriter, ds *api.DaemonSet, pods []api.Pod, evs []api.Event, now time.Time) {
	w.write(level0, "Name:\t%s\n", ds.Name)
	w.write(level0, "Namespace:\t%s\n", ds.Namespace)
	w.write(level0, "Selector:\t%s\n", selectorString(ds.Spec.Selector))
	w.write(level0, "Node-Selector:\t%s\n", labels.FormatLabels(ds.Spec.Template.Spec.NodeSelector))
	w.labels("Labels", ds.Labels)
	w.annotations("Annotations", ds.Annotations)
	st := ds.Status
	w.write(level0, "Desired Number of Nodes Scheduled: %d\n", st.DesiredNumberScheduled)
	w.write(level0, "Current Number of Nodes Scheduled: %d\n", st.CurrentNumberScheduled)
	w.write(level0, "Number of Nodes Scheduled with Up-to-date Pods: %d\n", st.UpdatedNumberScheduled)
	w.write(level0, "Number of Nodes Scheduled with Available Pods: %d\n", st.NumberAvailable)
	w.write(level0, "Number of Nodes Misscheduled: %d\n", st.NumberMisscheduled)
	running, waiting, succeeded, failed := podPhases(pods)
	w.write(level0, "Pods Status:\t%d Running / %d Waiting / %d Succeeded / %d Failed\n", running, waiting, succeeded, failed)
	podTemplate(w, &ds.Spec.Template)
	w.events(evs, now)
}

func describeReplicaSet(w *prefixWriter, rs *api.ReplicaSet, pods []api.Pod, evs []api.Event, now time.Time) {
	replicas := int32(1)
	if rs.Spec.Replicas != nil {
		replicas = *rs.Spec.Replicas
	}
	running, waiting, succeeded, failed := podPhases(pods)
	w.write(level0, "Name:\t%s\n", rs.Name)
	w.write(level0, "Namespace:\t%s\n", rs.Namespace)
	w.write(level0, "Selector:\t%s\n", selectorString(rs.Spec.Selector))
	w.labels("Labels", rs.Labels)
	w.annotations("Annotations", rs.Annotations)
	if c := controller(&rs.ObjectMeta); c != "" {
		w.write(level0, "Controlled By:\t%s\n", c)
	}
	w.write(level0, "Replicas:\t%d current / %d desired\n", rs.Status.Replicas, replicas)
	w.write(level0, "Pods Status:\t%d Running / %d Waiting / %d Succeeded / %d Failed\n", running, waiting, succeeded, failed)
	podTemplate(w, &rs.Spec.Template)
	if len(rs.Status.Conditions) > 0 {
		w.write(level0, "Conditions:\n  Type\tStatus\tReason\n")
		w.write(level1, "----\t------\t------\n")
		for _, c := range rs.Status.Conditions {
			w.write(level1, "%v \t%v\t%v\n", c.Type, c.Status, c.Reason)
		}
	}
	w.events(evs, now)
}

func describeService(w *prefixWriter, s *api.Service, slices []api.EndpointSlice, evs []api.Event, now time.Time) {
	w.write(level0, "Name:\t%s\n", s.Name)
	w.write(level0, "Namespace:\t%s\n", s.Namespace)
	w.labels("Labels", s.Labels)
	w.annotations("Annotations", s.Annotations)
	w.write(level0, "Selector:\t%s\n", labels.FormatLabels(s.Spec.Selector))
	w.write(level0, "Type:\t%s\n", s.Spec.Type)
	if s.Spec.IPFamilyPolicy != nil {
		w.write(level0, "IP Family Policy:\t%s\n", *s.Spec.IPFamilyPolicy)
	}
	if len(s.Spec.IPFamilies) > 0 {
		fams := make([]string, len(s.Spec.IPFamilies))
		for i, f := range s.Spec.IPFamilies {
			fams[i] = string(f)
		}
		w.write(level0, "IP Families:\t%s\n", strings.Join(fams, ","))
	}
	w.write(level0, "IP:\t%s\n", s.Spec.ClusterIP)
	if len(s.Spec.ClusterIPs) > 0 {
		w.write(level0, "IPs:\t%s\n", strings.Join(s.Spec.ClusterIPs, ","))
	}
	if len(s.Spec.ExternalIPs) > 0 {
		w.write(level0, "External IPs:\t%v\n", strings.Join(s.Spec.ExternalIPs, ","))
	}
	if s.Spec.ExternalName != "" {
		w.write(level0, "External Name:\t%s\n", s.Spec.ExternalName)
	}
	for _, sp := range s.Spec.Ports {
		name := sp.Name
		if name == "" {
			name = "<unset>"
		}
		proto := sp.Protocol
		if proto == "" {
			proto = api.ProtocolTCP
		}
		w.write(level0, "Port:\t%s\t%d/%s\n", name, sp.Port, proto)
		if sp.TargetPort.Type == api.String {
			w.write(level0, "TargetPort:\t%s/%s\n", sp.TargetPort.StrVal, proto)
		} else {
			tp := sp.TargetPort.IntVal
			if tp == 0 {
				tp = sp.Port
			}
			w.write(level0, "TargetPort:\t%d/%s\n", tp, proto)
		}
		if sp.NodePort != 0 {
			w.write(level0, "NodePort:\t%s\t%d/%s\n", name, sp.NodePort, proto)
		}
		w.write(level0, "Endpoints:\t%s\n", endpointsFor(slices, sp.Name))
	}
	w.write(level0, "Session Affinity:\t%s\n", printers.OrNone(string(s.Spec.SessionAffinity)))
	if s.Spec.ExternalTrafficPolicy != "" {
		w.write(level0, "External Traffic Policy:\t%s\n", s.Spec.ExternalTrafficPolicy)
	}
	if s.Spec.InternalTrafficPolicy != nil {
		w.write(level0, "Internal Traffic Policy:\t%s\n", *s.Spec.InternalTrafficPolicy)
	}
	w.events(evs, now)
}

// endpointsFor lists the ready addresses of slices serving the port named
// name, at most three and a count of the rest, as kubectl's
// formatEndpointSlices: "<none>" without slices, "" when none serves it.
// A slice without ports (a headless service) lists its addresses alone.
func endpointsFor(slices []api.EndpointSlice, name string) string {
	if len(slices) == 0 {
		return "<none>"
	}
	const max = 3
	var list []string
	count, more := 0, false
	// As kubectl: a fourth endpoint, ready or not, makes the list "more".
	add := func(e api.Endpoint, addr string) {
		if len(list) == max {
			more = true
		}
		if e.Conditions.Ready != nil && !*e.Conditions.Ready {
			return
		}
		if !more {
			list = append(list, addr)
		}
		count++
	}
	for _, s := range slices {
		if len(s.Ports) == 0 {
			for _, e := range s.Endpoints {
				if len(e.Addresses) > 0 {
					add(e, e.Addresses[0])
				}
			}
			continue
		}
		for _, p := range s.Ports {
			if p.Name != nil && *p.Name != name || p.Name == nil && name != "" {
				continue
			}
			port := int32(0)
			if p.Port != nil {
				port = *p.Port
			}
			for _, e := range s.Endpoints {
				if len(e.Addresses) > 0 {
					add(e, net.JoinHostPort(e.Addresses[0], strconv.Itoa(int(port))))
				}
			}
		}
	}
	out := strings.Join(list, ",")
	if more {
		return fmt.Sprintf("%s + %d more...", out, count-max)
	}
	return out
}

func describeNode(w *prefixWriter, n *api.Node, lease *api.Lease, pods []api.Pod, evs []api.Event, now time.Time) {
	w.write(level0, "Name:\t%s\n", n.Name)
	w.write(level0, "Roles:\t%s\n", printers.NodeRoles(n.Labels))
	w.labels("Labels", n.Labels)
	w.annotations("Annotations", n.Annotations)
	w.write(level0, "CreationTimestamp:\t%s\n", timestamp(n.CreationTimestamp))
	if len(n.Spec.Taints) == 0 {
		w.write(level0, "Taints:\t<none>\n")
	} else {
		for i, t := range n.Spec.Taints {
			s := t.Key
			if t.Value != "" {
				s += "=" + t.Value
			}
			s += ":" + string(t.Effect)
			if i == 0 {
				w.write(level0, "Taints:\t%s\n", s)
			} else {
				w.write(level0, "\t%s\n", s)
			}
		}
	}
	w.write(level0, "Unschedulable:\t%v\n", n.Spec.Unschedulable)
	w.write(level0, "Lease:\n")
	if lease == nil {
		w.write(level1, "Failed to get lease: leases.coordination.k8s.io %q not found\n", n.Name)
	} else {
		holder := "<unset>"
		if lease.Spec.HolderIdentity != nil {
			holder = *lease.Spec.HolderIdentity
		}
		w.write(level1, "HolderIdentity:\t%s\n", holder)
		w.write(level1, "AcquireTime:\t%s\n", microTime(lease.Spec.AcquireTime))
		w.write(level1, "RenewTime:\t%s\n", microTime(lease.Spec.RenewTime))
	}
	if len(n.Status.Conditions) > 0 {
		w.write(level0, "Conditions:\n  Type\tStatus\tLastHeartbeatTime\tLastTransitionTime\tReason\tMessage\n")
		w.write(level1, "----\t------\t-----------------\t------------------\t------\t-------\n")
		for _, c := range n.Status.Conditions {
			w.write(level1, "%v \t%v \t%s \t%s \t%v \t%v\n", c.Type, c.Status,
				timestamp(c.LastHeartbeatTime), timestamp(c.LastTransitionTime), c.Reason, c.Message)
		}
	}
	w.write(level0, "Addresses:\n")
	for _, a := range n.Status.Addresses {
		w.write(level1, "%s:\t%s\n", a.Type, a.Address)
	}
	resourceList(w, level0, "Capacity", n.Status.Capacity)
	resourceList(w, level0, "Allocatable", n.Status.Allocatable)
	ni := n.Status.NodeInfo
	w.write(level0, "System Info:\n")
	w.write(level0, "  Machine ID:\t%s\n", ni.MachineID)
	w.write(level0, "  System UUID:\t%s\n", ni.SystemUUID)
	w.write(level0, "  Boot ID:\t%s\n", ni.BootID)
	w.write(level0, "  Kernel Version:\t%s\n", ni.KernelVersion)
	w.write(level0, "  OS Image:\t%s\n", ni.OSImage)
	w.write(level0, "  Operating System:\t%s\n", ni.OperatingSystem)
	w.write(level0, "  Architecture:\t%s\n", ni.Architecture)
	w.write(level0, "  Container Runtime Version:\t%s\n", ni.ContainerRuntimeVersion)
	w.write(level0, "  Kubelet Version:\t%s\n", ni.KubeletVersion)
	w.write(level0, "  Kube-Proxy Version:\t%s\n", ni.KubeProxyVersion)
	if n.Spec.PodCIDR != "" {
		w.write(level0, "PodCIDR:\t%s\n", n.Spec.PodCIDR)
		cidrs := n.Spec.PodCIDRs
		if len(cidrs) == 0 {
			cidrs = []string{n.Spec.PodCIDR}
		}
		w.write(level0, "PodCIDRs:\t%s\n", strings.Join(cidrs, ","))
	}
	if n.Spec.ProviderID != "" {
		w.write(level0, "ProviderID:\t%s\n", n.Spec.ProviderID)
	}
	nodeResources(w, n, pods, now)
	w.events(evs, now)
}

func microTime(t *api.MicroTime) string {
	if t == nil || t.IsZero() {
		return "<unset>"
	}
	return t.Format(time.RFC1123Z)
}

// nodeResources writes the Non-terminated Pods table and the Allocated
// resources summary of a node.
func nodeResources(w *prefixWriter, n *api.Node, pods []api.Pod, now time.Time) {
	var live []api.Pod
	for _, p := range pods {
		if p.Status.Phase != api.PodSucceeded && p.Status.Phase != api.PodFailed {
			live = append(live, p)
		}
	}
	alloc := n.Status.Allocatable
	if len(alloc) == 0 {
		alloc = n.Status.Capacity
	}
	pct := func(q resource.Quantity, name api.ResourceName) string {
		total := alloc[name]
		if total.IsZero() {
			return "0"
		}
		return fmt.Sprintf("%d", int64(float64(q.MilliValue())/float64(total.MilliValue())*100))
	}
	w.write(level0, "Non-terminated Pods:\t(%d in total)\n", len(live))
	w.write(level1, "Namespace\tName\t\tCPU Requests\tCPU Limits\tMemory Requests\tMemory Limits\tAge\n")
	w.write(level1, "---------\t----\t\t------------\t----------\t---------------\t-------------\t---\n")
	var reqCPU, limCPU, reqMem, limMem resource.Quantity
	for _, p := range live {
		var rc, lc, rm, lm resource.Quantity
		for _, c := range p.Spec.Containers {
			rc.Add(c.Resources.Requests.Cpu())
			lc.Add(c.Resources.Limits.Cpu())
			rm.Add(c.Resources.Requests[api.ResourceMemory])
			lm.Add(c.Resources.Limits[api.ResourceMemory])
		}
		reqCPU.Add(rc)
		limCPU.Add(lc)
		reqMem.Add(rm)
		limMem.Add(lm)
		w.write(level1, "%s\t%s\t\t%s (%s%%)\t%s (%s%%)\t%s (%s%%)\t%s (%s%%)\t%s\n", p.Namespace, p.Name,
			rc.String(), pct(rc, api.ResourceCPU), lc.String(), pct(lc, api.ResourceCPU),
			rm.String(), pct(rm, api.ResourceMemory), lm.String(), pct(lm, api.ResourceMemory),
			since(p.CreationTimestamp.Time, now))
	}
	w.write(level0, "Allocated resources:\n  (Total limits may be over 100 percent, i.e., overcommitted.)\n")
	w.write(level1, "Resource\tRequests\tLimits\n")
	w.write(level1, "--------\t--------\t------\n")
	w.write(level1, "%s\t%s (%s%%)\t%s (%s%%)\n", api.ResourceCPU, reqCPU.String(), pct(reqCPU, api.ResourceCPU), limCPU.String(), pct(limCPU, api.ResourceCPU))
	w.write(level1, "%s\t%s (%s%%)\t%s (%s%%)\n", api.ResourceMemory, reqMem.String(), pct(reqMem, api.ResourceMemory), limMem.String(), pct(limMem, api.ResourceMemory))
}
