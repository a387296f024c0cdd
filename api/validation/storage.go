package validation

import (
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/api/naming"
	"github.com/minik8s/minik8s/api/resource"
)

// The storage kinds' rules, as kube v1.37's pkg/apis/core/validation
// (PersistentVolume, PersistentVolumeClaim) and pkg/apis/storage/validation
// (StorageClass, CSIDriver, CSINode, VolumeAttachment) check them, in
// their order and with their messages.

// validateStorage checks a storage object being created, or updated from
// old when old is not nil.
func validateStorage(obj, old api.Object) field.ErrorList {
	switch o := obj.(type) {
	case *api.PersistentVolumeClaim:
		errs := validatePersistentVolumeClaimSpec(&o.Spec, field.NewPath("spec"))
		if old != nil {
			errs = append(errs, validatePersistentVolumeClaimUpdate(o, old.(*api.PersistentVolumeClaim))...)
		}
		return errs
	case *api.PersistentVolume:
		errs := validatePersistentVolumeSpec(&o.Spec, field.NewPath("spec"))
		if old != nil {
			errs = append(errs, validatePersistentVolumeUpdate(o, old.(*api.PersistentVolume))...)
		}
		return errs
	case *api.StorageClass:
		errs := validateStorageClass(o)
		if old != nil {
			o2 := old.(*api.StorageClass)
			// kube's declarative immutability prints no value.
			for _, f := range []struct {
				name     string
				new, old any
			}{{"parameters", o.Parameters, o2.Parameters}, {"provisioner", o.Provisioner, o2.Provisioner},
				{"reclaimPolicy", o.ReclaimPolicy, o2.ReclaimPolicy}, {"volumeBindingMode", o.VolumeBindingMode, o2.VolumeBindingMode}} {
				if !semanticEqual(f.new, f.old) {
					errs = append(errs, field.Invalid(field.NewPath(f.name), rawText("null"), fieldImmutableErrorMsg))
				}
			}
		}
		return errs
	case *api.VolumeAttributesClass:
		var errs field.ErrorList
		if old != nil {
			// kube's ValidateVolumeAttributesClassUpdate: the update's
			// refusals first, then the object's own checks.
			o2 := old.(*api.VolumeAttributesClass)
			if o.DriverName != o2.DriverName {
				errs = append(errs, field.Forbidden(field.NewPath("driverName"), "updates to driverName are forbidden."))
			}
			if !semanticEqual(o.Parameters, o2.Parameters) {
				errs = append(errs, field.Forbidden(field.NewPath("parameters"), "updates to parameters are forbidden."))
			}
		}
		errs = append(errs, validateProvisionerName(o.DriverName, field.NewPath("driverName"))...)
		return append(errs, validateClassParameters(o.Parameters, false, field.NewPath("parameters"))...)
	case *api.CSIDriver:
		errs := validateCSIDriverSpec(&o.Spec, field.NewPath("spec"))
		if old != nil {
			o2 := old.(*api.CSIDriver)
			errs = append(errs, validateImmutable(o.Spec.AttachRequired, o2.Spec.AttachRequired, field.NewPath("spec", "attachedRequired"))...)
			if !semanticEqual(o.Spec.VolumeLifecycleModes, o2.Spec.VolumeLifecycleModes) {
				errs = append(errs, field.Invalid(field.NewPath("spec", "volumeLifecycleModes"), rawText("null"), fieldImmutableErrorMsg))
			}
		}
		return errs
	case *api.CSINode:
		errs := validateCSINodeDrivers(o.Spec.Drivers, field.NewPath("spec", "drivers"))
		if old != nil {
			// A driver's entry may not change, but for its allocatable
			// count (MutableCSINodeAllocatableCount, beta and on in v1.37).
			for _, od := range old.(*api.CSINode).Spec.Drivers {
				for _, nd := range o.Spec.Drivers {
					if od.Name == nd.Name {
						// Printed as kube's internal CSINodeDriver.
						type driver struct {
							Name, NodeID string
							TopologyKeys []string
							Allocatable  *struct{ Count *int32 }
						}
						n, o := driver{nd.Name, nd.NodeID, nd.TopologyKeys, nil}, driver{od.Name, od.NodeID, od.TopologyKeys, nil}
						if !semanticEqual(n, o) {
							errs = append(errs, field.Invalid(field.NewPath("spec", "drivers"), jsonValue{n}, fieldImmutableErrorMsg))
						}
					}
				}
			}
		}
		return errs
	case *api.VolumeAttachment:
		errs := validateVolumeAttachment(o)
		if old != nil && !semanticEqual(o.Spec, old.(*api.VolumeAttachment).Spec) {
			errs = append(errs, field.Invalid(field.NewPath("spec"), rawText("null"), fieldImmutableErrorMsg))
		}
		return errs
	}
	return nil
}

// accessModes are kube's supported access modes, sorted as its messages list them.
var accessModes = []string{string(api.ReadOnlyMany), string(api.ReadWriteMany), string(api.ReadWriteOnce), string(api.ReadWriteOncePod)}

