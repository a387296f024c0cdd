package registry

import (
	"encoding/json"
	"testing"

	"github.com/minik8s/minik8s/api"
)

// TestSpecEqualRawJSON: re-encoding a raw JSON volume source with its keys
// in another order is no spec change (no new generation).
func TestSpecEqualRawJSON(t *testing.T) {
	pod := func(csi string) *api.Pod {
		return &api.Pod{Spec: api.PodSpec{Volumes: []api.Volume{{Name: "v", VolumeSource: api.VolumeSource{CSI: json.RawMessage(csi)}}}}}
	}
	if !specEqual(pod(`{"driver":"d","readOnly":true}`), pod(`{"readOnly":true,"driver":"d"}`)) {
		t.Error("reordered keys count as a spec change")
	}
	if specEqual(pod(`{"driver":"d","readOnly":true}`), pod(`{"driver":"d","readOnly":false}`)) {
		t.Error("another value does not count as a spec change")
	}
}
