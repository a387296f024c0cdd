package nodelifecycle

import (
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/podplacement"
)

// UnreachableTaint and NotReadyTaint are the taints the controller manages.
var (
	UnreachableTaint = api.Taint{Key: api.TaintNodeUnreachable, Effect: api.TaintEffectNoExecute}
	NotReadyTaint    = api.Taint{Key: api.TaintNodeNotReady, Effect: api.TaintEffectNoExecute}
)

// noExecuteTaints returns the node's NoExecute taints.
func noExecuteTaints(taints []api.Taint) []api.Taint {
	var out []api.Taint
	for _, t := range taints {
		if t.Effect == api.TaintEffectNoExecute {
			out = append(out, t)
		}
	}
	return out
}

// tolerationTime says how long a pod with tolerations may stay on a node
// with the given NoExecute taints: ok is false when some taint is not
// tolerated at all (evict now); forever when every matching toleration
// lacks tolerationSeconds; otherwise the smallest tolerationSeconds among
// the tolerations used (negative counts as zero), as kube's
// getMinTolerationTime.
func tolerationTime(tolerations []api.Toleration, taints []api.Taint) (d time.Duration, forever, ok bool) {
	forever = true
	for _, taint := range taints {
		tolerated := false
		for _, tol := range tolerations {
			if !podplacement.ToleratesTaint(&tol, &taint) {
				continue
			}
			tolerated = true
			if tol.TolerationSeconds == nil {
				continue
			}
			s := max(*tol.TolerationSeconds, 0)
			if forever || time.Duration(s)*time.Second < d {
				d, forever = time.Duration(s)*time.Second, false
			}
		}
		if !tolerated {
			return 0, false, false
		}
	}
	return d, forever, true
}

func hasTaint(taints []api.Taint, want api.Taint) bool {
	for _, t := range taints {
		if t.Key == want.Key && t.Effect == want.Effect {
			return true
		}
	}
	return false
}

// withTaints returns taints with add added (NoExecute ones stamped now, as
// kube: their age drives eviction) and remove removed;
// changed is false when nothing would change.
func withTaints(taints []api.Taint, add []api.Taint, remove []api.Taint, now time.Time) (out []api.Taint, changed bool) {
	for _, t := range taints {
		if hasTaint(remove, t) {
			changed = true
			continue
		}
		out = append(out, t)
	}
	for _, t := range add {
		if hasTaint(out, t) {
			continue
		}
		if t.Effect == api.TaintEffectNoExecute {
			ts := api.NewTime(now)
			t.TimeAdded = &ts
		}
		out = append(out, t)
		changed = true
	}
	return out, changed
}

func nodeCondition(status *api.NodeStatus, t api.NodeConditionType) *api.NodeCondition {
	for i := range status.Conditions {
		if status.Conditions[i].Type == t {
			return &status.Conditions[i]
		}
	}
	return nil
}