var volumeModes = []string{string(api.PersistentVolumeBlock), string(api.PersistentVolumeFilesystem)}

// validateAccessModes checks the modes listed; an empty list is the
// caller's (the claim and the volume word it differently).
func validateAccessModes(modes []api.PersistentVolumeAccessMode, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	rwop, other := false, false
	for _, m := range modes {
		if !slices.Contains(accessModes, string(m)) {
			errs = append(errs, field.NotSupported(p, string(m), accessModes))
		}
		if m == api.ReadWriteOncePod {
			rwop = true
		} else if slices.Contains(accessModes, string(m)) {
			other = true
		}
	}
	if rwop && other {
		errs = append(errs, field.Forbidden(p, "may not use ReadWriteOncePod with other access modes"))
	}
	return errs
}

func validateClassName(name string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range naming.IsDNS1123Subdomain(name) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	return errs
}

func validatePersistentVolumeClaimSpec(s *api.PersistentVolumeClaimSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(s.AccessModes) == 0 {
		errs = append(errs, field.Required(p.Child("accessModes"), "at least 1 access mode is required"))
	}
	if s.Selector != nil {
		errs = append(errs, ValidateLabelSelector(s.Selector, LabelSelectorOptions{}, p.Child("selector"))...)
	}
	errs = append(errs, validateAccessModes(s.AccessModes, p.Child("accessModes"))...)
	storage := p.Child("resources").Key(string(api.ResourceStorage))
	if q, ok := s.Resources.Requests[api.ResourceStorage]; !ok {
		errs = append(errs, field.Required(storage, ""))
	} else if q.Sign() <= 0 {
		errs = append(errs, field.Invalid(storage, q.String(), "must be greater than zero"))
	}
	if s.StorageClassName != nil && *s.StorageClassName != "" {
		errs = append(errs, validateClassName(*s.StorageClassName, p.Child("storageClassName"))...)
	}
	if s.VolumeMode != nil && !slices.Contains(volumeModes, string(*s.VolumeMode)) {
		errs = append(errs, field.NotSupported(p.Child("volumeMode"), string(*s.VolumeMode), volumeModes))
	}
	if ds := s.DataSource; ds != nil {
		errs = append(errs, validateDataSource(ds.APIGroup, ds.Kind, ds.Name, p.Child("dataSource"))...)
	}
	if r := s.DataSourceRef; r != nil {
		rp := p.Child("dataSourceRef")
		errs = append(errs, validateDataSource(r.APIGroup, r.Kind, r.Name, rp)...)
		if r.Namespace != nil && *r.Namespace != "" {
			for _, msg := range naming.IsDNS1123Label(*r.Namespace) {
				errs = append(errs, field.Invalid(rp.Child("namespace"), *r.Namespace, msg))
			}
		}
	}
	// kube's bad value is a *field.Path, which prints as {}.
	dsPath := rawText("{}")
	if r := s.DataSourceRef; r != nil && r.Namespace != nil && *r.Namespace != "" {
		if s.DataSource != nil {
			errs = append(errs, field.Invalid(p, dsPath, "may not be specified when dataSourceRef.namespace is specified"))
		}
	} else if ds := s.DataSource; ds != nil && r != nil {
		if !equalStringPtr(ds.APIGroup, r.APIGroup) || ds.Kind != r.Kind || ds.Name != r.Name {
			errs = append(errs, field.Invalid(p, dsPath, "must match dataSourceRef"))
		}
	}
	if v := s.VolumeAttributesClassName; v != nil && *v != "" {
		errs = append(errs, validateClassName(*v, p.Child("volumeAttributesClassName"))...)
	}
	return errs
}

func validateDataSource(group *string, kind, name string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	}
	if kind == "" {
		errs = append(errs, field.Required(p.Child("kind"), ""))
	}
	g := ""
	if group != nil {
		g = *group
	}
	if g == "" && kind != "PersistentVolumeClaim" {
		errs = append(errs, field.Invalid(p, kind, "must be 'PersistentVolumeClaim' when referencing the default apiGroup"))
	}
	if g != "" {
		errs = append(errs, validateDNS1123Subdomain(g, p.Child("apiGroup"))...)
	}
	return errs
}

