package printers

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/storagevolume"
)

// The printers of the kinds served for the real kube-scheduler and
// kube-controller-manager (pkg/printers/internalversion/printers.go of
// Kubernetes v1.37.2: same columns, same cells).

func selectorColumn(desc string) api.TableColumnDefinition { return col("Selector", "string", desc) }

var statefulSetPrinter = printer(append([]api.TableColumnDefinition{
	nameColumn, col("Ready", "string", "Number of the pod with ready state"), ageColumn,
}, wide(containersColumn, imagesColumn)...), func(o *api.StatefulSet, now time.Time) api.TableRow {
	names, images := containerCells(o.Spec.Template.Spec.Containers)
	return cells(o.Name, fmt.Sprintf("%d/%d", int64(o.Status.ReadyReplicas), int64(deref(o.Spec.Replicas))),
		age(&o.ObjectMeta, now), names, images)
})

var daemonSetPrinter = printer(append([]api.TableColumnDefinition{
	nameColumn,
	col("Desired", "integer", appsv1.DaemonSetStatus{}.SwaggerDoc()["desiredNumberScheduled"]),
	col("Current", "integer", appsv1.DaemonSetStatus{}.SwaggerDoc()["currentNumberScheduled"]),
	col("Ready", "integer", appsv1.DaemonSetStatus{}.SwaggerDoc()["numberReady"]),
	col("Up-to-date", "integer", appsv1.DaemonSetStatus{}.SwaggerDoc()["updatedNumberScheduled"]),
	col("Available", "integer", appsv1.DaemonSetStatus{}.SwaggerDoc()["numberAvailable"]),
	col("Node Selector", "string", corev1.PodSpec{}.SwaggerDoc()["nodeSelector"]),
	ageColumn,
}, wide(containersColumn, imagesColumn, selectorColumn(appsv1.DaemonSetSpec{}.SwaggerDoc()["selector"]))...),
	func(o *api.DaemonSet, now time.Time) api.TableRow {
		s := o.Status
		names, images := containerCells(o.Spec.Template.Spec.Containers)
		return cells(o.Name, int64(s.DesiredNumberScheduled), int64(s.CurrentNumberScheduled), int64(s.NumberReady),
			int64(s.UpdatedNumberScheduled), int64(s.NumberAvailable), labels.FormatLabels(o.Spec.Template.Spec.NodeSelector),
			age(&o.ObjectMeta, now), names, images, formatSelector(o.Spec.Selector))
	})

var controllerRevisionPrinter = printer([]api.TableColumnDefinition{
	nameColumn,
	col("Controller", "string", "Controller of the object"),
	col("Revision", "string", appsv1.ControllerRevision{}.SwaggerDoc()["revision"]),
	ageColumn,
}, func(o *api.ControllerRevision, now time.Time) api.TableRow {
	controller := "<none>"
	if ref := api.GetControllerOf(&o.ObjectMeta); ref != nil {
		gv, _ := schema.ParseGroupVersion(ref.APIVersion)
		controller = strings.ToLower(schema.GroupKind{Group: gv.Group, Kind: ref.Kind}.String()) + "/" + ref.Name
	}
	return cells(o.Name, controller, o.Revision, age(&o.ObjectMeta, now))
})

var replicationControllerPrinter = printer(append([]api.TableColumnDefinition{
	nameColumn,
	col("Desired", "integer", corev1.ReplicationControllerSpec{}.SwaggerDoc()["replicas"]),
	col("Current", "integer", corev1.ReplicationControllerStatus{}.SwaggerDoc()["replicas"]),
	col("Ready", "integer", corev1.ReplicationControllerStatus{}.SwaggerDoc()["readyReplicas"]),
	ageColumn,
}, wide(containersColumn, imagesColumn, selectorColumn(corev1.ReplicationControllerSpec{}.SwaggerDoc()["selector"]))...),
	func(o *api.ReplicationController, now time.Time) api.TableRow {
		var cs []api.Container
		if o.Spec.Template != nil {
			cs = o.Spec.Template.Spec.Containers
		}
		names, images := containerCells(cs)
		return cells(o.Name, int64(deref(o.Spec.Replicas)), int64(o.Status.Replicas), int64(o.Status.ReadyReplicas),
			age(&o.ObjectMeta, now), names, images, labels.FormatLabels(o.Spec.Selector))
	})

