package describers

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/labels"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/storagevolume"
)

// accessModesString is kubectl's GetAccessModesAsString: the modes
// abbreviated, without duplicates, always in the order RWO,ROX,RWX,RWOP.
func accessModesString[M ~string](modes []M) string {
	var out []string
	for _, m := range []struct{ mode, short string }{
		{string(api.ReadWriteOnce), "RWO"}, {string(api.ReadOnlyMany), "ROX"},
		{string(api.ReadWriteMany), "RWX"}, {string(api.ReadWriteOncePod), "RWOP"},
	} {
		if slices.Contains(modes, M(m.mode)) {
			out = append(out, m.short)
		}
	}
	return strings.Join(out, ",")
}

// describePersistentVolume follows kubectl's PersistentVolumeDescriber. The
// volume is read as k8s.io/api's type: minik8s keeps most volume sources as
// they were written, and kubectl prints each source's own fields.
func describePersistentVolume(w *prefixWriter, pv *corev1.PersistentVolume, evs []api.Event, now time.Time) {
	w.write(level0, "Name:\t%s\n", pv.Name)
	w.labels("Labels", pv.Labels)
	w.annotations("Annotations", pv.Annotations)
	w.write(level0, "Finalizers:\t%v\n", pv.Finalizers)
	class, ok := pv.Annotations[storagevolume.AnnBetaStorageClass]
	if !ok {
		class = pv.Spec.StorageClassName
	}
	w.write(level0, "StorageClass:\t%s\n", class)
	if pv.DeletionTimestamp != nil {
		w.write(level0, "Status:\tTerminating (lasts %s)\n", since(pv.DeletionTimestamp.Time, now))
	} else {
		w.write(level0, "Status:\t%v\n", pv.Status.Phase)
	}
	claim := ""
	if r := pv.Spec.ClaimRef; r != nil {
		claim = r.Namespace + "/" + r.Name
	}
	w.write(level0, "Claim:\t%s\n", claim)
	w.write(level0, "Reclaim Policy:\t%v\n", pv.Spec.PersistentVolumeReclaimPolicy)
	w.write(level0, "Access Modes:\t%s\n", accessModesString(pv.Spec.AccessModes))
	if pv.Spec.VolumeMode != nil {
		w.write(level0, "VolumeMode:\t%v\n", *pv.Spec.VolumeMode)
	}
	storage := pv.Spec.Capacity[corev1.ResourceStorage]
	w.write(level0, "Capacity:\t%s\n", storage.String())
	volumeNodeAffinity(w, pv.Spec.NodeAffinity)
	w.write(level0, "Message:\t%s\n", pv.Status.Message)
	w.write(level0, "Source:\n")
	persistentVolumeSource(w, &pv.Spec.PersistentVolumeSource)
	w.events(evs, now)
}

// volumeNodeAffinity is kubectl's printVolumeNodeAffinity.
func volumeNodeAffinity(w *prefixWriter, a *corev1.VolumeNodeAffinity) {
	w.write(level0, "Node Affinity:\t")
	if a == nil || a.Required == nil {
		w.write(level0, "<none>\n")
		return
	}
	w.write(level0, "\n")
	w.write(level1, "Required Terms:\t")
	if len(a.Required.NodeSelectorTerms) == 0 {
		w.write(level0, "<none>\n")
		return
	}
	w.write(level0, "\n")
	for i, term := range a.Required.NodeSelectorTerms {
		w.write(level2, "Term %v:\t", i)
		if len(term.MatchExpressions) == 0 {
			w.write(level0, "<none>\n")
			continue
		}
		for j, req := range term.MatchExpressions {
			if j != 0 {
				w.write(level2, "\t")
			}
			expr := req.Key + " " + strings.ToLower(string(req.Operator))
			if len(req.Values) > 0 {
				expr += " [" + strings.Join(req.Values, ", ") + "]"
			}
			w.write(level0, "%s\n", expr)
		}
	}
}

