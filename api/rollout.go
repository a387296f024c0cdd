package api

import (
	"encoding/json"
	"maps"
)

// EqualIgnoreHash reports whether two pod templates are equal but for the
// pod-template-hash label: how a Deployment's template is matched to the
// template of the ReplicaSet that runs it.
func EqualIgnoreHash(a, b *PodTemplateSpec) bool {
	return string(withoutHash(a)) == string(withoutHash(b))
}

func withoutHash(t *PodTemplateSpec) []byte {
	c := *t
	c.Labels = maps.Clone(t.Labels)
	delete(c.Labels, DefaultDeploymentUniqueLabelKey)
	if len(c.Labels) == 0 {
		c.Labels = nil
	}
	b, _ := json.Marshal(&c)
	return b
}

// SkipCopyAnnotation reports whether an annotation of a Deployment is its
// own: the deployment controller never copies it to a ReplicaSet, and a
// rollback keeps the Deployment's value rather than the ReplicaSet's.
func SkipCopyAnnotation(key string) bool {
	switch key {
	case LastAppliedConfigAnnotation, RevisionAnnotation, RevisionHistoryAnnotation,
		DesiredReplicasAnnotation, MaxReplicasAnnotation, DeprecatedRollbackToAnnotation:
		return true
	}
	return false
}