var cronJobPrinter = printer(append([]api.TableColumnDefinition{
	nameColumn,
	col("Schedule", "string", batchv1.CronJobSpec{}.SwaggerDoc()["schedule"]),
	col("Timezone", "string", batchv1.CronJobSpec{}.SwaggerDoc()["timeZone"]),
	col("Suspend", "boolean", batchv1.CronJobSpec{}.SwaggerDoc()["suspend"]),
	col("Active", "integer", batchv1.CronJobStatus{}.SwaggerDoc()["active"]),
	col("Last Schedule", "string", batchv1.CronJobStatus{}.SwaggerDoc()["lastScheduleTime"]),
	ageColumn,
}, wide(containersColumn, imagesColumn, selectorColumn(batchv1.JobSpec{}.SwaggerDoc()["selector"]))...),
	func(o *api.CronJob, now time.Time) api.TableRow {
		last := "<none>"
		if o.Status.LastScheduleTime != nil {
			last = since(o.Status.LastScheduleTime.Time, now)
		}
		tz := "<none>"
		if o.Spec.TimeZone != nil {
			tz = *o.Spec.TimeZone
		}
		names, images := containerCells(o.Spec.JobTemplate.Spec.Template.Spec.Containers)
		return cells(o.Name, o.Spec.Schedule, tz, boolPtr(o.Spec.Suspend), int64(len(o.Status.Active)), last,
			age(&o.ObjectMeta, now), names, images, formatSelector(o.Spec.JobTemplate.Spec.Selector))
	})

var podDisruptionBudgetPrinter = printer([]api.TableColumnDefinition{
	nameColumn,
	col("Min Available", "string", "The minimum number of pods that must be available."),
	col("Max Unavailable", "string", "The maximum number of pods that may be unavailable."),
	col("Allowed Disruptions", "integer", "Calculated number of pods that may be disrupted at this time."),
	ageColumn,
}, func(o *api.PodDisruptionBudget, now time.Time) api.TableRow {
	minA, maxU := "N/A", "N/A"
	if o.Spec.MinAvailable != nil {
		minA = o.Spec.MinAvailable.String()
	}
	if o.Spec.MaxUnavailable != nil {
		maxU = o.Spec.MaxUnavailable.String()
	}
	return cells(o.Name, minA, maxU, int64(o.Status.DisruptionsAllowed), age(&o.ObjectMeta, now))
})

var hpaV2Printer = printer([]api.TableColumnDefinition{
	nameColumn,
	col("Reference", "string", autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["scaleTargetRef"]),
	col("Targets", "string", autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["metrics"]),
	col("MinPods", "string", autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["minReplicas"]),
	col("MaxPods", "string", autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["maxReplicas"]),
	col("Replicas", "string", autoscalingv2.HorizontalPodAutoscalerStatus{}.SwaggerDoc()["currentReplicas"]),
	ageColumn,
}, func(o *api.HorizontalPodAutoscaler, now time.Time) api.TableRow {
	minPods := "<unset>"
	if o.Spec.MinReplicas != nil {
		minPods = fmt.Sprintf("%d", *o.Spec.MinReplicas)
	}
	return cells(o.Name, o.Spec.ScaleTargetRef.Kind+"/"+o.Spec.ScaleTargetRef.Name, hpaMetrics(o),
		minPods, int64(o.Spec.MaxReplicas), int64(o.Status.CurrentReplicas), age(&o.ObjectMeta, now))
})

// autoscaling/v1 HPAs print as the v2 HPAs they are stored as, as
// kube-apiserver prints both from its internal version.
var horizontalPodAutoscalerPrinter = &Printer{Columns: hpaV2Printer.Columns, row: func(obj api.Object, now time.Time) (api.TableRow, bool) {
	if h, ok := obj.(*api.HorizontalPodAutoscalerV1); ok {
		obj = api.HPAFromV1(h)
	}
	return hpaV2Printer.row(obj, now)
}}

var serviceAccountPrinter = printer([]api.TableColumnDefinition{nameColumn, ageColumn},
	func(o *api.ServiceAccount, now time.Time) api.TableRow { return cells(o.Name, age(&o.ObjectMeta, now)) })

var resourceQuotaPrinter = printer([]api.TableColumnDefinition{
	nameColumn,
	col("Request", "string", "Request represents a minimum amount of cpu/memory that a container may consume."),
	col("Limit", "string", "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node."),
	ageColumn,
}, quotaRow)

