package endpoints

import (
	"math"

	"github.com/minik8s/minik8s/api"
)

// MaxCapacity is the most addresses an Endpoints object holds; beyond it
// kube truncates and sets the over-capacity annotation (EndpointSlices
// carry the full set).
const MaxCapacity = 1000

// AnnotationOverCapacity marks truncated Endpoints.
const AnnotationOverCapacity = "endpoints.kubernetes.io/over-capacity"

// truncate cuts subsets to MaxCapacity addresses as kube's
// truncateEndpoints: not-ready addresses go first; if the ready ones alone
// are too many, all not-ready ones and part of the ready ones go, each
// subset keeping its share. It reports whether anything was cut.
func truncate(subsets []api.EndpointSubset) bool {
	ready, notReady := 0, 0
	for _, s := range subsets {
		ready += len(s.Addresses)
		notReady += len(s.NotReadyAddresses)
	}
	if ready+notReady <= MaxCapacity {
		return false
	}
	truncateReady := ready > MaxCapacity
	limit, total := MaxCapacity-ready, notReady
	if truncateReady {
		limit, total = MaxCapacity, ready
	}
	left := limit
	for i := range subsets {
		s := &subsets[i]
		n := len(s.NotReadyAddresses)
		if truncateReady {
			n = len(s.Addresses)
		}
		allowed := min(int(math.Ceil(float64(limit)*float64(n)/float64(total))), left)
		left -= allowed
		if truncateReady {
			s.NotReadyAddresses = nil
			s.Addresses = s.Addresses[:min(allowed, len(s.Addresses))]
		} else {
			s.NotReadyAddresses = s.NotReadyAddresses[:min(allowed, len(s.NotReadyAddresses))]
		}
	}
	return true
}