// validatePersistentVolumeClaimUpdate is kube's: a claim's spec is fixed
// but for its volumeName, set once, and, once bound, its storage request
// and volumeAttributesClassName; a class may be given to a claim that had
// none; the request may not go below the capacity.
func validatePersistentVolumeClaimUpdate(c, old *api.PersistentVolumeClaim) field.ErrorList {
	var errs field.ErrorList
	newSpec, oldSpec := newInternalClaimSpec(&c.Spec), newInternalClaimSpec(&old.Spec)
	if old.Spec.VolumeName == "" {
		oldSpec.VolumeName = newSpec.VolumeName
	}
	oldAnn, hadAnn := old.Annotations[betaStorageClassAnnotation]
	newAnn, hasAnn := c.Annotations[betaStorageClassAnnotation]
	switch {
	case hadAnn && old.Spec.StorageClassName == nil && c.Spec.StorageClassName != nil && *c.Spec.StorageClassName == oldAnn && (!hasAnn || newAnn == oldAnn):
		// From the beta annotation to the field.
		newSpec.StorageClassName = nil
	default:
		if newAnn != oldAnn {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "annotations").Key(betaStorageClassAnnotation), newAnn, fieldImmutableErrorMsg))
		}
		if c.Spec.StorageClassName != nil && old.Spec.StorageClassName == nil && (!hadAnn || *c.Spec.StorageClassName == oldAnn) {
			newSpec.StorageClassName = oldSpec.StorageClassName
		}
	}
	if c.Status.Phase == api.ClaimBound {
		if newSpec.Resources.Requests != nil {
			requests := maps.Clone(newSpec.Resources.Requests)
			requests[api.ResourceStorage] = old.Spec.Resources.Requests[api.ResourceStorage]
			newSpec.Resources.Requests = requests
		}
		newSpec.VolumeAttributesClassName = oldSpec.VolumeAttributesClassName
	}
	if !semanticEqual(newSpec, oldSpec) {
		errs = append(errs, field.Forbidden(field.NewPath("spec"),
			"spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n"+internalDiff(oldSpec, newSpec)))
	}
	newSize, oldSize := c.Spec.Resources.Requests[api.ResourceStorage], old.Spec.Resources.Requests[api.ResourceStorage]
	// RecoverVolumeExpansionFailure (on since v1.34): a request may come
	// back down, but not to the capacity.
	if newSize.Cmp(oldSize) < 0 && newSize.Cmp(old.Status.Capacity[api.ResourceStorage]) <= 0 {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "resources", "requests", "storage"), "field can not be less than status.capacity"))
	}
	errs = append(errs, validateImmutable(modeString(c.Spec.VolumeMode), modeString(old.Spec.VolumeMode), field.NewPath("volumeMode"))...)
	if !equalStringPtr(c.Spec.VolumeAttributesClassName, old.Spec.VolumeAttributesClassName) && old.Status.CurrentVolumeAttributesClassName != nil {
		vp := field.NewPath("spec", "volumeAttributesClassName")
		if c.Spec.VolumeAttributesClassName == nil {
			errs = append(errs, field.Forbidden(vp, "update to nil is forbidden when status.currentVolumeAttributesClassName is not nil"))
		} else if *c.Spec.VolumeAttributesClassName == "" {
			errs = append(errs, field.Forbidden(vp, "update to empty string is forbidden when status.currentVolumeAttributesClassName is not nil"))
		}
	}
	return errs
}

// modeString is a volume mode as a plain *string, for messages that
// quote it.
func modeString(m *api.PersistentVolumeMode) *string {
	if m == nil {
		return nil
	}
	s := string(*m)
	return &s
}

// betaStorageClassAnnotation is the class of claims and volumes made
// before spec.storageClassName.
const betaStorageClassAnnotation = "volume.beta.kubernetes.io/storage-class"

// internalDiff is kube's util/diff.Diff of two internal values: a unified
// diff, three lines of context, of their JSON indented by one space.
func internalDiff(a, b any) string {
	aj, err1 := json.MarshalIndent(a, "", " ")
	bj, err2 := json.MarshalIndent(b, "", " ")
	if err1 != nil || err2 != nil {
		return fmt.Sprintf("%#v\n%#v", a, b)
	}
	out, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(string(aj)), B: difflib.SplitLines(string(bj)), Context: 3})
	if err != nil {
		return fmt.Sprintf("error generating diff: %v", err)
	}
	return out
}

