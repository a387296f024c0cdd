// Package interpodaffinity implements pod affinity and anti-affinity:
// required terms filter nodes (by the incoming pod's terms and by the
// anti-affinity terms of the pods already placed), preferred terms score
// them.
package interpodaffinity
