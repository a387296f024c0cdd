package describers

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/minik8s/minik8s/api"
)

// volumes is kubectl's describeVolumes: a pod's (space "") or a pod
// template's (space "  ") volumes, each source printed as kubectl prints
// it. The volumes are read as k8s.io/api's types, which model every
// source (minik8s keeps the ones it does not mount as written).
func volumes(w *prefixWriter, vs []api.Volume, space string) {
	if len(vs) == 0 {
		w.write(level0, "%sVolumes:\t<none>\n", space)
		return
	}
	var cvs []corev1.Volume
	if b, err := json.Marshal(vs); err == nil {
		_ = json.Unmarshal(b, &cvs)
	}
	if len(cvs) != len(vs) {
		// Not expected: every api.Volume is a corev1.Volume on the wire.
		cvs = make([]corev1.Volume, len(vs))
		for i, v := range vs {
			cvs[i].Name = v.Name
		}
	}
	w.write(level0, "%sVolumes:\n", space)
	nameIndent := ""
	if space != "" {
		nameIndent = " "
	}
	for _, v := range cvs {
		w.write(level1, "%s%v:\n", nameIndent, v.Name)
		volumeSource(w, &v.VolumeSource)
	}
}

// volumeSource prints one source, in kubectl's order of the checks.
func volumeSource(w *prefixWriter, s *corev1.VolumeSource) {
	switch {
	case s.HostPath != nil:
		t := "<none>"
		if s.HostPath.Type != nil {
			t = string(*s.HostPath.Type)
		}
		w.write(level2, "Type:\tHostPath (bare host directory volume)\n    Path:\t%v\n    HostPathType:\t%v\n", s.HostPath.Path, t)
	case s.EmptyDir != nil:
		limit := "<unset>"
		if s.EmptyDir.SizeLimit != nil && s.EmptyDir.SizeLimit.Sign() > 0 {
			limit = s.EmptyDir.SizeLimit.String()
		}
		w.write(level2, "Type:\tEmptyDir (a temporary directory that shares a pod's lifetime)\n    Medium:\t%v\n    SizeLimit:\t%v\n", s.EmptyDir.Medium, limit)
	case s.GCEPersistentDisk != nil:
		d := s.GCEPersistentDisk
		w.write(level2, "Type:\tGCEPersistentDisk (a Persistent Disk resource in Google Compute Engine)\n    PDName:\t%v\n    FSType:\t%v\n    Partition:\t%v\n    ReadOnly:\t%v\n",
			d.PDName, d.FSType, d.Partition, d.ReadOnly)
	case s.AWSElasticBlockStore != nil:
		d := s.AWSElasticBlockStore
		w.write(level2, "Type:\tAWSElasticBlockStore (a Persistent Disk resource in AWS)\n    VolumeID:\t%v\n    FSType:\t%v\n    Partition:\t%v\n    ReadOnly:\t%v\n",
			d.VolumeID, d.FSType, d.Partition, d.ReadOnly)
	case s.GitRepo != nil:
		w.write(level2, "Type:\tGitRepo (a volume that is pulled from git when the pod is created)\n    Repository:\t%v\n    Revision:\t%v\n", s.GitRepo.Repository, s.GitRepo.Revision)
	case s.Secret != nil:
		w.write(level2, "Type:\tSecret (a volume populated by a Secret)\n    SecretName:\t%v\n    Optional:\t%v\n", s.Secret.SecretName, s.Secret.Optional != nil && *s.Secret.Optional)
	case s.ConfigMap != nil:
		w.write(level2, "Type:\tConfigMap (a volume populated by a ConfigMap)\n    Name:\t%v\n    Optional:\t%v\n", s.ConfigMap.Name, s.ConfigMap.Optional != nil && *s.ConfigMap.Optional)
	case s.NFS != nil:
		w.write(level2, "Type:\tNFS (an NFS mount that lasts the lifetime of a pod)\n    Server:\t%v\n    Path:\t%v\n    ReadOnly:\t%v\n", s.NFS.Server, s.NFS.Path, s.NFS.ReadOnly)
	case s.ISCSI != nil:
		d := s.ISCSI
		initiator := "<none>"
		if d.InitiatorName != nil {
			initiator = *d.InitiatorName
		}
		// kubectl prints ISCSIInterface without a colon.
		w.write(level2, "Type:\tISCSI (an ISCSI Disk resource that is attached to a kubelet's host machine and then exposed to the pod)\n"+
			"    TargetPortal:\t%v\n    IQN:\t%v\n    Lun:\t%v\n    ISCSIInterface\t%v\n    FSType:\t%v\n    ReadOnly:\t%v\n    Portals:\t%v\n"+
			"    DiscoveryCHAPAuth:\t%v\n    SessionCHAPAuth:\t%v\n    SecretRef:\t%v\n    InitiatorName:\t%v\n",
			d.TargetPortal, d.IQN, d.Lun, d.ISCSIInterface, d.FSType, d.ReadOnly, d.Portals, d.DiscoveryCHAPAuth, d.SessionCHAPAuth, d.SecretRef, initiator)
	case s.Glusterfs != nil:
		d := s.Glusterfs
		w.write(level2, "Type:\tGlusterfs (a Glusterfs mount on the host that shares a pod's lifetime)\n    EndpointsName:\t%v\n    Path:\t%v\n    ReadOnly:\t%v\n", d.EndpointsName, d.Path, d.ReadOnly)
	case s.PersistentVolumeClaim != nil:
		w.write(level2, "Type:\tPersistentVolumeClaim (a reference to a PersistentVolumeClaim in the same namespace)\n    ClaimName:\t%v\n    ReadOnly:\t%v\n",
			s.PersistentVolumeClaim.ClaimName, s.PersistentVolumeClaim.ReadOnly)
	case s.Ephemeral != nil:
		w.write(level2, "Type:\tEphemeralVolume (an inline specification for a volume that gets created and deleted with the pod)\n")
		if t := s.Ephemeral.VolumeClaimTemplate; t != nil {
			var claim api.PersistentVolumeClaim
			if b, err := json.Marshal(corev1.PersistentVolumeClaim{ObjectMeta: t.ObjectMeta, Spec: t.Spec}); err == nil && json.Unmarshal(b, &claim) == nil {
				printClaim(w.nested(level2), &claim, false, time.Now())
			}
		}
	case s.RBD != nil:
		d := s.RBD
		w.write(level2, "Type:\tRBD (a Rados Block Device mount on the host that shares a pod's lifetime)\n    CephMonitors:\t%v\n    RBDImage:\t%v\n    FSType:\t%v\n"+
			"    RBDPool:\t%v\n    RadosUser:\t%v\n    Keyring:\t%v\n    SecretRef:\t%v\n    ReadOnly:\t%v\n",
			d.CephMonitors, d.RBDImage, d.FSType, d.RBDPool, d.RadosUser, d.Keyring, d.SecretRef, d.ReadOnly)
	case s.Quobyte != nil:
		d := s.Quobyte
		w.write(level2, "Type:\tQuobyte (a Quobyte mount on the host that shares a pod's lifetime)\n    Registry:\t%v\n    Volume:\t%v\n    ReadOnly:\t%v\n", d.Registry, d.Volume, d.ReadOnly)
	case s.DownwardAPI != nil:
		w.write(level2, "Type:\tDownwardAPI (a volume populated by information about the pod)\n    Items:\n")
		for _, m := range s.DownwardAPI.Items {
			if m.FieldRef != nil {
				w.write(level3, "%v -> %v\n", m.FieldRef.FieldPath, m.Path)
			}
			if m.ResourceFieldRef != nil {
				w.write(level3, "%v -> %v\n", m.ResourceFieldRef.Resource, m.Path)
			}
		}
	case s.AzureDisk != nil:
		d := s.AzureDisk
		w.write(level2, "Type:\tAzureDisk (an Azure Data Disk mount on the host and bind mount to the pod)\n    DiskName:\t%v\n    DiskURI:\t%v\n    Kind: \t%v\n"+
			"    FSType:\t%v\n    CachingMode:\t%v\n    ReadOnly:\t%v\n",
			d.DiskName, d.DataDiskURI, deref(d.Kind), deref(d.FSType), deref(d.CachingMode), deref(d.ReadOnly))
	case s.VsphereVolume != nil:
		d := s.VsphereVolume
		w.write(level2, "Type:\tvSphereVolume (a Persistent Disk resource in vSphere)\n    VolumePath:\t%v\n    FSType:\t%v\n    StoragePolicyName:\t%v\n", d.VolumePath, d.FSType, d.StoragePolicyName)
	case s.Cinder != nil:
		d := s.Cinder
		w.write(level2, "Type:\tCinder (a Persistent Disk resource in OpenStack)\n    VolumeID:\t%v\n    FSType:\t%v\n    ReadOnly:\t%v\n    SecretRef:\t%v\n", d.VolumeID, d.FSType, d.ReadOnly, d.SecretRef)
	case s.PhotonPersistentDisk != nil:
		w.write(level2, "Type:\tPhotonPersistentDisk (a Persistent Disk resource in photon platform)\n    PdID:\t%v\n    FSType:\t%v\n", s.PhotonPersistentDisk.PdID, s.PhotonPersistentDisk.FSType)
	case s.PortworxVolume != nil:
		w.write(level2, "Type:\tPortworxVolume (a Portworx Volume resource)\n    VolumeID:\t%v\n", s.PortworxVolume.VolumeID)
	case s.ScaleIO != nil:
		d := s.ScaleIO
		w.write(level2, "Type:\tScaleIO (a persistent volume backed by a block device in ScaleIO)\n    Gateway:\t%v\n    System:\t%v\n    Protection Domain:\t%v\n"+
			"    Storage Pool:\t%v\n    Storage Mode:\t%v\n    VolumeName:\t%v\n    FSType:\t%v\n    ReadOnly:\t%v\n",
			d.Gateway, d.System, d.ProtectionDomain, d.StoragePool, d.StorageMode, d.VolumeName, d.FSType, d.ReadOnly)
	case s.CephFS != nil:
		d := s.CephFS
		w.write(level2, "Type:\tCephFS (a CephFS mount on the host that shares a pod's lifetime)\n    Monitors:\t%v\n    Path:\t%v\n    User:\t%v\n"+
			"    SecretFile:\t%v\n    SecretRef:\t%v\n    ReadOnly:\t%v\n",
			d.Monitors, d.Path, d.User, d.SecretFile, d.SecretRef, d.ReadOnly)
	case s.StorageOS != nil:
		d := s.StorageOS
		w.write(level2, "Type:\tStorageOS (a StorageOS Persistent Disk resource)\n    VolumeName:\t%v\n    VolumeNamespace:\t%v\n    FSType:\t%v\n    ReadOnly:\t%v\n",
			d.VolumeName, d.VolumeNamespace, d.FSType, d.ReadOnly)
	case s.FC != nil:
		d := s.FC
		lun := "<none>"
		if d.Lun != nil {
			lun = strconv.Itoa(int(*d.Lun))
		}
		w.write(level2, "Type:\tFC (a Fibre Channel disk)\n    TargetWWNs:\t%v\n    LUN:\t%v\n    FSType:\t%v\n    ReadOnly:\t%v\n",
			strings.Join(d.TargetWWNs, ", "), lun, d.FSType, d.ReadOnly)
	case s.AzureFile != nil:
		d := s.AzureFile
		w.write(level2, "Type:\tAzureFile (an Azure File Service mount on the host and bind mount to the pod)\n    SecretName:\t%v\n    ShareName:\t%v\n    ReadOnly:\t%v\n",
			d.SecretName, d.ShareName, d.ReadOnly)
	case s.FlexVolume != nil:
		d := s.FlexVolume
		w.write(level2, "Type:\tFlexVolume (a generic volume resource that is provisioned/attached using an exec based plugin)\n    Driver:\t%v\n    FSType:\t%v\n"+
			"    SecretRef:\t%v\n    ReadOnly:\t%v\n    Options:\t%v\n",
			d.Driver, d.FSType, d.SecretRef, d.ReadOnly, d.Options)
	case s.Flocker != nil:
		w.write(level2, "Type:\tFlocker (a Flocker volume mounted by the Flocker agent)\n    DatasetName:\t%v\n    DatasetUUID:\t%v\n", s.Flocker.DatasetName, s.Flocker.DatasetUUID)
	case s.Projected != nil:
		w.write(level2, "Type:\tProjected (a volume that contains injected data from multiple sources)\n")
		for _, src := range s.Projected.Sources {
			switch {
			case src.Secret != nil:
				w.write(level2, "SecretName:\t%v\n    Optional:\t%v\n", src.Secret.Name, src.Secret.Optional != nil && *src.Secret.Optional)
			case src.DownwardAPI != nil:
				w.write(level2, "DownwardAPI:\ttrue\n")
			case src.ConfigMap != nil:
				w.write(level2, "ConfigMapName:\t%v\n    Optional:\t%v\n", src.ConfigMap.Name, src.ConfigMap.Optional != nil && *src.ConfigMap.Optional)
			case src.ServiceAccountToken != nil:
				w.write(level2, "TokenExpirationSeconds:\t%d\n", deref(src.ServiceAccountToken.ExpirationSeconds))
			}
		}
	case s.CSI != nil:
		d := s.CSI
		w.write(level2, "Type:\tCSI (a Container Storage Interface (CSI) volume source)\n    Driver:\t%v\n    FSType:\t%v\n    ReadOnly:\t%v\n",
			d.Driver, deref(d.FSType), deref(d.ReadOnly))
		csiAttributes(w, d.VolumeAttributes)
	case s.Image != nil:
		w.write(level2, "Type:\tImage (a container image or OCI artifact)\n    Reference:\t%v\n    PullPolicy:\t%v\n", s.Image.Reference, s.Image.PullPolicy)
	default:
		w.write(level1, "<unknown>\n")
	}
}

// deref is *p, or T's zero value for nil (where kubectl would panic on a
// field the apiserver always defaults).
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