// validatePersistentVolumeSpec is kube's ValidatePersistentVolumeSpec for
// a volume (not an inline one).
func validatePersistentVolumeSpec(s *api.PersistentVolumeSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(s.AccessModes) == 0 {
		errs = append(errs, field.Required(p.Child("accessModes"), ""))
	}
	errs = append(errs, validateAccessModes(s.AccessModes, p.Child("accessModes"))...)
	cp := p.Child("capacity")
	if len(s.Capacity) == 0 {
		errs = append(errs, field.Required(cp, ""))
	}
	if _, ok := s.Capacity[api.ResourceStorage]; !ok || len(s.Capacity) > 1 {
		errs = append(errs, field.NotSupported(cp, jsonValue{s.Capacity}, []string{string(api.ResourceStorage)}))
	}
	for _, r := range sortedResourceNames(s.Capacity) {
		q := s.Capacity[r]
		if q.Value() < 0 {
			errs = append(errs, field.Invalid(cp.Key(string(r)), q.Value(), "must be a valid resource quantity"))
		}
		if q.Cmp(resource.Quantity{}) <= 0 {
			errs = append(errs, field.Invalid(cp.Key(string(r)), q.String(), "must be greater than zero"))
		}
	}
	if rp := s.PersistentVolumeReclaimPolicy; rp != "" && rp != api.PersistentVolumeReclaimDelete && rp != api.PersistentVolumeReclaimRecycle && rp != api.PersistentVolumeReclaimRetain {
		errs = append(errs, field.NotSupported(p.Child("persistentVolumeReclaimPolicy"), string(rp),
			[]string{string(api.PersistentVolumeReclaimDelete), string(api.PersistentVolumeReclaimRecycle), string(api.PersistentVolumeReclaimRetain)}))
	}
	affinity := false
	if a := s.NodeAffinity; a != nil {
		affinity = true
		if a.Required != nil {
			errs = append(errs, ValidateNodeSelector(a.Required, false, p.Child("nodeAffinity", "required"))...)
		} else {
			errs = append(errs, field.Required(p.Child("nodeAffinity", "required"), "must specify required node constraints"))
		}
	}
	n := 0
	for _, src := range persistentVolumeSources(s) {
		if !src.set {
			continue
		}
		// kube counts a flexVolume without refusing it as a second source.
		if n > 0 && src.name != "flexVolume" {
			errs = append(errs, field.Forbidden(p.Child(src.name), "may not specify more than 1 volume type"))
			continue
		}
		n++
		if src.validate != nil {
			errs = append(errs, src.validate(p.Child(src.name))...)
		}
		if src.name == "local" && !affinity {
			errs = append(errs, field.Required(p.Child("nodeAffinity"), "Local volume requires node affinity"))
		}
	}
	if n == 0 {
		errs = append(errs, field.Required(p, "must specify a volume type"))
	}
	if s.HostPath != nil && path.Clean(s.HostPath.Path) == "/" && s.PersistentVolumeReclaimPolicy == api.PersistentVolumeReclaimRecycle {
		errs = append(errs, field.Forbidden(p.Child("persistentVolumeReclaimPolicy"), "may not be 'recycle' for a hostPath mount of '/'"))
	}
	if s.StorageClassName != "" {
		errs = append(errs, validateClassName(s.StorageClassName, p.Child("storageClassName"))...)
	}
	if s.VolumeMode != nil && !slices.Contains(volumeModes, string(*s.VolumeMode)) {
		errs = append(errs, field.NotSupported(p.Child("volumeMode"), string(*s.VolumeMode), volumeModes))
	}
	if v := s.VolumeAttributesClassName; v != nil {
		if *v == "" {
			errs = append(errs, field.Required(p.Child("volumeAttributesClassName"), "an empty string is disallowed"))
		} else {
			errs = append(errs, validateClassName(*v, p.Child("volumeAttributesClassName"))...)
		}
		if !rawSet(s.CSI) {
			errs = append(errs, field.Required(p.Child("csi"), "has to be specified when using volumeAttributesClassName"))
		}
	}
	return errs
}

// volumeSource is one member of a PersistentVolumeSource: its name in
// kube's messages, whether it is set, and its own checks (nil: none).
type volumeSource struct {
	name     string
	set      bool
	validate func(p *field.Path) field.ErrorList
}

func rawSet(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

// persistentVolumeSources are the sources in the order kube checks them.
// Those of the in-tree cloud and network plugins (removed from kubelets)
// are counted but not looked into, but for NFS and CSI.
func persistentVolumeSources(s *api.PersistentVolumeSpec) []volumeSource {
	return []volumeSource{
		{"hostPath", s.HostPath != nil, func(p *field.Path) field.ErrorList {
			if s.HostPath.Path == "" {
				return field.ErrorList{field.Required(p.Child("path"), "")}
			}
			errs := validatePathNoBacksteps(s.HostPath.Path, p.Child("path"))
			if t := s.HostPath.Type; t != nil && !slices.Contains(supportedHostPathTypes, string(*t)) {
				errs = append(errs, field.NotSupported(p.Child("type"), string(*t), supportedHostPathTypes))
			}
			return errs
		}},
		{"gcePersistentDisk", rawSet(s.GCEPersistentDisk), nil},
		{"awsElasticBlockStore", rawSet(s.AWSElasticBlockStore), nil},
		{"glusterfs", rawSet(s.Glusterfs), nil},
		{"flocker", rawSet(s.Flocker), nil},
		{"nfs", rawSet(s.NFS), func(p *field.Path) field.ErrorList { return validateNFS(s.NFS, p) }},
		{"rbd", rawSet(s.RBD), nil},
		{"quobyte", rawSet(s.Quobyte), nil},
		{"cephFS", rawSet(s.CephFS), nil},
		{"iscsi", rawSet(s.ISCSI), nil},
		{"cinder", rawSet(s.Cinder), nil},
		{"fc", rawSet(s.FC), nil},
		{"flexVolume", rawSet(s.FlexVolume), nil},
		{"azureFile", rawSet(s.AzureFile), nil},
		{"vsphereVolume", rawSet(s.VsphereVolume), nil},
		{"photonPersistentDisk", rawSet(s.PhotonPersistentDisk), nil},
		{"portworxVolume", rawSet(s.PortworxVolume), nil},
		{"azureDisk", rawSet(s.AzureDisk), nil},
		{"scaleIO", rawSet(s.ScaleIO), nil},
		{"local", s.Local != nil, func(p *field.Path) field.ErrorList {
			if s.Local.Path == "" {
				return field.ErrorList{field.Required(p.Child("path"), "")}
			}
			return validatePathNoBacksteps(s.Local.Path, p.Child("path"))
		}},
		{"storageos", rawSet(s.StorageOS), nil},
		{"csi", rawSet(s.CSI), func(p *field.Path) field.ErrorList { return validateCSISource(s.CSI, p) }},
	}
}

func validateNFS(raw json.RawMessage, p *field.Path) field.ErrorList {
	var nfs struct{ Server, Path string }
	_ = json.Unmarshal(raw, &nfs) // decoded when the object was
	var errs field.ErrorList
	if nfs.Server == "" {
		errs = append(errs, field.Required(p.Child("server"), ""))
	}
	if nfs.Path == "" {
		errs = append(errs, field.Required(p.Child("path"), ""))
	}
	if !path.IsAbs(nfs.Path) {
		errs = append(errs, field.Invalid(p.Child("path"), nfs.Path, "must be an absolute path"))
	}
	return errs
}

// internalCSISource is kube's core.CSIPersistentVolumeSource, field for
// field, for its checks and its printed diffs.
type internalCSISource struct {
	Driver                     string            `json:"driver"`
	VolumeHandle               string            `json:"volumeHandle"`
	ReadOnly                   bool              `json:"readOnly"`
	FSType                     string            `json:"fsType"`
	VolumeAttributes           map[string]string `json:"volumeAttributes"`
	ControllerPublishSecretRef *secretRef        `json:"controllerPublishSecretRef"`
	NodeStageSecretRef         *secretRef        `json:"nodeStageSecretRef"`
	NodePublishSecretRef       *secretRef        `json:"nodePublishSecretRef"`
	ControllerExpandSecretRef  *secretRef        `json:"controllerExpandSecretRef"`
	NodeExpandSecretRef        *secretRef        `json:"nodeExpandSecretRef"`
}

type secretRef struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}