// persistentVolumeSource prints the volume's source as kubectl does for
// the sources a minik8s cluster can hold (hostPath, local, CSI) and NFS;
// the other, cloud providers' in-tree sources, removed from Kubernetes'
// volume plugins, are named by their type only.
func persistentVolumeSource(w *prefixWriter, s *corev1.PersistentVolumeSource) {
	switch {
	case s.HostPath != nil:
		t := "<none>"
		if s.HostPath.Type != nil {
			t = string(*s.HostPath.Type)
		}
		w.write(level2, "Type:\tHostPath (bare host directory volume)\n    Path:\t%v\n    HostPathType:\t%v\n", s.HostPath.Path, t)
	case s.NFS != nil:
		w.write(level2, "Type:\tNFS (an NFS mount that lasts the lifetime of a pod)\n    Server:\t%v\n    Path:\t%v\n    ReadOnly:\t%v\n",
			s.NFS.Server, s.NFS.Path, s.NFS.ReadOnly)
	case s.Local != nil:
		w.write(level2, "Type:\tLocalVolume (a persistent volume backed by local storage on a node)\n    Path:\t%v\n", s.Local.Path)
	case s.CSI != nil:
		w.write(level2, "Type:\tCSI (a Container Storage Interface (CSI) volume source)\n    Driver:\t%v\n    FSType:\t%v\n    VolumeHandle:\t%v\n    ReadOnly:\t%v\n",
			s.CSI.Driver, s.CSI.FSType, s.CSI.VolumeHandle, s.CSI.ReadOnly)
		csiAttributes(w, s.CSI.VolumeAttributes)
	default:
		w.write(level1, "<unknown>\n")
	}
}

// printClaim is kubectl's printPersistentVolumeClaim: a whole claim's
// head (full) or, for a generic ephemeral volume's template, the part of
// it a template has.
func printClaim(w *prefixWriter, pvc *api.PersistentVolumeClaim, full bool, now time.Time) {
	if full {
		w.write(level0, "Name:\t%s\n", pvc.Name)
		w.write(level0, "Namespace:\t%s\n", pvc.Namespace)
	}
	w.write(level0, "StorageClass:\t%s\n", storagevolume.ClaimClass(pvc))
	if full {
		if pvc.DeletionTimestamp != nil {
			w.write(level0, "Status:\tTerminating (lasts %s)\n", since(pvc.DeletionTimestamp.Time, now))
		} else {
			w.write(level0, "Status:\t%v\n", pvc.Status.Phase)
		}
	}
	w.write(level0, "Volume:\t%s\n", pvc.Spec.VolumeName)
	w.labels("Labels", pvc.Labels)
	w.annotations("Annotations", pvc.Annotations)
	if full {
		w.write(level0, "Finalizers:\t%v\n", pvc.Finalizers)
	}
	capacity, modes := "", ""
	if pvc.Spec.VolumeName != "" {
		modes = accessModesString(pvc.Status.AccessModes)
		q := pvc.Status.Capacity[api.ResourceStorage]
		capacity = q.String()
	}
	w.write(level0, "Capacity:\t%s\n", capacity)
	w.write(level0, "Access Modes:\t%s\n", modes)
	if pvc.Spec.VolumeMode != nil {
		w.write(level0, "VolumeMode:\t%v\n", *pvc.Spec.VolumeMode)
	}
	if ds := pvc.Spec.DataSource; ds != nil {
		w.write(level0, "DataSource:\n")
		if ds.APIGroup != nil {
			w.write(level1, "APIGroup:\t%v\n", *ds.APIGroup)
		}
		w.write(level1, "Kind:\t%v\n", ds.Kind)
		w.write(level1, "Name:\t%v\n", ds.Name)
	}
}

// csiAttributes is kubectl's printCSIPersistentVolumeAttributesMultiline.
func csiAttributes(w *prefixWriter, attrs map[string]string) {
	w.write(level2, "VolumeAttributes:\t")
	if len(attrs) == 0 {
		w.write(level0, "<none>\n")
		return
	}
	for i, k := range slices.Sorted(maps.Keys(attrs)) {
		if i != 0 {
			w.write(level2, "    \t") // kubectl writes the level's indent twice
		}
		line := k + "=" + attrs[k]
		if len(line) > maxAnnotationLen {
			line = line[:maxAnnotationLen] + "..."
		}
		w.write(level2, "%s\n", line)
	}
}