var persistentVolumePrinter = printer(append([]api.TableColumnDefinition{
	nameColumn,
	col("Capacity", "string", corev1.PersistentVolumeSpec{}.SwaggerDoc()["capacity"]),
	col("Access Modes", "string", corev1.PersistentVolumeSpec{}.SwaggerDoc()["accessModes"]),
	col("Reclaim Policy", "string", corev1.PersistentVolumeSpec{}.SwaggerDoc()["persistentVolumeReclaimPolicy"]),
	col("Status", "string", corev1.PersistentVolumeStatus{}.SwaggerDoc()["phase"]),
	col("Claim", "string", corev1.PersistentVolumeSpec{}.SwaggerDoc()["claimRef"]),
	col("StorageClass", "string", "StorageClass of the pv"),
	col("VolumeAttributesClass", "string", "VolumeAttributesClass of the pv"),
	col("Reason", "string", corev1.PersistentVolumeStatus{}.SwaggerDoc()["reason"]),
	ageColumn,
}, wide(col("VolumeMode", "string", corev1.PersistentVolumeSpec{}.SwaggerDoc()["volumeMode"]))...), pvRow)

var persistentVolumeClaimPrinter = printer(append([]api.TableColumnDefinition{
	nameColumn,
	col("Status", "string", corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["phase"]),
	col("Volume", "string", corev1.PersistentVolumeClaimSpec{}.SwaggerDoc()["volumeName"]),
	col("Capacity", "string", corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["capacity"]),
	col("Access Modes", "string", corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["accessModes"]),
	col("StorageClass", "string", "StorageClass of the pvc"),
	col("VolumeAttributesClass", "string", "VolumeAttributesClass of the pvc"),
	ageColumn,
}, wide(col("VolumeMode", "string", corev1.PersistentVolumeClaimSpec{}.SwaggerDoc()["volumeMode"]))...), pvcRow)

var storageClassPrinter = printer([]api.TableColumnDefinition{
	nameColumn,
	col("Provisioner", "string", storagev1.StorageClass{}.SwaggerDoc()["provisioner"]),
	col("ReclaimPolicy", "string", storagev1.StorageClass{}.SwaggerDoc()["reclaimPolicy"]),
	col("VolumeBindingMode", "string", storagev1.StorageClass{}.SwaggerDoc()["volumeBindingMode"]),
	col("AllowVolumeExpansion", "string", storagev1.StorageClass{}.SwaggerDoc()["allowVolumeExpansion"]),
	ageColumn,
}, func(o *api.StorageClass, now time.Time) api.TableRow {
	reclaim := string(api.PersistentVolumeReclaimDelete)
	if o.ReclaimPolicy != nil {
		reclaim = string(*o.ReclaimPolicy)
	}
	binding := string(api.VolumeBindingImmediate)
	if o.VolumeBindingMode != nil {
		binding = string(*o.VolumeBindingMode)
	}
	// The default class is marked in lists only (markDefaultClass).
	return cells(o.Name, o.Provisioner, reclaim, binding, o.AllowVolumeExpansion != nil && *o.AllowVolumeExpansion, age(&o.ObjectMeta, now))
})

func init() { storageClassPrinter.List = markDefaultClass }

// markDefaultClass marks the effective default class of a list after its
// name, as kube v1.37's printStorageClassList: of the classes with either
// default annotation the most recently created, the first by name among
// those created in the same instant (storagevolume.DefaultClass). A
// single class is never marked.
func markDefaultClass(items []api.Object, rows []api.TableRow) {
	var classes []*api.StorageClass
	for _, obj := range items {
		if sc, ok := obj.(*api.StorageClass); ok {
			classes = append(classes, sc)
		}
	}
	def := storagevolume.DefaultClass(classes)
	for i, obj := range items {
		if def != nil && obj == api.Object(def) && len(rows[i].Cells) > 0 {
			if name, ok := rows[i].Cells[0].(string); ok {
				rows[i].Cells[0] = name + " (default)"
			}
		}
	}
}

var volumeAttributesClassPrinter = printer([]api.TableColumnDefinition{
	nameColumn, col("DriverName", "string", storagev1.VolumeAttributesClass{}.SwaggerDoc()["driverName"]), ageColumn,
}, func(o *api.VolumeAttributesClass, now time.Time) api.TableRow {
	return cells(o.Name, o.DriverName, age(&o.ObjectMeta, now))
})

