package defaults

import (
	"encoding/json"

	"github.com/minik8s/minik8s/api"
)

// served defaults the kinds served for the real kube-scheduler and
// kube-controller-manager as Kubernetes' SetDefaults_* do (apps/v1,
// batch/v1, core/v1, policy/v1, autoscaling/v2, storage/v1); it reports
// whether obj is one of them.
func served(obj api.Object) bool {
	switch o := obj.(type) {
	case *api.StatefulSet:
		StatefulSet(o)
	case *api.DaemonSet:
		DaemonSet(o)
	case *api.ReplicationController:
		ReplicationController(o)
	case *api.CronJob:
		CronJob(o)
	case *api.HorizontalPodAutoscaler:
		HorizontalPodAutoscaler(o)
	case *api.HorizontalPodAutoscalerV1:
		// v1's only default; its CPU target defaults in the conversion.
		if o.Spec.MinReplicas == nil {
			o.Spec.MinReplicas = ptr(int32(1))
		}
	case *api.APIService:
		if o.Spec.Service != nil && o.Spec.Service.Port == nil {
			o.Spec.Service.Port = ptr(int32(443))
		}
	case *api.PersistentVolume:
		if o.Spec.PersistentVolumeReclaimPolicy == "" {
			o.Spec.PersistentVolumeReclaimPolicy = api.PersistentVolumeReclaimRetain
		}
		if o.Spec.VolumeMode == nil {
			o.Spec.VolumeMode = ptr(api.PersistentVolumeFilesystem)
		}
		// kube's SetDefaults_HostPathVolumeSource, as for pods' volumes.
		if hp := o.Spec.HostPath; hp != nil && hp.Type == nil {
			hp.Type = ptr(api.HostPathUnset)
		}
	case *api.PersistentVolumeClaim:
		persistentVolumeClaimSpec(&o.Spec)
	case *api.StorageClass:
		if o.ReclaimPolicy == nil {
			o.ReclaimPolicy = ptr(api.PersistentVolumeReclaimDelete)
		}
		if o.VolumeBindingMode == nil {
			o.VolumeBindingMode = ptr(api.VolumeBindingImmediate)
		}
	case *api.CSIDriver:
		CSIDriver(o)
	case *api.PodTemplate:
		PodSpec(&o.Template.Spec)
	case *api.LimitRange:
		for i := range o.Spec.Limits {
			LimitRangeItem(&o.Spec.Limits[i])
		}
	default:
		return builtinKinds(obj)
	}
	return true
}

func persistentVolumeClaimSpec(s *api.PersistentVolumeClaimSpec) {
	if s.VolumeMode == nil {
		s.VolumeMode = ptr(api.PersistentVolumeFilesystem)
	}
}

// StatefulSet defaults a StatefulSet: OrderedReady pods, a RollingUpdate
// from partition 0, 1 replica, 10 revisions kept, claims retained, the
// claim templates' volume mode and the pod template.
func StatefulSet(s *api.StatefulSet) {
	sp := &s.Spec
	if sp.PodManagementPolicy == "" {
		sp.PodManagementPolicy = api.OrderedReadyPodManagement
	}
	if sp.UpdateStrategy.Type == "" {
		sp.UpdateStrategy.Type = "RollingUpdate"
		if sp.UpdateStrategy.RollingUpdate == nil {
			sp.UpdateStrategy.RollingUpdate = &api.RollingUpdateStatefulSetStrategy{}
		}
	}
	if sp.UpdateStrategy.Type == "RollingUpdate" && sp.UpdateStrategy.RollingUpdate != nil {
		ru := sp.UpdateStrategy.RollingUpdate
		if ru.Partition == nil {
			ru.Partition = ptr(int32(0))
		}
		if ru.MaxUnavailable == nil {
			ru.MaxUnavailable = ptr(api.FromInt(1))
		}
	}
	if sp.PersistentVolumeClaimRetentionPolicy == nil {
		sp.PersistentVolumeClaimRetentionPolicy = &api.StatefulSetPersistentVolumeClaimRetentionPolicy{}
	}
	if sp.PersistentVolumeClaimRetentionPolicy.WhenDeleted == "" {
		sp.PersistentVolumeClaimRetentionPolicy.WhenDeleted = "Retain"
	}
	if sp.PersistentVolumeClaimRetentionPolicy.WhenScaled == "" {
		sp.PersistentVolumeClaimRetentionPolicy.WhenScaled = "Retain"
	}
	if sp.Replicas == nil {
		sp.Replicas = ptr(int32(1))
	}
	if sp.RevisionHistoryLimit == nil {
		sp.RevisionHistoryLimit = ptr(int32(10))
	}
	for i := range sp.VolumeClaimTemplates {
		// Kubernetes defaults the templates as claims: Pending included;
		// its apps/v1 conversion gives each the claim's apiVersion and kind.
		t := &sp.VolumeClaimTemplates[i]
		t.APIVersion, t.Kind = "v1", "PersistentVolumeClaim"
		persistentVolumeClaimSpec(&t.Spec)
		if t.Status.Phase == "" {
			t.Status.Phase = api.ClaimPending
		}
	}
	PodSpec(&sp.Template.Spec)
}

