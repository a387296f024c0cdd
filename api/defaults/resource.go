package defaults

import (
	"bytes"
	"encoding/json"

	"github.com/minik8s/minik8s/api"
)

// ResourceClaimSpec defaults a claim's device requests as Kubernetes'
// resource/v1 SetDefaults_ExactDeviceRequest and
// SetDefaults_DeviceSubRequest do: a request (exactly, or each of
// firstAvailable) without allocationMode asks for ExactCount, and an
// ExactCount one without count for 1. The requests are kept as written
// JSON; one is rewritten only when it gets a default.
func ResourceClaimSpec(s *api.ResourceClaimSpec) {
	for i, raw := range s.Devices.Requests {
		var req map[string]any
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if d.Decode(&req) != nil {
			continue // validation reports it
		}
		changed := false
		if exactly, ok := req["exactly"].(map[string]any); ok {
			changed = deviceRequestCount(exactly)
		}
		if subs, ok := req["firstAvailable"].([]any); ok {
			for _, sub := range subs {
				if m, ok := sub.(map[string]any); ok && deviceRequestCount(m) {
					changed = true
				}
			}
		}
		if !changed {
			continue
		}
		if out, err := json.Marshal(req); err == nil {
			s.Devices.Requests[i] = out
		}
	}
}

// deviceRequestCount defaults one request's allocationMode and count and
// reports whether it set either.
func deviceRequestCount(r map[string]any) bool {
	changed := false
	if mode, _ := r["allocationMode"].(string); mode == "" {
		r["allocationMode"] = "ExactCount"
		changed = true
	}
	if r["allocationMode"] == "ExactCount" {
		// A count that is not a number is left to validation.
		if c, present := r["count"]; !present || c == json.Number("0") {
			r["count"] = 1
			changed = true
		}
	}
	return changed
}