func validateCSISource(raw json.RawMessage, p *field.Path) field.ErrorList {
	var csi internalCSISource
	_ = json.Unmarshal(raw, &csi)
	errs := validateCSIDriverName(csi.Driver, p.Child("driver"))
	if csi.VolumeHandle == "" {
		errs = append(errs, field.Required(p.Child("volumeHandle"), ""))
	}
	for _, r := range []struct {
		name string
		ref  *secretRef
	}{{"controllerPublishSecretRef", csi.ControllerPublishSecretRef}, {"controllerExpandSecretRef", csi.ControllerExpandSecretRef},
		{"nodePublishSecretRef", csi.NodePublishSecretRef}, {"nodeExpandSecretRef", csi.NodeExpandSecretRef}} {
		if r.ref == nil {
			continue
		}
		rp := p.Child(r.name)
		if r.ref.Name == "" {
			errs = append(errs, field.Required(rp.Child("name"), ""))
		} else {
			errs = append(errs, validateDNS1123Subdomain(r.ref.Name, rp.Child("name"))...)
		}
		if r.ref.Namespace == "" {
			errs = append(errs, field.Required(rp.Child("namespace"), ""))
		} else {
			for _, msg := range naming.IsDNS1123Label(r.ref.Namespace) {
				errs = append(errs, field.Invalid(rp.Child("namespace"), r.ref.Namespace, msg))
			}
		}
	}
	return errs
}

// validateCSIDriverName is kube's ValidateCSIDriverName: a DNS subdomain,
// any case, of at most 63 characters.
func validateCSIDriverName(name string, p *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	if len(name) > 63 {
		errs = append(errs, field.TooLong(p, "", 63))
	}
	for _, msg := range naming.IsDNS1123Subdomain(strings.ToLower(name)) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	return errs
}

// internalVolumeSource is kube's core.PersistentVolumeSource as its diffs
// print it: Go's field names, in order. The in-tree plugins' sources,
// kept as written, print with their v1 names.
type internalVolumeSource struct {
	GCEPersistentDisk    json.RawMessage
	AWSElasticBlockStore json.RawMessage
	HostPath             *struct{ Path, Type *string }
	Glusterfs            json.RawMessage
	NFS                  json.RawMessage
	RBD                  json.RawMessage
	ISCSI                json.RawMessage
	Cinder               json.RawMessage
	CephFS               json.RawMessage
	FC                   json.RawMessage
	Flocker              json.RawMessage
	FlexVolume           json.RawMessage
	AzureFile            json.RawMessage
	VsphereVolume        json.RawMessage
	Quobyte              json.RawMessage
	AzureDisk            json.RawMessage
	PhotonPersistentDisk json.RawMessage
	PortworxVolume       json.RawMessage
	ScaleIO              json.RawMessage
	Local                *struct {
		Path   string
		FSType *string
	}
	StorageOS json.RawMessage
	CSI       *internalCSIPrinted
}

// internalCSIPrinted is the CSI source with Go's field names.
type internalCSIPrinted struct {
	Driver, VolumeHandle                            string
	ReadOnly                                        bool
	FSType                                          string
	VolumeAttributes                                map[string]string
	ControllerPublishSecretRef, NodeStageSecretRef  *struct{ Name, Namespace string }
	NodePublishSecretRef, ControllerExpandSecretRef *struct{ Name, Namespace string }
	NodeExpandSecretRef                             *struct{ Name, Namespace string }
}

