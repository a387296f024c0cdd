package podplacement

import (
	"slices"
	"strconv"

	"github.com/minik8s/minik8s/api"
)

// ToleratesTaint reports whether t tolerates taint (kube's
// Toleration.ToleratesTaint): an empty effect matches every effect, an
// empty key with Exists matches every key.
func ToleratesTaint(t *api.Toleration, taint *api.Taint) bool {
	if t.Effect != "" && t.Effect != taint.Effect {
		return false
	}
	if t.Key != "" && t.Key != taint.Key {
		return false
	}
	switch t.Operator {
	case "", api.TolerationOpEqual:
		return t.Value == taint.Value
	case api.TolerationOpExists:
		return true
	case api.TolerationOpLt, api.TolerationOpGt:
		tv, err1 := strconv.ParseInt(t.Value, 10, 64)
		nv, err2 := strconv.ParseInt(taint.Value, 10, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		if t.Operator == api.TolerationOpLt {
			return nv < tv
		}
		return nv > tv
	}
	return false
}

// TolerationsTolerateTaint reports whether any of ts tolerates taint.
func TolerationsTolerateTaint(ts []api.Toleration, taint *api.Taint) bool {
	for i := range ts {
		if ToleratesTaint(&ts[i], taint) {
			return true
		}
	}
	return false
}

// FindUntoleratedTaint returns the first taint with one of effects that no
// toleration tolerates.
func FindUntoleratedTaint(taints []api.Taint, ts []api.Toleration, effects ...api.TaintEffect) (*api.Taint, bool) {
	for i := range taints {
		t := &taints[i]
		if slices.Contains(effects, t.Effect) && !TolerationsTolerateTaint(ts, t) {
			return t, true
		}
	}
	return nil, false
}
