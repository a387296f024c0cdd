package validation

import (
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
)

// TestStatefulSetClaimTemplatesImmutable: changed volumeClaimTemplates are
// refused, printed as kube's internal claims; templates stored before they
// carried apiVersion and kind equal the same templates with them.
func TestStatefulSetClaimTemplatesImmutable(t *testing.T) {
	set := func(typed bool, size string) *api.StatefulSet {
		claim := api.PersistentVolumeClaim{ObjectMeta: api.ObjectMeta{Name: "data", Labels: map[string]string{"a": "b"}},
			Spec: api.PersistentVolumeClaimSpec{AccessModes: []api.PersistentVolumeAccessMode{"ReadWriteOnce"},
				Resources: api.VolumeResourceRequirements{Requests: api.ResourceList{"storage": resource.MustParse(size)}}}}
		if typed {
			claim.APIVersion, claim.Kind = "v1", "PersistentVolumeClaim"
		}
		return &api.StatefulSet{ObjectMeta: api.ObjectMeta{Name: "web", Namespace: "ns", ResourceVersion: "1"},
			Spec: api.StatefulSetSpec{ServiceName: "s", Selector: &api.LabelSelector{MatchLabels: map[string]string{"app": "a"}},
				Template: api.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": "a"}},
					Spec: api.PodSpec{RestartPolicy: "Always", DNSPolicy: "ClusterFirst", Containers: []api.Container{{Name: "c", Image: "i",
						TerminationMessagePolicy: "File", ImagePullPolicy: "IfNotPresent"}}}},
				PodManagementPolicy: "OrderedReady", UpdateStrategy: api.StatefulSetUpdateStrategy{Type: "OnDelete"},
				VolumeClaimTemplates: []api.PersistentVolumeClaim{claim}}}
	}
	claimErrors := func(errs []string) []string {
		var out []string
		for _, e := range errs {
			if strings.HasPrefix(e, "spec.volumeClaimTemplates") {
				out = append(out, e)
			}
		}
		return out
	}
	var same []string
	for _, e := range ValidateUpdate(set(true, "1Gi"), set(false, "1Gi")) {
		same = append(same, e.Error())
	}
	if got := claimErrors(same); len(got) != 0 {
		t.Errorf("same templates, with and without apiVersion/kind: %q", got)
	}
	var changed []string
	for _, e := range ValidateUpdate(set(true, "2Gi"), set(true, "1Gi")) {
		changed = append(changed, e.Error())
	}
	want := `spec.volumeClaimTemplates: Invalid value: [{"name":"data","labels":{"a":"b"},"Spec":{"AccessModes":["ReadWriteOnce"],"Selector":null,` +
		`"Resources":{"Limits":null,"Requests":{"storage":"2Gi"}},"VolumeName":"","StorageClassName":null,"VolumeMode":null,"DataSource":null,` +
		`"DataSourceRef":null,"VolumeAttributesClassName":null},"Status":{"Phase":"","AccessModes":null,"Capacity":null,"Conditions":null,` +
		`"AllocatedResources":null,"AllocatedResourceStatuses":null,"CurrentVolumeAttributesClassName":null,"ModifyVolumeStatus":null,"HealthStatus":null}}]: field is immutable`
	if got := claimErrors(changed); len(got) != 1 || got[0] != want {
		t.Errorf("changed templates:\n got %q\nwant %q", got, want)
	}
}
