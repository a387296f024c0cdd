package describers

import (
	"maps"
	"slices"
	"time"

	"github.com/minik8s/minik8s/api"
)

// describeConfigMap follows kubectl's ConfigMapDescriber: every key with
// its value under a "----" rule, binary keys by size.
func describeConfigMap(w *prefixWriter, cm *api.ConfigMap, evs []api.Event, now time.Time) {
	w.write(level0, "Name:\t%s\n", cm.Name)
	w.write(level0, "Namespace:\t%s\n", cm.Namespace)
	w.labels("Labels", cm.Labels)
	w.annotations("Annotations", cm.Annotations)
	w.write(level0, "\nData\n====\n")
	for _, k := range slices.Sorted(maps.Keys(cm.Data)) {
		w.write(level0, "%s:\n----\n", k)
		w.write(level0, "%s\n", cm.Data[k])
		w.write(level0, "\n")
	}
	w.write(level0, "\nBinaryData\n====\n")
	for _, k := range slices.Sorted(maps.Keys(cm.BinaryData)) {
		w.write(level0, "%s: %d bytes\n", k, len(cm.BinaryData[k]))
	}
	w.write(level0, "\n")
	w.events(evs, now)
}

// describeSecret follows kubectl's SecretDescriber: the sizes of the
// values, never the values (a service account token excepted).
func describeSecret(w *prefixWriter, s *api.Secret) {
	w.write(level0, "Name:\t%s\n", s.Name)
	w.write(level0, "Namespace:\t%s\n", s.Namespace)
	w.labels("Labels", s.Labels)
	w.annotations("Annotations", s.Annotations)
	w.write(level0, "\nType:\t%s\n", s.Type)
	w.write(level0, "\nData\n====\n")
	for _, k := range slices.Sorted(maps.Keys(s.Data)) {
		if k == "token" && s.Type == api.SecretTypeServiceAccountToken {
			w.write(level0, "%s:\t%s\n", k, s.Data[k])
			continue
		}
		w.write(level0, "%s:\t%d bytes\n", k, len(s.Data[k]))
	}
}
