package validation

import (
	"encoding/json"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/field"
)

func TestValidateEphemeralVolume(t *testing.T) {
	p := field.NewPath("spec", "volumes")
	for _, tc := range []struct {
		name, ephemeral string
		want            []string
	}{
		{"valid", `{"volumeClaimTemplate":{"metadata":{"labels":{"app":"db"}},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}}`, nil},
		{"no template", `{}`, []string{`spec.volumes[0].ephemeral.volumeClaimTemplate: Required value`}},
		{"metadata beyond labels", `{"volumeClaimTemplate":{"metadata":{"name":"x","finalizers":["a/b"],"annotations":{"-x":"y"}},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}}`, []string{
			`spec.volumes[0].ephemeral.volumeClaimTemplate.metadata.annotations: Invalid value: "-x": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
			`spec.volumes[0].ephemeral.volumeClaimTemplate.metadata.name: Forbidden: cannot be set`,
			`spec.volumes[0].ephemeral.volumeClaimTemplate.metadata.finalizers: Forbidden: cannot be set`,
		}},
		{"empty spec", `{"volumeClaimTemplate":{"spec":{}}}`, []string{
			`spec.volumes[0].ephemeral.volumeClaimTemplate.spec.accessModes: Required value: at least 1 access mode is required`,
			`spec.volumes[0].ephemeral.volumeClaimTemplate.spec.resources[storage]: Required value`,
		}},
	} {
		vols, errs := validateVolumes([]api.Volume{{Name: "scratch", VolumeSource: api.VolumeSource{Ephemeral: json.RawMessage(tc.ephemeral)}}}, p)
		checkErrs(t, tc.name, errs, tc.want)
		if _, known := vols["scratch"]; known != (tc.want == nil) {
			t.Errorf("%s: volume known to mounts = %v", tc.name, known)
		}
	}
}
