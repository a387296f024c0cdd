package nodestatus

import (
	"bytes"
	"encoding/json"
	"net"
	"runtime"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
)

// Thresholds are the hard eviction thresholds (--eviction-hard) the
// pressure conditions are computed against and allocatable is reduced by.
type Thresholds struct {
	// MemoryAvailable is memory.available (kube default 100Mi).
	MemoryAvailable int64
	// NodeFsAvailablePercent is nodefs.available in percent (default 10).
	NodeFsAvailablePercent float64
	// NodeFsInodesFreePercent is nodefs.inodesFree in percent (default 5).
	NodeFsInodesFreePercent float64
	// PIDAvailable is pid.available in processes (0: no threshold, as kube).
	PIDAvailable int64
}

// DefaultThresholds are the kubelet's default --eviction-hard on Linux.
var DefaultThresholds = Thresholds{MemoryAvailable: 100 << 20, NodeFsAvailablePercent: 10, NodeFsInodesFreePercent: 5}

// Condition reasons and messages, the kubelet's.
const (
	reasonReady                 = "KubeletReady"
	reasonNotReady              = "KubeletNotReady"
	messageReady                = "kubelet is posting ready status"
	reasonSufficientMemory      = "KubeletHasSufficientMemory"
	reasonInsufficientMemory    = "KubeletHasInsufficientMemory"
	reasonNoDiskPressure        = "KubeletHasNoDiskPressure"
	reasonDiskPressure          = "KubeletHasDiskPressure"
	reasonSufficientPID         = "KubeletHasSufficientPID"
	reasonInsufficientPID       = "KubeletHasInsufficientPID"
	messageSufficientMemory     = "kubelet has sufficient memory available"
	messageInsufficientMemory   = "kubelet has insufficient memory available"
	messageNoDiskPressure       = "kubelet has no disk pressure"
	messageDiskPressure         = "kubelet has disk pressure"
	messageSufficientPID        = "kubelet has sufficient PID available"
	messageInsufficientPID      = "kubelet has insufficient PID available"
	eventNodeReady              = "NodeReady"
	eventNodeNotReady           = "NodeNotReady"
	eventNodeSufficientMemory   = "NodeHasSufficientMemory"
	eventNodeInsufficientMemory = "NodeHasInsufficientMemory"
	eventNodeNoDiskPressure     = "NodeHasNoDiskPressure"
	eventNodeDiskPressure       = "NodeHasDiskPressure"
	eventNodeSufficientPID      = "NodeHasSufficientPID"
	eventNodeInsufficientPID    = "NodeHasInsufficientPID"
)

// statusInput is everything one status computation depends on.
type statusInput struct {
	Machine        Machine
	MaxPods        int
	Reserved       api.ResourceList // system-reserved + kube-reserved
	Thresholds     Thresholds
	NodeIP         net.IP
	Hostname       string
	RuntimeVersion string
	KubeletVersion string
	KubeletPort    int
	// RuntimeErr is why the node is not ready (nil: ready).
	RuntimeErr error
	Now        time.Time
}

// capacity is what the machine has.
func capacity(in statusInput) api.ResourceList {
	m := in.Machine
	return api.ResourceList{
		api.ResourceCPU:              *resource.NewQuantity(int64(m.NumCPU), resource.DecimalSI),
		api.ResourceMemory:           *resource.NewQuantity(m.MemoryCapacity, resource.BinarySI),
		api.ResourcePods:             *resource.NewQuantity(int64(in.MaxPods), resource.DecimalSI),
		api.ResourceEphemeralStorage: *resource.NewQuantity(m.FsCapacity, resource.BinarySI),
	}
}

// allocatable is kube's node allocatable: capacity minus system-reserved,
// kube-reserved and the hard eviction thresholds (memory.available from
// memory, nodefs.available from ephemeral-storage), never below zero.
func allocatable(capacity api.ResourceList, reserved api.ResourceList, t Thresholds) api.ResourceList {
	out := api.ResourceList{}
	for name, q := range capacity {
		v := q.DeepCopy()
		if r, ok := reserved[name]; ok {
			v.Sub(r)
		}
		switch name {
		case api.ResourceMemory:
			v.Sub(*resource.NewQuantity(t.MemoryAvailable, resource.BinarySI))
		case api.ResourceEphemeralStorage:
			v.Sub(*resource.NewQuantity(int64(float64(q.Value())*t.NodeFsAvailablePercent/100), resource.BinarySI))
		}
		if v.Sign() < 0 {
			v = *resource.NewQuantity(0, q.Format)
		}
		out[name] = v
	}
	return out
}

// pressure evaluates the hard thresholds on a reading.
func pressure(m Machine, t Thresholds) (memory, disk, pid bool) {
	memory = t.MemoryAvailable > 0 && m.MemoryAvailable < t.MemoryAvailable
	if m.FsCapacity > 0 && t.NodeFsAvailablePercent > 0 {
		disk = float64(m.FsAvailable) < float64(m.FsCapacity)*t.NodeFsAvailablePercent/100
	}
	if m.FsInodes > 0 && t.NodeFsInodesFreePercent > 0 {
		disk = disk || float64(m.FsInodesFree) < float64(m.FsInodes)*t.NodeFsInodesFreePercent/100
	}
	if t.PIDAvailable > 0 && m.PIDMax > 0 {
		pid = m.PIDMax-m.Processes < t.PIDAvailable
	}
	return memory, disk, pid
}