func nullRaw(raw json.RawMessage) json.RawMessage {
	if !rawSet(raw) {
		return json.RawMessage("null")
	}
	return raw
}

func newInternalVolumeSource(s *api.PersistentVolumeSource) internalVolumeSource {
	out := internalVolumeSource{
		GCEPersistentDisk: nullRaw(s.GCEPersistentDisk), AWSElasticBlockStore: nullRaw(s.AWSElasticBlockStore),
		Glusterfs: nullRaw(s.Glusterfs), NFS: nullRaw(s.NFS), RBD: nullRaw(s.RBD), ISCSI: nullRaw(s.ISCSI),
		Cinder: nullRaw(s.Cinder), CephFS: nullRaw(s.CephFS), FC: nullRaw(s.FC), Flocker: nullRaw(s.Flocker),
		FlexVolume: nullRaw(s.FlexVolume), AzureFile: nullRaw(s.AzureFile), VsphereVolume: nullRaw(s.VsphereVolume),
		Quobyte: nullRaw(s.Quobyte), AzureDisk: nullRaw(s.AzureDisk), PhotonPersistentDisk: nullRaw(s.PhotonPersistentDisk),
		PortworxVolume: nullRaw(s.PortworxVolume), ScaleIO: nullRaw(s.ScaleIO), StorageOS: nullRaw(s.StorageOS),
	}
	if h := s.HostPath; h != nil {
		var t *string
		if h.Type != nil {
			v := string(*h.Type)
			t = &v
		}
		out.HostPath = &struct{ Path, Type *string }{&h.Path, t}
	}
	if l := s.Local; l != nil {
		out.Local = &struct {
			Path   string
			FSType *string
		}{l.Path, l.FSType}
	}
	if rawSet(s.CSI) {
		var c internalCSISource
		_ = json.Unmarshal(s.CSI, &c)
		ref := func(r *secretRef) *struct{ Name, Namespace string } {
			if r == nil {
				return nil
			}
			return &struct{ Name, Namespace string }{r.Name, r.Namespace}
		}
		out.CSI = &internalCSIPrinted{c.Driver, c.VolumeHandle, c.ReadOnly, c.FSType, c.VolumeAttributes,
			ref(c.ControllerPublishSecretRef), ref(c.NodeStageSecretRef), ref(c.NodePublishSecretRef),
			ref(c.ControllerExpandSecretRef), ref(c.NodeExpandSecretRef)}
	}
	return out
}

// validatePersistentVolumeUpdate is kube's ValidatePersistentVolumeUpdate:
// the source and the volume mode are fixed (a CSI volume may gain its
// controllerExpandSecretRef), as is a node affinity once set
// (MutablePVNodeAffinity is off in v1.37).
func validatePersistentVolumeUpdate(v, old *api.PersistentVolume) field.ErrorList {
	var errs field.ErrorList
	newSrc, oldSrc := newInternalVolumeSource(&v.Spec.PersistentVolumeSource), newInternalVolumeSource(&old.Spec.PersistentVolumeSource)
	if oldSrc.CSI != nil && newSrc.CSI != nil && oldSrc.CSI.ControllerExpandSecretRef == nil {
		c := *newSrc.CSI
		c.ControllerExpandSecretRef = nil
		newSrc.CSI = &c
	}
	if !semanticEqual(newSrc, oldSrc) {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "persistentvolumesource"),
			"spec.persistentvolumesource is immutable after creation\n"+internalDiff(oldSrc, newSrc)))
	}
	errs = append(errs, validateImmutable(modeString(v.Spec.VolumeMode), modeString(old.Spec.VolumeMode), field.NewPath("volumeMode"))...)
	if old.Spec.NodeAffinity != nil && !semanticEqual(v.Spec.NodeAffinity, old.Spec.NodeAffinity) {
		errs = append(errs, field.Invalid(field.NewPath("nodeAffinity"), internalNodeAffinity(v.Spec.NodeAffinity), fieldImmutableErrorMsg+", except for updating from beta label to GA"))
	}
	if old.Spec.VolumeAttributesClassName != nil && v.Spec.VolumeAttributesClassName == nil {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "volumeAttributesClassName"), "update from non-nil value to nil is forbidden"))
	}
	return errs
}

func validateStorageClass(c *api.StorageClass) field.ErrorList {
	errs := validateProvisionerName(c.Provisioner, field.NewPath("provisioner"))
	errs = append(errs, validateClassParameters(c.Parameters, true, field.NewPath("parameters"))...)
	if rp := c.ReclaimPolicy; rp != nil && *rp != "" && *rp != api.PersistentVolumeReclaimDelete && *rp != api.PersistentVolumeReclaimRetain {
		errs = append(errs, field.NotSupported(field.NewPath("reclaimPolicy"), string(*rp), []string{"Delete", "Retain"}))
	}
	bp := field.NewPath("volumeBindingMode")
	if m := c.VolumeBindingMode; m == nil {
		errs = append(errs, field.Required(bp, ""))
	} else if *m != api.VolumeBindingImmediate && *m != api.VolumeBindingWaitForFirstConsumer {
		errs = append(errs, field.NotSupported(bp, string(*m), []string{"Immediate", "WaitForFirstConsumer"}))
	}
	return append(errs, validateAllowedTopologies(c.AllowedTopologies, field.NewPath("allowedTopologies"))...)
}