var volumeAttachmentPrinter = printer([]api.TableColumnDefinition{
	nameColumn,
	{Name: "Attacher", Type: "string", Format: "name", Description: storagev1.VolumeAttachmentSpec{}.SwaggerDoc()["attacher"]},
	col("PV", "string", storagev1.VolumeAttachmentSource{}.SwaggerDoc()["persistentVolumeName"]),
	col("Node", "string", storagev1.VolumeAttachmentSpec{}.SwaggerDoc()["nodeName"]),
	col("Attached", "boolean", storagev1.VolumeAttachmentStatus{}.SwaggerDoc()["attached"]),
	ageColumn,
}, func(o *api.VolumeAttachment, now time.Time) api.TableRow {
	pv := ""
	if o.Spec.Source.PersistentVolumeName != nil {
		pv = *o.Spec.Source.PersistentVolumeName
	}
	return cells(o.Name, o.Spec.Attacher, pv, o.Spec.NodeName, o.Status.Attached, age(&o.ObjectMeta, now))
})

var csiNodePrinter = printer([]api.TableColumnDefinition{
	nameColumn, col("Drivers", "integer", "Drivers indicates the number of CSI drivers registered on the node"), ageColumn,
}, func(o *api.CSINode, now time.Time) api.TableRow {
	return cells(o.Name, int64(len(o.Spec.Drivers)), age(&o.ObjectMeta, now))
})

var csiDriverPrinter = printer([]api.TableColumnDefinition{
	nameColumn,
	col("AttachRequired", "boolean", storagev1.CSIDriverSpec{}.SwaggerDoc()["attachRequired"]),
	col("PodInfoOnMount", "boolean", storagev1.CSIDriverSpec{}.SwaggerDoc()["podInfoOnMount"]),
	col("StorageCapacity", "boolean", storagev1.CSIDriverSpec{}.SwaggerDoc()["storageCapacity"]),
	col("TokenRequests", "string", storagev1.CSIDriverSpec{}.SwaggerDoc()["tokenRequests"]),
	col("RequiresRepublish", "boolean", storagev1.CSIDriverSpec{}.SwaggerDoc()["requiresRepublish"]),
	col("Modes", "string", storagev1.CSIDriverSpec{}.SwaggerDoc()["volumeLifecycleModes"]),
	ageColumn,
}, csiDriverRow)

var csiStorageCapacityPrinter = printer([]api.TableColumnDefinition{
	nameColumn,
	col("StorageClassName", "string", storagev1.CSIStorageCapacity{}.SwaggerDoc()["storageClassName"]),
	col("Capacity", "string", storagev1.CSIStorageCapacity{}.SwaggerDoc()["capacity"]),
}, func(o *api.CSIStorageCapacity, now time.Time) api.TableRow {
	capacity := "<unset>"
	if o.Capacity != nil {
		capacity = o.Capacity.String()
	}
	return cells(o.Name, o.StorageClassName, capacity)
})

var podTemplatePrinter = printer([]api.TableColumnDefinition{
	nameColumn,
	col("Containers", "string", "Names of each container in the template."),
	col("Images", "string", "Images referenced by each container in the template."),
	col("Pod Labels", "string", "The labels for the pod template."),
}, func(o *api.PodTemplate, now time.Time) api.TableRow {
	names, images := containerCells(o.Template.Spec.Containers)
	return cells(o.Name, names, images, labels.FormatLabels(o.Template.Labels))
})

var deviceClassPrinter = printer([]api.TableColumnDefinition{nameColumn, ageColumn},
	func(o *api.DeviceClass, now time.Time) api.TableRow { return cells(o.Name, age(&o.ObjectMeta, now)) })

var resourceClaimPrinter = printer([]api.TableColumnDefinition{
	nameColumn, col("State", "string", "A summary of the current state (allocated, pending, reserved, etc.)."), ageColumn,
}, func(o *api.ResourceClaim, now time.Time) api.TableRow {
	var states []string
	if o.DeletionTimestamp != nil {
		states = append(states, "deleted")
	}
	if o.Status.Allocation == nil {
		if o.DeletionTimestamp == nil {
			states = append(states, "pending")
		}
	} else {
		states = append(states, "allocated")
		if len(o.Status.ReservedFor) > 0 {
			states = append(states, "reserved")
		}
	}
	return cells(o.Name, strings.Join(states, ","), age(&o.ObjectMeta, now))
})

