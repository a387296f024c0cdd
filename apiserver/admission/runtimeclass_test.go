package admission

import (
	"reflect"
	"testing"

	"github.com/minik8s/minik8s/api"
)

// TestMergeTolerations checks kube's MergeTolerations rules: a toleration
// another one covers is left out, the first of equal ones is kept.
func TestMergeTolerations(t *testing.T) {
	secs := func(v int64) *int64 { return &v }
	exists := func(key string, e api.TaintEffect) api.Toleration {
		return api.Toleration{Key: key, Operator: api.TolerationOpExists, Effect: e}
	}
	equal := func(key, value string, e api.TaintEffect) api.Toleration {
		return api.Toleration{Key: key, Operator: api.TolerationOpEqual, Value: value, Effect: e}
	}
	noExec := func(s int64) api.Toleration {
		return api.Toleration{Key: "k", Operator: api.TolerationOpExists, Effect: api.TaintEffectNoExecute, TolerationSeconds: secs(s)}
	}
	tests := []struct {
		name          string
		first, second []api.Toleration
		want          []api.Toleration
	}{
		{"disjoint", []api.Toleration{exists("a", "")}, []api.Toleration{exists("b", "")}, []api.Toleration{exists("a", ""), exists("b", "")}},
		{"covered by a later one", []api.Toleration{equal("a", "x", api.TaintEffectNoSchedule)}, []api.Toleration{exists("a", api.TaintEffectNoSchedule)},
			[]api.Toleration{exists("a", api.TaintEffectNoSchedule)}},
		{"covered by an earlier one", []api.Toleration{exists("a", "")}, []api.Toleration{equal("a", "x", api.TaintEffectNoExecute)},
			[]api.Toleration{exists("a", "")}},
		{"equal ones", []api.Toleration{exists("a", "")}, []api.Toleration{exists("a", "")}, []api.Toleration{exists("a", "")}},
		{"wildcard key", []api.Toleration{equal("a", "x", "")}, []api.Toleration{{Operator: api.TolerationOpExists}},
			[]api.Toleration{{Operator: api.TolerationOpExists}}},
		{"longer NoExecute seconds cover shorter", []api.Toleration{noExec(600)}, []api.Toleration{noExec(60)},
			[]api.Toleration{noExec(600)}},
		{"shorter NoExecute seconds do not cover longer", []api.Toleration{noExec(60)}, []api.Toleration{noExec(600)},
			[]api.Toleration{noExec(600)}},
		{"other effect", []api.Toleration{exists("a", api.TaintEffectNoSchedule)}, []api.Toleration{exists("a", api.TaintEffectNoExecute)},
			[]api.Toleration{exists("a", api.TaintEffectNoSchedule), exists("a", api.TaintEffectNoExecute)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := mergeTolerations(tc.first, tc.second); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
