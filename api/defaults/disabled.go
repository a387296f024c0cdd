package defaults

import "github.com/minik8s/minik8s/api"

// DropDisabledFields clears, in a pod or pod template being created or
// updated (old is nil on create), the fields whose feature gate
// kube-apiserver v1.37 has off by default, unless old already uses them,
// as kube's registries do before validating (pkg/api/pod
// dropDisabledFields, pkg/api/job DropDisabledFields): such a field is
// accepted and not stored, so it reads back left out as from kube. The
// gates: ContainerStopSignals (lifecycle.stopSignal), H2CContainerProbe
// (httpGet.protocol), GRPCContainerProbeTLS (grpc.mode), GenericWorkload
// (schedulingGroup), EvictionRequestAPI (evictionResponders),
// AtomicWriteVolumeUserFields (the volumes' defaultUser and user),
// EmptyDirVolumeMode (emptyDir.mode), VolumeBindMountOptions
// (volumeMounts[].bindMountOptions), WorkloadWithJob (a job's
// spec.scheduling); in a pod's status DRANodeAllocatableResources
// (nodeAllocatableResourceClaimStatuses), CSIVolumeHealth (volumeHealth)
// and ImageVolumeWithDigest (volumeMounts[].volumeStatus).
func DropDisabledFields(obj, old api.Object) {
	spec, oldSpec := podSpecOf(obj), podSpecOf(old)
	if spec != nil {
		dropDisabledPodSpecFields(spec, oldSpec)
	}
	if p, ok := obj.(*api.Pod); ok {
		var oldStatus *api.PodStatus
		if o, ok := old.(*api.Pod); ok {
			oldStatus = &o.Status
		}
		DropDisabledPodStatusFields(&p.Status, oldStatus)
	}
	if js, ojs := jobSpecOf(obj), jobSpecOf(old); js != nil && (ojs == nil || ojs.Scheduling == nil) {
		js.Scheduling = nil
	}
}

// DropDisabledPodStatusFields is DropDisabledFields for a pod's status
// (a status update too).
func DropDisabledPodStatusFields(status, old *api.PodStatus) {
	if old == nil || len(old.NodeAllocatableResourceClaimStatuses) == 0 {
		status.NodeAllocatableResourceClaimStatuses = nil
	}
	if old == nil || len(old.VolumeHealth) == 0 {
		status.VolumeHealth = nil
	}
	if !imageVolumeDigestInUse(old) {
		for _, cs := range [][]api.ContainerStatus{status.InitContainerStatuses, status.ContainerStatuses, status.EphemeralContainerStatuses} {
			for i := range cs {
				for j := range cs[i].VolumeMounts {
					cs[i].VolumeMounts[j].VolumeStatus = nil
				}
			}
		}
	}
}

func imageVolumeDigestInUse(s *api.PodStatus) bool {
	if s == nil {
		return false
	}
	for _, cs := range [][]api.ContainerStatus{s.InitContainerStatuses, s.ContainerStatuses, s.EphemeralContainerStatuses} {
		for _, c := range cs {
			for _, m := range c.VolumeMounts {
				if m.VolumeStatus != nil {
					return true
				}
			}
		}
	}
	return false
}

func podSpecOf(obj api.Object) *api.PodSpec {
	switch o := obj.(type) {
	case *api.Pod:
		return &o.Spec
	case *api.PodTemplate:
		return &o.Template.Spec
	case *api.ReplicationController:
		if o.Spec.Template != nil {
			return &o.Spec.Template.Spec
		}
	case *api.Deployment:
		return &o.Spec.Template.Spec
	case *api.ReplicaSet:
		return &o.Spec.Template.Spec
	case *api.StatefulSet:
		return &o.Spec.Template.Spec
	case *api.DaemonSet:
		return &o.Spec.Template.Spec
	case *api.Job:
		return &o.Spec.Template.Spec
	case *api.CronJob:
		return &o.Spec.JobTemplate.Spec.Template.Spec
	}
	return nil
}

func jobSpecOf(obj api.Object) *api.JobSpec {
	switch o := obj.(type) {
	case *api.Job:
		return &o.Spec
	case *api.CronJob:
		return &o.Spec.JobTemplate.Spec
	}
	return nil
}

// containers calls f with every container of spec, ephemeral ones too.
func containers(spec *api.PodSpec, f func(*api.Container)) {
	for i := range spec.InitContainers {
		f(&spec.InitContainers[i])
	}
	for i := range spec.Containers {
		f(&spec.Containers[i])
	}
	for i := range spec.EphemeralContainers {
		f(&spec.EphemeralContainers[i].Container)
	}
}

// inUse tells whether f holds for some container of spec (nil: none).
func inUse(spec *api.PodSpec, f func(*api.Container) bool) bool {
	if spec == nil {
		return false
	}
	used := false
	containers(spec, func(c *api.Container) { used = used || f(c) })
	return used
}