var resourceClaimTemplatePrinter = printer([]api.TableColumnDefinition{nameColumn, ageColumn},
	func(o *api.ResourceClaimTemplate, now time.Time) api.TableRow {
		return cells(o.Name, age(&o.ObjectMeta, now))
	})

var resourceSlicePrinter = printer([]api.TableColumnDefinition{
	nameColumn,
	col("Node", "string", resourcev1.ResourceSliceSpec{}.SwaggerDoc()["nodeName"]),
	col("Driver", "string", resourcev1.ResourceSliceSpec{}.SwaggerDoc()["driver"]),
	col("Pool", "string", resourcev1.ResourcePool{}.SwaggerDoc()["name"]),
	ageColumn,
}, func(o *api.ResourceSlice, now time.Time) api.TableRow {
	node := ""
	if o.Spec.NodeName != nil {
		node = *o.Spec.NodeName
	}
	return cells(o.Name, node, o.Spec.Driver, o.Spec.Pool.Name, age(&o.ObjectMeta, now))
})

var deviceTaintRulePrinter = printer([]api.TableColumnDefinition{
	nameColumn,
	col("Key", "string", resourcev1.DeviceTaint{}.SwaggerDoc()["key"]),
	col("Value", "string", resourcev1.DeviceTaint{}.SwaggerDoc()["value"]),
	col("Effect", "string", resourcev1.DeviceTaint{}.SwaggerDoc()["effect"]),
	col("TimeAdded", "string", resourcev1.DeviceTaint{}.SwaggerDoc()["timeAdded"]),
	ageColumn,
}, func(o *api.DeviceTaintRule, now time.Time) api.TableRow {
	added := ""
	if t := o.Spec.Taint.TimeAdded; t != nil {
		added = since(t.Time, now)
	}
	tn := o.Spec.Taint
	return cells(o.Name, tn.Key, tn.Value, tn.Effect, added, age(&o.ObjectMeta, now))
})

var serviceCIDRPrinter = printer([]api.TableColumnDefinition{
	nameColumn, col("CIDRs", "string", networkingv1.ServiceCIDRSpec{}.SwaggerDoc()["cidrs"]), ageColumn,
}, func(o *api.ServiceCIDR, now time.Time) api.TableRow {
	return cells(o.Name, strings.Join(o.Spec.CIDRs, ","), age(&o.ObjectMeta, now))
})

// kube prints an IPAddress's age in a cell without a column.
var ipAddressPrinter = printer([]api.TableColumnDefinition{
	nameColumn, col("ParentRef", "string", networkingv1.IPAddressSpec{}.SwaggerDoc()["parentRef"]),
}, func(o *api.IPAddress, now time.Time) api.TableRow {
	parent := "<none>"
	if p := o.Spec.ParentRef; p != nil {
		parent = strings.ToLower(schema.GroupResource{Group: p.Group, Resource: p.Resource}.String())
		if p.Namespace != "" {
			parent += "/" + p.Namespace
		}
		parent += "/" + p.Name
	}
	return cells(o.Name, parent, age(&o.ObjectMeta, now))
})

var podCertificateRequestPrinter = printer([]api.TableColumnDefinition{
	nameColumn,
	col("PodName", "string", certificatesv1.PodCertificateRequestSpec{}.SwaggerDoc()["podName"]),
	col("ServiceAccountName", "string", certificatesv1.PodCertificateRequestSpec{}.SwaggerDoc()["serviceAccountName"]),
	col("NodeName", "string", certificatesv1.PodCertificateRequestSpec{}.SwaggerDoc()["nodeName"]),
	col("SignerName", "string", certificatesv1.PodCertificateRequestSpec{}.SwaggerDoc()["signerName"]),
	col("State", "string", "Is the request Pending, Issued, Denied, or Failed?"),
	col("UnverifiedUserAnnotations", "string", certificatesv1.PodCertificateRequestSpec{}.SwaggerDoc()["unverifiedUserAnnotations"]),
}, func(o *api.PodCertificateRequest, now time.Time) api.TableRow {
	state := "Pending"
	for _, c := range o.Status.Conditions {
		switch c.Type {
		case "Issued", "Denied", "Failed":
			state = c.Type
		}
	}
	return cells(o.Name, o.Spec.PodName, o.Spec.ServiceAccountName, o.Spec.NodeName, o.Spec.SignerName, state,
		labels.FormatLabels(o.Spec.UnverifiedUserAnnotations))
})