// validateProvisionerName is kube's validateProvisioner, for a
// StorageClass' provisioner and a VolumeAttributesClass' driverName:
// required, and a qualified name once lower-cased.
func validateProvisionerName(name string, p *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	return validateQualifiedName(strings.ToLower(name), p)
}

// validateClassParameters is kube's validateParameters: at most 512 keys
// (nothing else checked past that), none empty, 256 KiB of keys and values
// in all, and at least one when allowEmpty is false (VolumeAttributesClass).
func validateClassParameters(params map[string]string, allowEmpty bool, p *field.Path) field.ErrorList {
	if len(params) > 512 {
		return field.ErrorList{field.TooLong(p, "", 512)}
	}
	var errs field.ErrorList
	size := 0
	for k, v := range params {
		if k == "" {
			errs = append(errs, field.Invalid(p, k, "field can not be empty."))
		}
		size += len(k) + len(v)
	}
	if size > 256*1024 {
		errs = append(errs, field.TooLong(p, "", 256*1024))
	}
	if !allowEmpty && len(params) == 0 {
		errs = append(errs, field.Required(p, "must contain at least one key/value pair"))
	}
	return errs
}

// validateAllowedTopologies is kube's, duplicates included: it compares
// each term with those before it and with as many empty terms as there
// are terms (its list starts with that many nil entries), so an empty
// term is always a duplicate.
func validateAllowedTopologies(terms []api.TopologySelectorTerm, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(terms) == 0 {
		return nil
	}
	seen := make([]string, len(terms)) // "" is the empty term
	for i, term := range terms {
		tp := p.Index(i).Child("matchLabelExpressions")
		exprs := map[string][]string{}
		for j, req := range term.MatchLabelExpressions {
			rp := tp.Index(j)
			if len(req.Values) == 0 {
				errs = append(errs, field.Required(rp.Child("values"), ""))
			}
			var values []string
			for k, v := range req.Values {
				if slices.Contains(values, v) {
					errs = append(errs, field.Duplicate(rp.Child("values").Index(k), v))
					continue
				}
				values = append(values, v)
			}
			errs = append(errs, ValidateLabelName(req.Key, rp.Child("key"))...)
			if _, dup := exprs[req.Key]; dup {
				errs = append(errs, field.Duplicate(rp.Child("key"), req.Key))
			}
			slices.Sort(values)
			exprs[req.Key] = values
		}
		key := ""
		if len(exprs) > 0 {
			b, _ := json.Marshal(exprs)
			key = string(b)
		}
		for _, s := range seen {
			if s == key {
				errs = append(errs, field.Duplicate(tp, ""))
			}
		}
		seen = append(seen, key)
	}
	return errs
}

var fsGroupPolicies = []string{"File", "None", "ReadWriteOnceWithFSType"}

func validateCSIDriverSpec(s *api.CSIDriverSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	// attachRequired, podInfoOnMount, storageCapacity and seLinuxMount
	// are defaulted: never nil here.
	if s.FSGroupPolicy != nil && !slices.Contains(fsGroupPolicies, *s.FSGroupPolicy) {
		errs = append(errs, field.NotSupported(p.Child("fsGroupPolicy"), *s.FSGroupPolicy, fsGroupPolicies))
	}
	audiences := map[string]bool{}
	for i, t := range s.TokenRequests {
		tp := p.Child("tokenRequests").Index(i)
		if audiences[t.Audience] {
			errs = append(errs, field.Duplicate(tp.Child("audience"), t.Audience))
			continue
		}
		audiences[t.Audience] = true
		if t.ExpirationSeconds == nil {
			continue
		}
		if *t.ExpirationSeconds < 600 {
			errs = append(errs, field.Invalid(tp.Child("expirationSeconds"), *t.ExpirationSeconds, "may not specify a duration less than 10 minutes"))
		}
		if *t.ExpirationSeconds > 1<<32 {
			errs = append(errs, field.Invalid(tp.Child("expirationSeconds"), *t.ExpirationSeconds, "may not specify a duration larger than 2^32 seconds"))
		}
	}
	for _, m := range s.VolumeLifecycleModes {
		if m != "Persistent" && m != "Ephemeral" {
			errs = append(errs, field.NotSupported(p.Child("volumeLifecycleModes"), m, []string{"Persistent", "Ephemeral"}))
		}
	}
	if v := s.NodeAllocatableUpdatePeriodSeconds; v != nil && *v < 10 {
		errs = append(errs, field.Invalid(p.Child("nodeAllocatableUpdatePeriodSeconds"), *v, "must be greater than or equal to 10 seconds"))
	}
	if s.ServiceAccountTokenInSecrets != nil && len(s.TokenRequests) == 0 {
		errs = append(errs, field.Invalid(p.Child("serviceAccountTokenInSecrets"), *s.ServiceAccountTokenInSecrets,
			"serviceAccountTokenInSecrets is set but no tokenRequests are specified"))
	}
	return errs
}

