package podautoscaler

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/minik8s/minik8s/api"
)

// Tolerance is kube's --horizontal-pod-autoscaler-tolerance: usage within
// 10% of the target changes nothing.
const Tolerance = 0.1

// podMetric is one pod's usage of a resource, in milli-units.
type podMetric struct {
	value     int64
	timestamp time.Time
	window    time.Duration
}

// calculator proposes replica counts from pods and their metrics.
type calculator struct {
	tolerance               float64
	cpuInitializationPeriod time.Duration
	initialReadinessDelay   time.Duration
	now                     func() time.Time
}

func (c calculator) within(ratio float64) bool { return math.Abs(1-ratio) <= c.tolerance }

// groupPods sorts pods as kube's groupPods: deleted or failed pods are
// ignored, pending ones unready, those without metrics missing, and (for
// CPU) pods not ready yet, or just started, unready.
func (c calculator) groupPods(pods []*api.Pod, metrics map[string]podMetric, res api.ResourceName) (ready int, unready, missing, ignored map[string]bool) {
	unready, missing, ignored = map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, p := range pods {
		if p.DeletionTimestamp != nil || p.Status.Phase == api.PodFailed {
			ignored[p.Name] = true
			continue
		}
		if p.Status.Phase == api.PodPending {
			unready[p.Name] = true
			continue
		}
		m, ok := metrics[p.Name]
		if !ok {
			missing[p.Name] = true
			continue
		}
		if res == api.ResourceCPU {
			var cond *api.PodCondition
			for i := range p.Status.Conditions {
				if p.Status.Conditions[i].Type == api.PodReady {
					cond = &p.Status.Conditions[i]
				}
			}
			isUnready := false
			if cond == nil || p.Status.StartTime == nil {
				isUnready = true
			} else if p.Status.StartTime.Add(c.cpuInitializationPeriod).After(c.now()) {
				isUnready = cond.Status == api.ConditionFalse || m.timestamp.Before(cond.LastTransitionTime.Add(m.window))
			} else {
				isUnready = cond.Status == api.ConditionFalse && p.Status.StartTime.Add(c.initialReadinessDelay).After(cond.LastTransitionTime.Time)
			}
			if isUnready {
				unready[p.Name] = true
				continue
			}
		}
		ready++
	}
	return ready, unready, missing, ignored
}

// requests sums each pod's requests of res (of container only, when
// given), restartable init containers included; a container without one
// is an error.
func requests(pods []*api.Pod, container string, res api.ResourceName) (map[string]int64, error) {
	out := make(map[string]int64, len(pods))
	for _, p := range pods {
		cs := append([]api.Container{}, p.Spec.Containers...)
		for _, ic := range p.Spec.InitContainers {
			if ic.RestartPolicy != nil && *ic.RestartPolicy == api.ContainerRestartPolicyAlways {
				cs = append(cs, ic)
			}
		}
		var sum int64
		found := false
		for _, ct := range cs {
			if container != "" && ct.Name != container {
				continue
			}
			q, ok := ct.Resources.Requests[res]
			if !ok {
				return nil, fmt.Errorf("missing request for %s in container %s of Pod %s", res, ct.Name, p.Name)
			}
			sum += q.MilliValue()
			found = true
		}
		if container != "" && !found {
			return nil, fmt.Errorf("container %s not found in Pod %s", container, p.Name)
		}
		out[p.Name] = sum
	}
	return out, nil
}

// utilizationRatio is kube's GetResourceUtilizationRatio.
func utilizationRatio(metrics map[string]podMetric, reqs map[string]int64, target int32) (ratio float64, utilization int32, rawAverage int64, err error) {
	var total, reqTotal int64
	n := 0
	for name, m := range metrics {
		r, ok := reqs[name]
		if !ok {
			continue
		}
		total += m.value
		reqTotal += r
		n++
	}
	if reqTotal == 0 {
		return 0, 0, 0, errors.New("no metrics returned matched known pods")
	}
	utilization = int32(total * 100 / reqTotal)
	return float64(utilization) / float64(target), utilization, total / int64(n), nil
}

