package registry

import (
	"context"

	"github.com/minik8s/minik8s/api"
)

// PrepareForCreate: a new claim is Pending until bound, and its data
// sources are kube's (KEP 1495): a dataSource other than a claim or a
// VolumeSnapshot is dropped when no dataSourceRef is given, a
// dataSourceRef naming another namespace is dropped
// (CrossNamespaceVolumeDataSource is off in v1.37), then each of the two
// fields is filled from the other.
func (persistentVolumeClaimStrategy) PrepareForCreate(ctx context.Context, obj api.Object) {
	c := obj.(*api.PersistentVolumeClaim)
	c.Status = api.PersistentVolumeClaimStatus{Phase: api.ClaimPending}
	normalizeDataSources(&c.Spec, nil)
}

// PrepareForUpdate applies the same data source rules to the new spec,
// but keeps a data source the stored claim already had.
func (persistentVolumeClaimStrategy) PrepareForUpdate(ctx context.Context, obj, old api.Object) {
	normalizeDataSources(&obj.(*api.PersistentVolumeClaim).Spec, &old.(*api.PersistentVolumeClaim).Spec)
}

func normalizeDataSources(s, old *api.PersistentVolumeClaimSpec) {
	if r := s.DataSourceRef; r != nil && r.Namespace != nil && *r.Namespace != "" && (old == nil || old.DataSourceRef == nil) {
		s.DataSourceRef = nil
	}
	inUse := old != nil && (old.DataSource != nil || old.DataSourceRef != nil)
	if !inUse && s.DataSourceRef == nil && s.DataSource != nil {
		group := ""
		if s.DataSource.APIGroup != nil {
			group = *s.DataSource.APIGroup
		}
		claim := s.DataSource.Kind == "PersistentVolumeClaim" && group == ""
		snapshot := s.DataSource.Kind == "VolumeSnapshot" && group == "snapshot.storage.k8s.io"
		if !claim && !snapshot {
			s.DataSource = nil
		}
	}
	copyGroup := func(g *string) *string {
		if g == nil {
			return nil
		}
		v := *g
		return &v
	}
	switch ds, r := s.DataSource, s.DataSourceRef; {
	case ds != nil && r == nil:
		s.DataSourceRef = &api.TypedObjectReference{APIGroup: copyGroup(ds.APIGroup), Kind: ds.Kind, Name: ds.Name}
	case r != nil && ds == nil && (r.Namespace == nil || *r.Namespace == ""):
		s.DataSource = &api.TypedLocalObjectReference{APIGroup: copyGroup(r.APIGroup), Kind: r.Kind, Name: r.Name}
	}
}