var validatingAdmissionPolicyPrinter = printer([]api.TableColumnDefinition{
	nameColumn,
	col("Validations", "integer", "Validations indicates the number of validation rules defined in this configuration"),
	col("ParamKind", "string", "ParamKind specifies the kind of resources used to parameterize this policy"),
	ageColumn,
}, func(o *api.ValidatingAdmissionPolicy, now time.Time) api.TableRow {
	paramKind := "<unset>"
	if pk := o.Spec.ParamKind; pk != nil {
		paramKind = pk.APIVersion + "/" + pk.Kind
	}
	return cells(o.Name, int64(len(o.Spec.Validations)), paramKind, age(&o.ObjectMeta, now))
})

var validatingAdmissionPolicyBindingPrinter = printer([]api.TableColumnDefinition{
	nameColumn,
	col("PolicyName", "string", "PolicyName indicates the policy definition which the policy binding binded to"),
	col("ParamRef", "string", "ParamRef indicates the param resource which sets the configuration param"),
	ageColumn,
}, func(o *api.ValidatingAdmissionPolicyBinding, now time.Time) api.TableRow {
	param := "<unset>"
	if pr := o.Spec.ParamRef; pr != nil {
		switch {
		case pr.Name != "" && pr.Namespace != "":
			param = pr.Namespace + "/" + pr.Name
		case pr.Name != "":
			// kube cannot tell here whether the params are cluster-scoped.
			param = "*/" + pr.Name
		case pr.Selector != nil:
			param = goSelectorString(pr.Selector)
		}
	}
	return cells(o.Name, o.Spec.PolicyName, param, age(&o.ObjectMeta, now))
})

var webhookColumns = []api.TableColumnDefinition{
	nameColumn,
	col("Webhooks", "integer", "Webhooks indicates the number of webhooks registered in this configuration"),
	ageColumn,
}

var mutatingWebhookConfigurationPrinter = printer(webhookColumns, func(o *api.MutatingWebhookConfiguration, now time.Time) api.TableRow {
	return cells(o.Name, int64(len(o.Webhooks)), age(&o.ObjectMeta, now))
})

var validatingWebhookConfigurationPrinter = printer(webhookColumns, func(o *api.ValidatingWebhookConfiguration, now time.Time) api.TableRow {
	return cells(o.Name, int64(len(o.Webhooks)), age(&o.ObjectMeta, now))
})

// kube's name column of StorageVersionMigrations has no name format.
var storageVersionMigrationPrinter = printer([]api.TableColumnDefinition{
	{Name: "Name", Type: "string", Description: metaDoc["name"]},
	col("Resource", "string", "GroupResource to migrate"),
	col("Status", "string", "Status of the migration"),
}, func(o *api.StorageVersionMigration, now time.Time) api.TableRow {
	status := "Unknown"
	for _, c := range o.Status.Conditions {
		if c.Status == api.ConditionTrue && (c.Type == "Running" || c.Type == "Failed" || c.Type == "Succeeded") {
			status = c.Type
		}
	}
	gr := schema.GroupResource{Group: o.Spec.Resource.Group, Resource: o.Spec.Resource.Resource}
	return cells(o.Name, gr.String(), status)
})

func deref(n *int32) int32 {
	if n == nil {
		return 0
	}
	return *n
}

// boolPtr is kube's printBoolPtr.
func boolPtr(b *bool) string {
	if b == nil {
		return "<unset>"
	}
	if *b {
		return "True"
	}
	return "False"
}

func formatSelector(sel *api.LabelSelector) string {
	return metav1.FormatLabelSelector(labelSelector(sel))
}

// accessModes is kube's GetAccessModesAsString.
func accessModes(modes []api.PersistentVolumeAccessMode) string {
	var out []string
	for _, m := range []struct {
		mode  api.PersistentVolumeAccessMode
		short string
	}{{api.ReadWriteOnce, "RWO"}, {api.ReadOnlyMany, "ROX"}, {api.ReadWriteMany, "RWX"}, {api.ReadWriteOncePod, "RWOP"}} {
		if slices.Contains(modes, m.mode) {
			out = append(out, m.short)
		}
	}
	return strings.Join(out, ",")
}