// conditionEvent is an event to record because a condition changed.
type conditionEvent struct {
	Type, Reason string
}

// setStatus computes node.Status from in, keeping the lastTransitionTime of
// conditions whose status did not change, and returns the events of the
// conditions that changed (or appeared), in kube's vocabulary.
func setStatus(node *api.Node, in statusInput) []conditionEvent {
	st := &node.Status
	machine := capacity(in)
	// Extended resources advertised by others (device plugins, an
	// operator's or a test's status patch) stay, as kube's kubelet keeps
	// them: only the machine's own resources are the kubelet's to set.
	for name, q := range st.Capacity {
		if api.IsExtendedResourceName(name) {
			machine[name] = q
		}
	}
	st.Capacity = machine
	st.Allocatable = allocatable(st.Capacity, in.Reserved, in.Thresholds)
	st.Addresses = addresses(in.NodeIP, in.Hostname)
	st.DaemonEndpoints.KubeletEndpoint.Port = int32(in.KubeletPort)
	st.NodeInfo = api.NodeSystemInfo{
		MachineID:               in.Machine.MachineID,
		SystemUUID:              in.Machine.SystemUUID,
		BootID:                  in.Machine.BootID,
		KernelVersion:           in.Machine.KernelVersion,
		OSImage:                 in.Machine.OSImage,
		ContainerRuntimeVersion: in.RuntimeVersion,
		KubeletVersion:          in.KubeletVersion,
		KubeProxyVersion:        in.KubeletVersion,
		OperatingSystem:         runtime.GOOS,
		Architecture:            runtime.GOARCH,
	}
	memP, diskP, pidP := pressure(in.Machine, in.Thresholds)
	var events []conditionEvent
	set := func(t api.NodeConditionType, status api.ConditionStatus, reason, message, event string) {
		now := api.NewTime(in.Now)
		for i := range st.Conditions {
			c := &st.Conditions[i]
			if c.Type != t {
				continue
			}
			if c.Status != status {
				c.LastTransitionTime = now
				events = append(events, conditionEvent{string(t), event})
			}
			c.Status, c.Reason, c.Message, c.LastHeartbeatTime = status, reason, message, now
			return
		}
		st.Conditions = append(st.Conditions, api.NodeCondition{Type: t, Status: status, Reason: reason, Message: message,
			LastHeartbeatTime: now, LastTransitionTime: now})
		events = append(events, conditionEvent{string(t), event})
	}
	if memP {
		set(api.NodeMemoryPressure, api.ConditionTrue, reasonInsufficientMemory, messageInsufficientMemory, eventNodeInsufficientMemory)
	} else {
		set(api.NodeMemoryPressure, api.ConditionFalse, reasonSufficientMemory, messageSufficientMemory, eventNodeSufficientMemory)
	}
	if diskP {
		set(api.NodeDiskPressure, api.ConditionTrue, reasonDiskPressure, messageDiskPressure, eventNodeDiskPressure)
	} else {
		set(api.NodeDiskPressure, api.ConditionFalse, reasonNoDiskPressure, messageNoDiskPressure, eventNodeNoDiskPressure)
	}
	if pidP {
		set(api.NodePIDPressure, api.ConditionTrue, reasonInsufficientPID, messageInsufficientPID, eventNodeInsufficientPID)
	} else {
		set(api.NodePIDPressure, api.ConditionFalse, reasonSufficientPID, messageSufficientPID, eventNodeSufficientPID)
	}
	if in.RuntimeErr != nil {
		set(api.NodeReady, api.ConditionFalse, reasonNotReady, in.RuntimeErr.Error(), eventNodeNotReady)
	} else {
		set(api.NodeReady, api.ConditionTrue, reasonReady, messageReady, eventNodeReady)
	}
	return events
}

// addresses are the node's InternalIP and Hostname.
func addresses(ip net.IP, hostname string) []api.NodeAddress {
	var out []api.NodeAddress
	if ip != nil {
		out = append(out, api.NodeAddress{Type: api.NodeInternalIP, Address: ip.String()})
	}
	if hostname != "" {
		out = append(out, api.NodeAddress{Type: api.NodeHostName, Address: hostname})
	}
	return out
}

// statusChanged reports whether two statuses differ in more than the
// conditions' heartbeat times (kube's nodeStatusHasChanged).
func statusChanged(a, b *api.NodeStatus) bool {
	ac, bc := api.DeepCopy(a), api.DeepCopy(b)
	for _, s := range []*api.NodeStatus{ac, bc} {
		for i := range s.Conditions {
			s.Conditions[i].LastHeartbeatTime = api.Time{}
		}
	}
	return !equalJSON(ac, bc)
}

func equalJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}
