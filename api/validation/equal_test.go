package validation

import (
	"encoding/json"
	"testing"

	"github.com/minik8s/minik8s/api"
)

// TestSemanticEqualRawJSON: a volume source kept as raw JSON is the same
// after a re-encoding with its keys in another order (a merge patch of a
// pod created from protobuf, as the conformance spec "CSIInlineVolumes
// should support CSIVolumeSource in Pod API" does), and differs when a
// value does.
func TestSemanticEqualRawJSON(t *testing.T) {
	spec := func(csi string) api.PodSpec {
		return api.PodSpec{Volumes: []api.Volume{{Name: "v", VolumeSource: api.VolumeSource{CSI: json.RawMessage(csi)}}}}
	}
	a := spec(`{"driver":"d","readOnly":true,"fsType":"ext4"}`)
	if !semanticEqual(a, spec(`{"driver":"d","fsType":"ext4","readOnly":true}`)) {
		t.Error("the same CSI source with its keys reordered is not equal")
	}
	if semanticEqual(a, spec(`{"driver":"d","fsType":"xfs","readOnly":true}`)) {
		t.Error("CSI sources with another fsType are equal")
	}
	if semanticEqual(a, spec(`not json`)) {
		t.Error("a CSI source equals bytes that are not JSON")
	}
}