// betaStorageClassAnnotation names a volume's or claim's class before
// storageClassName; kube's printers still read it first.
const betaStorageClassAnnotation = "volume.beta.kubernetes.io/storage-class"

func pvRow(o *api.PersistentVolume, now time.Time) api.TableRow {
	claim := ""
	if r := o.Spec.ClaimRef; r != nil {
		claim = r.Namespace + "/" + r.Name
	}
	size := o.Spec.Capacity[api.ResourceStorage]
	phase := string(o.Status.Phase)
	if o.DeletionTimestamp != nil {
		phase = "Terminating"
	}
	mode := "<unset>"
	if o.Spec.VolumeMode != nil {
		mode = string(*o.Spec.VolumeMode)
	}
	vac := "<unset>"
	if o.Spec.VolumeAttributesClassName != nil {
		vac = *o.Spec.VolumeAttributesClassName
	}
	class, ok := o.Annotations[betaStorageClassAnnotation]
	if !ok {
		class = o.Spec.StorageClassName
	}
	return cells(o.Name, size.String(), accessModes(o.Spec.AccessModes), string(o.Spec.PersistentVolumeReclaimPolicy),
		phase, claim, class, vac, o.Status.Reason, age(&o.ObjectMeta, now), mode)
}

func pvcRow(o *api.PersistentVolumeClaim, now time.Time) api.TableRow {
	phase := string(o.Status.Phase)
	if o.DeletionTimestamp != nil {
		phase = "Terminating"
	}
	vac, mode, capacity, modes := "<unset>", "<unset>", "", ""
	if o.Spec.VolumeAttributesClassName != nil {
		vac = *o.Spec.VolumeAttributesClassName
	}
	if o.Spec.VolumeName != "" {
		modes = accessModes(o.Status.AccessModes)
		q := o.Status.Capacity[api.ResourceStorage]
		capacity = q.String()
	}
	if o.Spec.VolumeMode != nil {
		mode = string(*o.Spec.VolumeMode)
	}
	class, ok := o.Annotations[betaStorageClassAnnotation]
	if !ok && o.Spec.StorageClassName != nil {
		class = *o.Spec.StorageClassName
	}
	return cells(o.Name, phase, o.Spec.VolumeName, capacity, modes, class, vac, age(&o.ObjectMeta, now), mode)
}

func csiDriverRow(o *api.CSIDriver, now time.Time) api.TableRow {
	or := func(b *bool, def bool) bool {
		if b == nil {
			return def
		}
		return *b
	}
	var modes []string
	for _, m := range o.Spec.VolumeLifecycleModes {
		modes = append(modes, m)
	}
	modesCell := strings.Join(modes, ",")
	if modesCell == "" {
		modesCell = "<none>"
	}
	tokens := "<unset>"
	if o.Spec.TokenRequests != nil {
		var auds []string
		for _, t := range o.Spec.TokenRequests {
			auds = append(auds, t.Audience)
		}
		tokens = strings.Join(auds, ",")
	}
	return cells(o.Name, or(o.Spec.AttachRequired, true), or(o.Spec.PodInfoOnMount, false), or(o.Spec.StorageCapacity, false),
		tokens, or(o.Spec.RequiresRepublish, false), modesCell, age(&o.ObjectMeta, now))
}

// quotaRow is kube's printResourceQuota: "name: used/hard" of each
// resource of status.hard, sorted, limits.* in the Limit cell.
func quotaRow(o *api.ResourceQuota, now time.Time) api.TableRow {
	names := make([]string, 0, len(o.Status.Hard))
	for n := range o.Status.Hard {
		names = append(names, string(n))
	}
	slices.Sort(names)
	var req, lim strings.Builder
	for _, n := range names {
		w := &req
		if pieces := strings.Split(n, "."); len(pieces) > 1 && pieces[0] == "limits" {
			w = &lim
		}
		used, hard := o.Status.Used[api.ResourceName(n)], o.Status.Hard[api.ResourceName(n)]
		fmt.Fprintf(w, "%s: %s/%s, ", n, used.String(), hard.String())
	}
	return cells(o.Name, strings.TrimSuffix(req.String(), ", "), strings.TrimSuffix(lim.String(), ", "), age(&o.ObjectMeta, now))
}