func dropDisabledPodSpecFields(spec, old *api.PodSpec) {
	hasStopSignal := func(c *api.Container) bool { return c.Lifecycle != nil && c.Lifecycle.StopSignal != nil }
	if !inUse(old, hasStopSignal) {
		containers(spec, func(c *api.Container) {
			if hasStopSignal(c) {
				c.Lifecycle.StopSignal = nil
				if *c.Lifecycle == (api.Lifecycle{}) {
					c.Lifecycle = nil
				}
			}
		})
	}
	probes := func(c *api.Container) []*api.Probe {
		return []*api.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe}
	}
	httpGets := func(c *api.Container) []*api.HTTPGetAction {
		var out []*api.HTTPGetAction
		for _, p := range probes(c) {
			if p != nil && p.HTTPGet != nil {
				out = append(out, p.HTTPGet)
			}
		}
		if c.Lifecycle != nil {
			for _, h := range []*api.LifecycleHandler{c.Lifecycle.PostStart, c.Lifecycle.PreStop} {
				if h != nil && h.HTTPGet != nil {
					out = append(out, h.HTTPGet)
				}
			}
		}
		return out
	}
	if !inUse(old, func(c *api.Container) bool {
		for _, h := range httpGets(c) {
			if h.Protocol != nil {
				return true
			}
		}
		return false
	}) {
		containers(spec, func(c *api.Container) {
			for _, h := range httpGets(c) {
				h.Protocol = nil
			}
		})
	}
	if !inUse(old, func(c *api.Container) bool {
		for _, p := range probes(c) {
			if p != nil && p.GRPC != nil && p.GRPC.Mode != nil {
				return true
			}
		}
		return false
	}) {
		containers(spec, func(c *api.Container) {
			for _, p := range probes(c) {
				if p != nil && p.GRPC != nil {
					p.GRPC.Mode = nil
				}
			}
		})
	}
	if old == nil || old.SchedulingGroup == nil {
		spec.SchedulingGroup = nil
	}
	if old == nil || len(old.EvictionResponders) == 0 {
		spec.EvictionResponders = nil
	}
	if !volumeUserFieldsInUse(old) {
		dropVolumeUserFields(spec)
	}
	emptyDirMode := func(s *api.PodSpec) bool {
		for _, v := range s.Volumes {
			if v.EmptyDir != nil && v.EmptyDir.Mode != nil {
				return true
			}
		}
		return false
	}
	if old == nil || !emptyDirMode(old) {
		for _, v := range spec.Volumes {
			if v.EmptyDir != nil {
				v.EmptyDir.Mode = nil
			}
		}
	}
	hasBindOptions := func(c *api.Container) bool {
		for _, m := range c.VolumeMounts {
			if len(m.BindMountOptions) > 0 {
				return true
			}
		}
		return false
	}
	if !inUse(old, hasBindOptions) {
		containers(spec, func(c *api.Container) {
			for i := range c.VolumeMounts {
				c.VolumeMounts[i].BindMountOptions = nil
			}
		})
	}
}

// volumeUserFieldsInUse: whether spec sets any owner (defaultUser, user)
// of a file a volume writes.
func volumeUserFieldsInUse(spec *api.PodSpec) bool {
	if spec == nil {
		return false
	}
	used := false
	visitVolumeUsers(spec, func(u **int64) { used = used || *u != nil })
	return used
}

func dropVolumeUserFields(spec *api.PodSpec) {
	visitVolumeUsers(spec, func(u **int64) { *u = nil })
}

// visitVolumeUsers calls f with every defaultUser and user field of spec's
// volumes, as kube's AtomicWriteVolumeUserFields gate covers them.
func visitVolumeUsers(spec *api.PodSpec, f func(**int64)) {
	items := func(ks []api.KeyToPath) {
		for i := range ks {
			f(&ks[i].User)
		}
	}
	files := func(fs []api.DownwardAPIVolumeFile) {
		for i := range fs {
			f(&fs[i].User)
		}
	}
	for _, v := range spec.Volumes {
		switch {
		case v.Secret != nil:
			f(&v.Secret.DefaultUser)
			items(v.Secret.Items)
		case v.ConfigMap != nil:
			f(&v.ConfigMap.DefaultUser)
			items(v.ConfigMap.Items)
		case v.DownwardAPI != nil:
			f(&v.DownwardAPI.DefaultUser)
			files(v.DownwardAPI.Items)
		case v.Projected != nil:
			f(&v.Projected.DefaultUser)
			for _, s := range v.Projected.Sources {
				switch {
				case s.Secret != nil:
					items(s.Secret.Items)
				case s.DownwardAPI != nil:
					files(s.DownwardAPI.Items)
				case s.ConfigMap != nil:
					items(s.ConfigMap.Items)
				case s.ServiceAccountToken != nil:
					f(&s.ServiceAccountToken.User)
				case s.ClusterTrustBundle != nil:
					f(&s.ClusterTrustBundle.User)
				case s.PodCertificate != nil:
					f(&s.PodCertificate.User)
				}
			}
		}
	}
}
