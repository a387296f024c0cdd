package storagevolume

import (
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
)

// TestFindBestMatch: the PV controller's choice among volumes, as kube's
// findBestMatchForClaim: the smallest access-mode set holding the claim's
// modes first, then the smallest capacity that fits, of the claim's class
// and volume mode, Available, matching the selector; a pre-bound volume
// wins; with delayBinding only a pre-bound volume is returned.
func TestFindBestMatch(t *testing.T) {
	rwo, rox, rwx := api.ReadWriteOnce, api.ReadOnlyMany, api.ReadWriteMany
	block := api.PersistentVolumeBlock
	labelled := pv("labelled", "", "5Gi", api.VolumeAvailable, rwo)
	labelled.Labels = map[string]string{"tier": "gold"}
	deleting := pv("deleting", "", "1Gi", api.VolumeAvailable, rwo)
	deleting.DeletionTimestamp = &api.Time{Time: time.Now()}
	blockPV := pv("block", "", "1Gi", api.VolumeAvailable, rwo)
	blockPV.Spec.VolumeMode = &block
	prebound := pv("prebound", "", "100Gi", api.VolumeAvailable, rwx)
	prebound.Spec.ClaimRef = &api.ObjectReference{Namespace: "ns", Name: "data"}
	other := pv("other", "", "1Gi", api.VolumeAvailable, rwo)
	other.Spec.ClaimRef = &api.ObjectReference{Namespace: "ns", Name: "someone-else"}

	tests := []struct {
		name    string
		claim   *api.PersistentVolumeClaim
		mutate  func(*api.PersistentVolumeClaim)
		volumes []*api.PersistentVolume
		delay   bool
		want    string
	}{
		{"smallest that fits", claim("", "2Gi", rwo), nil,
			[]*api.PersistentVolume{pv("10", "", "10Gi", api.VolumeAvailable, rwo), pv("3", "", "3Gi", api.VolumeAvailable, rwo), pv("1", "", "1Gi", api.VolumeAvailable, rwo)}, false, "3"},
		{"exact size", claim("", "3Gi", rwo), nil,
			[]*api.PersistentVolume{pv("10", "", "10Gi", api.VolumeAvailable, rwo), pv("3", "", "3Gi", api.VolumeAvailable, rwo)}, false, "3"},
		{"smaller mode set first, though bigger", claim("", "1Gi", rwo), nil,
			[]*api.PersistentVolume{pv("multi", "", "1Gi", api.VolumeAvailable, rwo, rwx), pv("single", "", "9Gi", api.VolumeAvailable, rwo)}, false, "single"},
		{"all modes needed", claim("", "1Gi", rwo, rox), nil,
			[]*api.PersistentVolume{pv("single", "", "1Gi", api.VolumeAvailable, rwo), pv("both", "", "1Gi", api.VolumeAvailable, rwo, rox)}, false, "both"},
		{"no mode fits", claim("", "1Gi", rwx), nil,
			[]*api.PersistentVolume{pv("single", "", "1Gi", api.VolumeAvailable, rwo)}, false, ""},
		{"class", claim("gold", "1Gi", rwo), nil,
			[]*api.PersistentVolume{pv("none", "", "1Gi", api.VolumeAvailable, rwo), pv("gold", "gold", "2Gi", api.VolumeAvailable, rwo)}, false, "gold"},
		{"no class takes no classed volume", claim("", "1Gi", rwo), nil,
			[]*api.PersistentVolume{pv("gold", "gold", "2Gi", api.VolumeAvailable, rwo)}, false, ""},
		{"not Available", claim("", "1Gi", rwo), nil,
			[]*api.PersistentVolume{pv("released", "", "1Gi", api.VolumeReleased, rwo), pv("pending", "", "1Gi", api.VolumePending, rwo)}, false, ""},
		{"selector", claim("", "1Gi", rwo), func(c *api.PersistentVolumeClaim) {
			c.Spec.Selector = &api.LabelSelector{MatchLabels: map[string]string{"tier": "gold"}}
		}, []*api.PersistentVolume{pv("plain", "", "1Gi", api.VolumeAvailable, rwo), labelled}, false, "labelled"},
		{"being deleted", claim("", "1Gi", rwo), nil, []*api.PersistentVolume{deleting}, false, ""},
		{"volume mode", claim("", "1Gi", rwo), nil, []*api.PersistentVolume{blockPV}, false, ""},
		{"block claim", claim("", "1Gi", rwo), func(c *api.PersistentVolumeClaim) { c.Spec.VolumeMode = &block },
			[]*api.PersistentVolume{pv("fs", "", "1Gi", api.VolumeAvailable, rwo), blockPV}, false, "block"},
		{"pre-bound wins", claim("", "1Gi", rwx), nil,
			[]*api.PersistentVolume{pv("fits", "", "1Gi", api.VolumeAvailable, rwx), prebound}, false, "prebound"},
		{"bound to another", claim("", "1Gi", rwo), nil, []*api.PersistentVolume{other}, false, ""},
		{"delay binding skips unbound", claim("", "1Gi", rwo), nil,
			[]*api.PersistentVolume{pv("fits", "", "1Gi", api.VolumeAvailable, rwo)}, true, ""},
		{"delay binding takes pre-bound", claim("", "1Gi", rwx), nil, []*api.PersistentVolume{prebound}, true, "prebound"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.claim
			if tt.mutate != nil {
				tt.mutate(c)
			}
			got, err := FindBestMatch(c, tt.volumes, tt.delay)
			if err != nil {
				t.Fatal(err)
			}
			name := ""
			if got != nil {
				name = got.Name
			}
			if name != tt.want {
				t.Errorf("got %q, want %q", name, tt.want)
			}
		})
	}
}