// DaemonSet defaults a DaemonSet: a RollingUpdate of one unavailable pod
// and no surge, 10 revisions kept, and the pod template.
func DaemonSet(d *api.DaemonSet) {
	us := &d.Spec.UpdateStrategy
	if us.Type == "" {
		us.Type = "RollingUpdate"
	}
	if us.Type == "RollingUpdate" {
		if us.RollingUpdate == nil {
			us.RollingUpdate = &api.RollingUpdateDaemonSet{}
		}
		if us.RollingUpdate.MaxUnavailable == nil {
			us.RollingUpdate.MaxUnavailable = ptr(api.FromInt(1))
		}
		if us.RollingUpdate.MaxSurge == nil {
			us.RollingUpdate.MaxSurge = ptr(api.FromInt(0))
		}
	}
	if d.Spec.RevisionHistoryLimit == nil {
		d.Spec.RevisionHistoryLimit = ptr(int32(10))
	}
	PodSpec(&d.Spec.Template.Spec)
}

// ReplicationController defaults an RC as core/v1 does: its selector and
// labels from the template's labels when unset, 1 replica, the template.
func ReplicationController(rc *api.ReplicationController) {
	if t := rc.Spec.Template; t != nil {
		if len(rc.Spec.Selector) == 0 && len(t.Labels) > 0 {
			rc.Spec.Selector = make(map[string]string, len(t.Labels))
			for k, v := range t.Labels {
				rc.Spec.Selector[k] = v
			}
		}
		if len(rc.Labels) == 0 && len(t.Labels) > 0 {
			rc.Labels = make(map[string]string, len(t.Labels))
			for k, v := range t.Labels {
				rc.Labels[k] = v
			}
		}
		PodSpec(&t.Spec)
	}
	if rc.Spec.Replicas == nil {
		rc.Spec.Replicas = ptr(int32(1))
	}
}

// CronJob defaults a CronJob: concurrency Allow, not suspended, 3
// successful and 1 failed Job kept, and the Jobs' pod template.
func CronJob(c *api.CronJob) {
	s := &c.Spec
	if s.ConcurrencyPolicy == "" {
		s.ConcurrencyPolicy = api.AllowConcurrent
	}
	if s.Suspend == nil {
		s.Suspend = ptr(false)
	}
	if s.SuccessfulJobsHistoryLimit == nil {
		s.SuccessfulJobsHistoryLimit = ptr(int32(3))
	}
	if s.FailedJobsHistoryLimit == nil {
		s.FailedJobsHistoryLimit = ptr(int32(1))
	}
	PodSpec(&s.JobTemplate.Spec.Template.Spec)
}

// HorizontalPodAutoscaler defaults an autoscaling/v2 HPA: 1 replica at
// least, and 80% CPU utilization when no metric is given.
func HorizontalPodAutoscaler(h *api.HorizontalPodAutoscaler) {
	if h.Spec.MinReplicas == nil {
		h.Spec.MinReplicas = ptr(int32(1))
	}
	if len(h.Spec.Metrics) == 0 {
		cpu, _ := json.Marshal(map[string]any{"name": "cpu", "target": map[string]any{"type": "Utilization", "averageUtilization": 80}})
		h.Spec.Metrics = []api.MetricSpec{{Type: "Resource", Resource: cpu}}
	}
	hpaBehaviorDefaults(h)
}

// CSIDriver defaults a CSIDriver: attach required, no pod info, no
// capacity tracking, fsGroup for RWO with an fsType, Persistent volumes,
// no republishing, no SELinux mount.
func CSIDriver(d *api.CSIDriver) {
	s := &d.Spec
	if s.AttachRequired == nil {
		s.AttachRequired = ptr(true)
	}
	if s.PodInfoOnMount == nil {
		s.PodInfoOnMount = ptr(false)
	}
	if s.StorageCapacity == nil {
		s.StorageCapacity = ptr(false)
	}
	if s.FSGroupPolicy == nil {
		s.FSGroupPolicy = ptr("ReadWriteOnceWithFSType")
	}
	if len(s.VolumeLifecycleModes) == 0 {
		s.VolumeLifecycleModes = []string{"Persistent"}
	}
	if s.RequiresRepublish == nil {
		s.RequiresRepublish = ptr(false)
	}
	if s.SELinuxMount == nil {
		s.SELinuxMount = ptr(false)
	}
}

// LimitRangeItem defaults a container limit as Kubernetes does: the default
// limits from max, the default requests from the default limits, then min.
func LimitRangeItem(l *api.LimitRangeItem) {
	if l.Type != api.LimitTypeContainer {
		return
	}
	if l.Default == nil {
		l.Default = api.ResourceList{}
	}
	if l.DefaultRequest == nil {
		l.DefaultRequest = api.ResourceList{}
	}
	for _, from := range []struct{ src, dst api.ResourceList }{{l.Max, l.Default}, {l.Default, l.DefaultRequest}, {l.Min, l.DefaultRequest}} {
		for k, v := range from.src {
			if _, ok := from.dst[k]; !ok {
				from.dst[k] = v
			}
		}
	}
}