func validateCSINodeDrivers(drivers []api.CSINodeDriver, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := map[string]bool{}
	for i, d := range drivers {
		dp := p.Index(i)
		errs = append(errs, validateCSIDriverName(d.Name, dp.Child("name"))...)
		if d.NodeID == "" {
			errs = append(errs, field.Required(dp.Child("nodeID"), ""))
		}
		if len(d.NodeID) > 256 {
			errs = append(errs, field.Invalid(dp.Child("nodeID"), d.NodeID, "must be 256 characters or less"))
		}
		if a := d.Allocatable; a != nil && a.Count != nil {
			errs = append(errs, validateNonnegative(int64(*a.Count), dp.Child("allocatable", "count"))...)
		}
		if names[d.Name] {
			errs = append(errs, field.Duplicate(dp.Child("name"), d.Name))
		}
		names[d.Name] = true
		keys := map[string]bool{}
		for _, k := range d.TopologyKeys {
			if k == "" {
				errs = append(errs, field.Required(dp, ""))
			}
			if keys[k] {
				errs = append(errs, field.Duplicate(dp, k))
			}
			keys[k] = true
			errs = append(errs, validateQualifiedName(k, dp)...)
		}
	}
	return errs
}

func validateVolumeAttachment(va *api.VolumeAttachment) field.ErrorList {
	var errs field.ErrorList
	sp := field.NewPath("spec", "source")
	src := va.Spec.Source
	inline := rawSet(src.InlineVolumeSpec)
	switch {
	case !inline && src.PersistentVolumeName == nil:
		errs = append(errs, field.Required(sp, "must specify exactly one of inlineVolumeSpec and persistentVolumeName"))
	case inline && src.PersistentVolumeName != nil:
		errs = append(errs, field.Forbidden(sp, "must specify exactly one of inlineVolumeSpec and persistentVolumeName"))
	case src.PersistentVolumeName != nil && *src.PersistentVolumeName == "":
		errs = append(errs, field.Required(sp.Child("persistentVolumeName"), "must specify non empty persistentVolumeName"))
	}
	errs = append(errs, validateDNS1123Subdomain(va.Spec.NodeName, field.NewPath("spec", "nodeName"))...)
	for _, e := range []*api.VolumeError{va.Status.AttachError, va.Status.DetachError} {
		if e != nil && e.ErrorCode != nil && *e.ErrorCode < 0 {
			name := "attachError"
			if e == va.Status.DetachError {
				name = "detachError"
			}
			errs = append(errs, field.Invalid(field.NewPath("status", name, "errorCode"), *e.ErrorCode, "must be between 0 and 2147483647, inclusive"))
		}
	}
	if n := src.PersistentVolumeName; n != nil {
		errs = append(errs, validateDNS1123Subdomain(*n, field.NewPath("spec.source.persistentVolumeName"))...)
	}
	// The attacher is checked declaratively in kube, after the rest,
	// with the caseless subdomain's message.
	ap := field.NewPath("spec", "attacher")
	switch a := va.Spec.Attacher; {
	case a == "":
		errs = append(errs, field.Required(ap, ""))
	default:
		if len(a) > 63 {
			errs = append(errs, field.TooLong(ap, "", 63))
		}
		if len(naming.IsDNS1123Subdomain(strings.ToLower(a))) > 0 {
			errs = append(errs, field.Invalid(ap, a, "an RFC 1123 subdomain must consist of alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'Example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"))
		}
	}
	return errs
}

// internalNodeAffinity prints a volume's node affinity as kube's internal
// type: JSON with Go's field names.
func internalNodeAffinity(a *api.VolumeNodeAffinity) jsonValue {
	type requirement struct {
		Key      string
		Operator string
		Values   []string
	}
	type term struct{ MatchExpressions, MatchFields []requirement }
	type selector struct{ NodeSelectorTerms []term }
	if a == nil {
		return jsonValue{nil}
	}
	var out struct{ Required *selector }
	if a.Required != nil {
		out.Required = &selector{NodeSelectorTerms: []term{}}
		if a.Required.NodeSelectorTerms == nil {
			out.Required.NodeSelectorTerms = nil
		}
		reqs := func(rs []api.NodeSelectorRequirement) []requirement {
			if rs == nil {
				return nil
			}
			out := []requirement{}
			for _, r := range rs {
				out = append(out, requirement{r.Key, string(r.Operator), r.Values})
			}
			return out
		}
		for _, t := range a.Required.NodeSelectorTerms {
			out.Required.NodeSelectorTerms = append(out.Required.NodeSelectorTerms, term{reqs(t.MatchExpressions), reqs(t.MatchFields)})
		}
	}
	return jsonValue{out}
}