// resourceReplicas is kube's GetResourceReplicas: the replicas for a
// target utilization (percent of requests).
func (c calculator) resourceReplicas(current int32, target int32, res api.ResourceName, container string, pods []*api.Pod, metrics map[string]podMetric) (int32, int32, int64, error) {
	if len(pods) == 0 {
		return 0, 0, 0, errors.New("no pods returned by selector while calculating replica count")
	}
	ready, unready, missing, ignored := c.groupPods(pods, metrics, res)
	for n := range ignored {
		delete(metrics, n)
	}
	for n := range unready {
		delete(metrics, n)
	}
	if len(metrics) == 0 {
		return 0, 0, 0, errors.New("did not receive metrics for targeted pods (pods might be unready)")
	}
	reqs, err := requests(pods, container, res)
	if err != nil {
		return 0, 0, 0, err
	}
	ratio, util, raw, err := utilizationRatio(metrics, reqs, target)
	if err != nil {
		return 0, 0, 0, err
	}
	scaleUpWithUnready := len(unready) > 0 && ratio > 1.0
	if !scaleUpWithUnready && len(missing) == 0 {
		if c.within(ratio) {
			return current, util, raw, nil
		}
		return int32(math.Ceil(ratio * float64(ready))), util, raw, nil
	}
	if len(missing) > 0 {
		switch {
		case ratio < 1.0:
			fallback := int64(max(100, target))
			for n := range missing {
				metrics[n] = podMetric{value: reqs[n] * fallback / 100}
			}
		case ratio > 1.0:
			for n := range missing {
				metrics[n] = podMetric{}
			}
		}
	}
	if scaleUpWithUnready {
		for n := range unready {
			metrics[n] = podMetric{}
		}
	}
	newRatio, _, _, err := utilizationRatio(metrics, reqs, target)
	if err != nil {
		return 0, util, raw, err
	}
	if c.within(newRatio) || (ratio < 1.0 && newRatio > 1.0) || (ratio > 1.0 && newRatio < 1.0) {
		return current, util, raw, nil
	}
	n := int32(math.Ceil(newRatio * float64(len(metrics))))
	if (newRatio < 1.0 && n > current) || (newRatio > 1.0 && n < current) {
		return current, util, raw, nil
	}
	return n, util, raw, nil
}

// rawReplicas is kube's GetRawResourceReplicas (calcPlainMetricReplicas):
// the replicas for a target average value (milli-units per pod).
func (c calculator) rawReplicas(current int32, target int64, res api.ResourceName, pods []*api.Pod, metrics map[string]podMetric) (int32, int64, error) {
	if len(pods) == 0 {
		return 0, 0, errors.New("no pods returned by selector while calculating replica count")
	}
	ready, unready, missing, ignored := c.groupPods(pods, metrics, res)
	for n := range ignored {
		delete(metrics, n)
	}
	for n := range unready {
		delete(metrics, n)
	}
	if len(metrics) == 0 {
		return 0, 0, errors.New("did not receive metrics for targeted pods (pods might be unready)")
	}
	ratio, usage := usageRatio(metrics, target)
	scaleUpWithUnready := len(unready) > 0 && ratio > 1.0
	if !scaleUpWithUnready && len(missing) == 0 {
		if c.within(ratio) {
			return current, usage, nil
		}
		return int32(math.Ceil(ratio * float64(ready))), usage, nil
	}
	if len(missing) > 0 {
		switch {
		case ratio < 1.0:
			for n := range missing {
				metrics[n] = podMetric{value: target}
			}
		case ratio > 1.0:
			for n := range missing {
				metrics[n] = podMetric{}
			}
		}
	}
	if scaleUpWithUnready {
		for n := range unready {
			metrics[n] = podMetric{}
		}
	}
	newRatio, _ := usageRatio(metrics, target)
	if c.within(newRatio) || (ratio < 1.0 && newRatio > 1.0) || (ratio > 1.0 && newRatio < 1.0) {
		return current, usage, nil
	}
	n := int32(math.Ceil(newRatio * float64(len(metrics))))
	if (newRatio < 1.0 && n > current) || (newRatio > 1.0 && n < current) {
		return current, usage, nil
	}
	return n, usage, nil
}

// usageRatio is kube's GetMetricUsageRatio.
func usageRatio(metrics map[string]podMetric, target int64) (float64, int64) {
	var total int64
	for _, m := range metrics {
		total += m.value
	}
	avg := total / int64(len(metrics))
	return float64(avg) / float64(target), avg
}