// describePersistentVolumeClaim follows kubectl's
// PersistentVolumeClaimDescriber; pods are those of the claim's namespace
// that use it (see podsUsingClaim).
func describePersistentVolumeClaim(w *prefixWriter, pvc *api.PersistentVolumeClaim, pods []api.Pod, evs []api.Event, now time.Time) {
	printClaim(w, pvc, true, now)
	w.write(level0, "Used By:\t")
	if len(pods) == 0 {
		w.write(level0, "<none>\n")
	}
	sort.SliceStable(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	for i, p := range pods {
		if i != 0 {
			w.write(level0, "\t")
		}
		w.write(level0, "%s\n", p.Name)
	}
	if len(pvc.Status.Conditions) > 0 {
		w.write(level0, "Conditions:\n")
		w.write(level1, "Type\tStatus\tLastProbeTime\tLastTransitionTime\tReason\tMessage\n")
		w.write(level1, "----\t------\t-----------------\t------------------\t------\t-------\n")
		for _, c := range pvc.Status.Conditions {
			w.write(level1, "%v \t%v \t%s \t%s \t%v \t%v\n", c.Type, c.Status,
				c.LastProbeTime.Time.Format(time.RFC1123Z), c.LastTransitionTime.Time.Format(time.RFC1123Z), c.Reason, c.Message)
		}
	}
	w.events(evs, now)
}

// podsUsingClaim are kubectl's getPodsForPVC: the namespace's pods with a
// volume naming the claim (a pod once per such volume, as kubectl lists
// it), then the pods owning the claim (a generic ephemeral volume's) not
// listed yet.
func podsUsingClaim(ctx context.Context, c *client.Client, pvc *api.PersistentVolumeClaim) ([]api.Pod, error) {
	l, err := client.Resource[api.Pod](c).Namespace(pvc.Namespace).List(ctx, client.ListOptions{})
	if err != nil {
		return nil, err
	}
	var pods []api.Pod
	for _, p := range l.Items {
		for _, v := range p.Spec.Volumes {
			if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == pvc.Name {
				pods = append(pods, p)
			}
		}
	}
	for _, ref := range pvc.OwnerReferences {
		if ref.Kind != "Pod" {
			continue
		}
		i := slices.IndexFunc(l.Items, func(p api.Pod) bool { return p.UID == ref.UID })
		if i < 0 || slices.ContainsFunc(pods, func(p api.Pod) bool { return p.UID == ref.UID }) {
			continue
		}
		pods = append(pods, l.Items[i])
	}
	return pods, nil
}

// describeStorageClass follows kubectl's StorageClassDescriber.
func describeStorageClass(w *prefixWriter, sc *api.StorageClass, evs []api.Event, now time.Time) {
	w.write(level0, "Name:\t%s\n", sc.Name)
	isDefault := "No"
	if storagevolume.IsDefaultClass(sc) {
		isDefault = "Yes"
	}
	w.write(level0, "IsDefaultClass:\t%s\n", isDefault)
	w.write(level0, "Annotations:\t%s\n", labels.FormatLabels(sc.Annotations))
	w.write(level0, "Provisioner:\t%s\n", sc.Provisioner)
	w.write(level0, "Parameters:\t%s\n", labels.FormatLabels(sc.Parameters))
	expansion := "<unset>"
	if sc.AllowVolumeExpansion != nil {
		expansion = boolString(*sc.AllowVolumeExpansion)
	}
	w.write(level0, "AllowVolumeExpansion:\t%s\n", expansion)
	if len(sc.MountOptions) == 0 {
		w.write(level0, "MountOptions:\t<none>\n")
	} else {
		w.write(level0, "MountOptions:\n")
		for _, o := range sc.MountOptions {
			w.write(level1, "%s\n", o)
		}
	}
	if sc.ReclaimPolicy != nil {
		w.write(level0, "ReclaimPolicy:\t%s\n", *sc.ReclaimPolicy)
	}
	if sc.VolumeBindingMode != nil {
		w.write(level0, "VolumeBindingMode:\t%s\n", *sc.VolumeBindingMode)
	}
	if sc.AllowedTopologies != nil {
		allowedTopologies(w, sc.AllowedTopologies)
	}
	w.events(evs, now)
}

// allowedTopologies is kubectl's printAllowedTopologies: each term's
// requirements as "key in [values]".
func allowedTopologies(w *prefixWriter, terms []api.TopologySelectorTerm) {
	w.write(level0, "AllowedTopologies:\t")
	if len(terms) == 0 {
		w.write(level0, "<none>\n")
		return
	}
	w.write(level0, "\n")
	for i, term := range terms {
		w.write(level1, "Term %d:\t", i)
		if len(term.MatchLabelExpressions) == 0 {
			w.write(level0, "<none>\n")
			continue
		}
		for j, req := range term.MatchLabelExpressions {
			if j != 0 {
				w.write(level1, "\t")
			}
			expr := req.Key + " in"
			if len(req.Values) > 0 {
				expr = fmt.Sprintf("%s [%s]", expr, strings.Join(req.Values, ", "))
			}
			w.write(level0, "%s\n", expr)
		}
	}
}
