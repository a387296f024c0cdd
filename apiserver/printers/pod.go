package printers

import (
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/minik8s/minik8s/api"
)

var podPrinter = printer([]api.TableColumnDefinition{
	nameColumn,
	col("Ready", "string", "The aggregate readiness state of this pod for accepting traffic."),
	col("Status", "string", "The aggregate status of the containers in this pod."),
	col("Restarts", "string", "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."),
	ageColumn,
	wide(col("IP", "string", corev1.PodStatus{}.SwaggerDoc()["podIP"]))[0],
	wide(col("Node", "string", corev1.PodSpec{}.SwaggerDoc()["nodeName"]))[0],
	wide(col("Nominated Node", "string", corev1.PodStatus{}.SwaggerDoc()["nominatedNodeName"]))[0],
	wide(col("Readiness Gates", "string", corev1.PodSpec{}.SwaggerDoc()["readinessGates"]))[0],
}, podRow)

var (
	podSucceededConditions = []api.TableRowCondition{{Type: api.RowCompleted, Status: api.ConditionTrue,
		Reason: string(api.PodSucceeded), Message: "The pod has completed successfully."}}
	podFailedConditions = []api.TableRowCondition{{Type: api.RowCompleted, Status: api.ConditionTrue,
		Reason: string(api.PodFailed), Message: "The pod failed."}}
)

// nodeUnreachablePodReason is the reason the node lifecycle controller
// gives pods of a node that stopped reporting.
const nodeUnreachablePodReason = "NodeLost"

// podRow is kube's printPod. STATUS is the pod's reason or phase,
// overridden while initializing by the first unfinished init container
// ("Init:0/2", "Init:CrashLoopBackOff", "Init:ExitCode:1"), then by the
// containers' waiting or terminated reasons (last container first), and by
// Terminating once deletion started. READY and RESTARTS count restartable
// init containers (sidecars) with the containers.
func podRow(pod *api.Pod, now time.Time) api.TableRow {
	restarts, sidecarRestarts := 0, 0
	total := len(pod.Spec.Containers)
	ready := 0
	var lastRestart, lastSidecarRestart time.Time

	reason := string(pod.Status.Phase)
	if pod.Status.Reason != "" {
		reason = pod.Status.Reason
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == api.PodScheduled && c.Reason == api.PodReasonSchedulingGated {
			reason = api.PodReasonSchedulingGated
		}
	}

	var row api.TableRow
	switch pod.Status.Phase {
	case api.PodSucceeded:
		row.Conditions = podSucceededConditions
	case api.PodFailed:
		row.Conditions = podFailedConditions
	}

	sidecars := map[string]bool{}
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == api.ContainerRestartPolicyAlways {
			sidecars[c.Name] = true
			total++
		}
	}

	initializing := false
	for i, c := range pod.Status.InitContainerStatuses {
		restarts += int(c.RestartCount)
		if t := c.LastTerminationState.Terminated; t != nil && lastRestart.Before(t.FinishedAt.Time) {
			lastRestart = t.FinishedAt.Time
		}
		if sidecars[c.Name] {
			sidecarRestarts += int(c.RestartCount)
			if t := c.LastTerminationState.Terminated; t != nil && lastSidecarRestart.Before(t.FinishedAt.Time) {
				lastSidecarRestart = t.FinishedAt.Time
			}
		}
		switch {
		case c.State.Terminated != nil && c.State.Terminated.ExitCode == 0:
			continue
		case sidecars[c.Name] && c.Started != nil && *c.Started:
			if c.Ready {
				ready++
			}
			continue
		case c.State.Terminated != nil:
			switch t := c.State.Terminated; {
			case t.Reason != "":
				reason = "Init:" + t.Reason
			case t.Signal != 0:
				reason = fmt.Sprintf("Init:Signal:%d", t.Signal)
			default:
				reason = fmt.Sprintf("Init:ExitCode:%d", t.ExitCode)
			}
		case c.State.Waiting != nil && c.State.Waiting.Reason != "" && c.State.Waiting.Reason != "PodInitializing":
			reason = "Init:" + c.State.Waiting.Reason
		default:
			reason = fmt.Sprintf("Init:%d/%d", i, len(pod.Spec.InitContainers))
		}
		initializing = true
		break
	}

	if !initializing || podInitialized(pod) {
		restarts, lastRestart = sidecarRestarts, lastSidecarRestart
		running := false
		// errorReason is the reason of the first container that failed.
		errorReason := ""
		for i := len(pod.Status.ContainerStatuses) - 1; i >= 0; i-- {
			c := pod.Status.ContainerStatuses[i]
			restarts += int(c.RestartCount)
			if t := c.LastTerminationState.Terminated; t != nil && lastRestart.Before(t.FinishedAt.Time) {
				lastRestart = t.FinishedAt.Time
			}
			switch t := c.State.Terminated; {
			case c.State.Waiting != nil && c.State.Waiting.Reason != "":
				reason = c.State.Waiting.Reason
			case t != nil:
				switch {
				case t.Reason != "":
					reason = t.Reason
				case t.Signal != 0:
					reason = fmt.Sprintf("Signal:%d", t.Signal)
				default:
					reason = fmt.Sprintf("ExitCode:%d", t.ExitCode)
				}
				if t.ExitCode != 0 {
					errorReason = reason
				}
			case c.Ready && c.State.Running != nil:
				running = true
				ready++
			}
		}
		// A pod whose last container completed is not Completed while
		// another runs (Running when ready, else NotReady) or after
		// another failed (that one's reason).
		if reason == "Completed" {
			switch {
			case running && podConditionTrue(pod, api.PodReady):
				reason = "Running"
			case errorReason != "":
				reason = errorReason
			case running:
				reason = "NotReady"
			}
		}
	}

	if pod.DeletionTimestamp != nil {
		if pod.Status.Reason == nodeUnreachablePodReason {
			reason = "Unknown"
		} else if pod.Status.Phase != api.PodSucceeded && pod.Status.Phase != api.PodFailed {
			reason = "Terminating"
		}
	}

	restartsCell := strconv.Itoa(restarts)
	if restarts != 0 && !lastRestart.IsZero() {
		restartsCell = fmt.Sprintf("%d (%s ago)", restarts, since(lastRestart, now))
	}

	podIP := pod.Status.PodIP
	if podIP == "" && len(pod.Status.PodIPs) > 0 {
		podIP = pod.Status.PodIPs[0].IP
	}
	gates := "<none>"
	if n := len(pod.Spec.ReadinessGates); n > 0 {
		met := 0
		for _, g := range pod.Spec.ReadinessGates {
			for _, c := range pod.Status.Conditions {
				if c.Type == g.ConditionType {
					if c.Status == api.ConditionTrue {
						met++
					}
					break
				}
			}
		}
		gates = fmt.Sprintf("%d/%d", met, n)
	}
	row.Cells = []any{pod.Name, fmt.Sprintf("%d/%d", ready, total), reason, restartsCell, age(&pod.ObjectMeta, now),
		orNone(podIP), orNone(pod.Spec.NodeName), orNone(pod.Status.NominatedNodeName), gates}
	return row
}

// podInitialized is kube's isPodInitializedConditionTrue: the first
// Initialized condition says.
func podInitialized(pod *api.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == api.PodInitialized {
			return c.Status == api.ConditionTrue
		}
	}
	return false
}

func podConditionTrue(pod *api.Pod, typ api.PodConditionType) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == typ && c.Status == api.ConditionTrue {
			return true
		}
	}
	return false
}