// hpaMetrics is kube's formatHPAMetrics, over the autoscaling/v2 types
// the metric sources (kept as written) decode to.
func hpaMetrics(o *api.HorizontalPodAutoscaler) string {
	var specs []autoscalingv2.MetricSpec
	var statuses []autoscalingv2.MetricStatus
	if b, err := json.Marshal(o.Spec.Metrics); err == nil {
		_ = json.Unmarshal(b, &specs)
	}
	if b, err := json.Marshal(o.Status.CurrentMetrics); err == nil {
		_ = json.Unmarshal(b, &statuses)
	}
	if len(specs) == 0 {
		return "<none>"
	}
	var list []string
	status := func(i int) *autoscalingv2.MetricStatus {
		if i < len(statuses) {
			return &statuses[i]
		}
		return nil
	}
	for i, spec := range specs {
		st := status(i)
		current := "<unknown>"
		switch spec.Type {
		case autoscalingv2.ExternalMetricSourceType:
			if spec.External == nil {
				list = append(list, "<unknown type>")
				continue
			}
			if spec.External.Target.AverageValue != nil {
				if st != nil && st.External != nil && st.External.Current.AverageValue != nil {
					current = st.External.Current.AverageValue.String()
				}
				list = append(list, fmt.Sprintf("%s/%s (avg)", current, spec.External.Target.AverageValue.String()))
			} else {
				if st != nil && st.External != nil {
					current = st.External.Current.Value.String()
				}
				list = append(list, fmt.Sprintf("%s/%s", current, spec.External.Target.Value.String()))
			}
		case autoscalingv2.PodsMetricSourceType:
			if spec.Pods == nil {
				list = append(list, "<unknown type>")
				continue
			}
			if st != nil && st.Pods != nil {
				current = st.Pods.Current.AverageValue.String()
			}
			list = append(list, fmt.Sprintf("%s/%s", current, spec.Pods.Target.AverageValue.String()))
		case autoscalingv2.ObjectMetricSourceType:
			if spec.Object == nil {
				list = append(list, "<unknown type>")
				continue
			}
			if spec.Object.Target.AverageValue != nil {
				if st != nil && st.Object != nil && st.Object.Current.AverageValue != nil {
					current = st.Object.Current.AverageValue.String()
				}
				list = append(list, fmt.Sprintf("%s/%s (avg)", current, spec.Object.Target.AverageValue.String()))
			} else {
				if st != nil && st.Object != nil {
					current = st.Object.Current.Value.String()
				}
				list = append(list, fmt.Sprintf("%s/%s", current, spec.Object.Target.Value.String()))
			}
		case autoscalingv2.ResourceMetricSourceType, autoscalingv2.ContainerResourceMetricSourceType:
			var name corev1.ResourceName
			var target autoscalingv2.MetricTarget
			var cur *autoscalingv2.MetricValueStatus
			if spec.Resource != nil {
				name, target = spec.Resource.Name, spec.Resource.Target
				if st != nil && st.Resource != nil {
					cur = &st.Resource.Current
				}
			} else if spec.ContainerResource != nil {
				name, target = spec.ContainerResource.Name, spec.ContainerResource.Target
				if st != nil && st.ContainerResource != nil {
					cur = &st.ContainerResource.Current
				}
			} else {
				list = append(list, "<unknown type>")
				continue
			}
			if target.AverageValue != nil {
				if cur != nil {
					current = cur.AverageValue.String()
				}
				list = append(list, fmt.Sprintf("%s: %s/%s", name.String(), current, target.AverageValue.String()))
			} else {
				if cur != nil && cur.AverageUtilization != nil {
					current = fmt.Sprintf("%d%%", *cur.AverageUtilization)
				}
				t := "<auto>"
				if target.AverageUtilization != nil {
					t = fmt.Sprintf("%d%%", *target.AverageUtilization)
				}
				list = append(list, fmt.Sprintf("%s: %s/%s", name.String(), current, t))
			}
		default:
			list = append(list, "<unknown type>")
		}
	}
	if len(list) > 2 {
		return fmt.Sprintf("%s + %d more...", strings.Join(list[:2], ", "), len(list)-2)
	}
	return strings.Join(list, ", ")
}

// goSelectorString is a label selector as kube's printer shows it: the Go
// form of metav1.LabelSelector's String method.
func goSelectorString(sel *api.LabelSelector) string {
	var ls metav1.LabelSelector
	if data, err := json.Marshal(sel); err != nil || json.Unmarshal(data, &ls) != nil {
		return "<invalid>"
	}
	return ls.String()
}