// TestSatisfies: why a volume a claim names cannot be bound, in kube's
// words.
func TestSatisfies(t *testing.T) {
	rwo, rwx := api.ReadWriteOnce, api.ReadWriteMany
	block := api.PersistentVolumeBlock
	blockPV := pv("b", "", "1Gi", api.VolumeAvailable, rwo)
	blockPV.Spec.VolumeMode = &block
	deleting := pv("d", "", "1Gi", api.VolumeAvailable, rwo)
	deleting.DeletionTimestamp = &api.Time{Time: time.Now()}
	tests := []struct {
		name string
		v    *api.PersistentVolume
		c    *api.PersistentVolumeClaim
		want string
	}{
		{"fits", pv("v", "", "1Gi", api.VolumeReleased, rwo, rwx), claim("", "1Gi", rwo), ""},
		{"too small", pv("v", "", "1Gi", api.VolumeAvailable, rwo), claim("", "2Gi", rwo), "requested PV is too small"},
		{"class", pv("v", "gold", "1Gi", api.VolumeAvailable, rwo), claim("", "1Gi", rwo), "storageClassName does not match"},
		{"mode", blockPV, claim("", "1Gi", rwo), "incompatible volumeMode"},
		{"access", pv("v", "", "1Gi", api.VolumeAvailable, rwo), claim("", "1Gi", rwx), "incompatible accessMode"},
		{"deleting", deleting, claim("", "1Gi", rwo), `the volume is marked for deletion "d"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			if err := Satisfies(tt.v, tt.c); err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestDefaultClass: the newest class marked default (either spelling,
// "true" only), by name for the same instant; none without a mark.
func TestDefaultClass(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	sc := func(name string, at time.Time, ann map[string]string) *api.StorageClass {
		return &api.StorageClass{ObjectMeta: api.ObjectMeta{Name: name, CreationTimestamp: api.Time{Time: at}, Annotations: ann}}
	}
	def := map[string]string{api.IsDefaultStorageClassAnnotation: "true"}
	beta := map[string]string{api.BetaIsDefaultStorageClassAnnotation: "true"}
	tests := []struct {
		name    string
		classes []*api.StorageClass
		want    string
	}{
		{"none", []*api.StorageClass{sc("a", t0, nil), sc("b", t0, map[string]string{api.IsDefaultStorageClassAnnotation: "yes"})}, ""},
		{"one", []*api.StorageClass{sc("a", t0, nil), sc("b", t0, def)}, "b"},
		{"newest", []*api.StorageClass{sc("old", t0, def), sc("new", t0.Add(time.Second), beta), sc("plain", t0.Add(time.Hour), nil)}, "new"},
		{"same instant by name", []*api.StorageClass{sc("z", t0, def), sc("m", t0, def)}, "m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			if c := DefaultClass(tt.classes); c != nil {
				got = c.Name
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
