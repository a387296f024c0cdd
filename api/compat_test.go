package api

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	storagemigrationv1 "k8s.io/api/storagemigration/v1"
)

func strictDecode(data []byte, into any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	return d.Decode(into)
}

// TestJSONMatchesKubernetes fills every field of each kind, checks that
// Kubernetes' own Go types (k8s.io/api) accept the JSON with no unknown
// field, and that what Kubernetes writes back decodes to the same object.
// A misspelt JSON name or an incompatible type fails here.
func TestJSONMatchesKubernetes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		ours   func() any
		theirs func() any
	}{
		{"Pod", func() any { return filled[Pod]() }, func() any { return &corev1.Pod{} }},
		{"PodTemplateSpec", func() any { return filled[PodTemplateSpec]() }, func() any { return &corev1.PodTemplateSpec{} }},
		{"Node", func() any { return filled[Node]() }, func() any { return &corev1.Node{} }},
		{"Service", func() any { return filled[Service]() }, func() any { return &corev1.Service{} }},
		{"Namespace", func() any { return filled[Namespace]() }, func() any { return &corev1.Namespace{} }},
		{"ConfigMap", func() any { return filled[ConfigMap]() }, func() any { return &corev1.ConfigMap{} }},
		{"Secret", func() any { return filled[Secret]() }, func() any { return &corev1.Secret{} }},
		{"Event", func() any { return filled[Event]() }, func() any { return &corev1.Event{} }},
		{"Endpoints", func() any { return filled[Endpoints]() }, func() any { return &corev1.Endpoints{} }},
		{"Binding", func() any { return filled[Binding]() }, func() any { return &corev1.Binding{} }},
		{"Deployment", func() any { return filled[Deployment]() }, func() any { return &appsv1.Deployment{} }},
		{"ReplicaSet", func() any { return filled[ReplicaSet]() }, func() any { return &appsv1.ReplicaSet{} }},
		{"Scale", func() any { return filled[Scale]() }, func() any { return &autoscalingv1.Scale{} }},
		{"Job", func() any { return filled[Job]() }, func() any { return &batchv1.Job{} }},
		{"EndpointSlice", func() any { return filled[EndpointSlice]() }, func() any { return &discoveryv1.EndpointSlice{} }},
		{"Lease", func() any { return filled[Lease]() }, func() any { return &coordinationv1.Lease{} }},
		{"PersistentVolume", func() any { return filled[PersistentVolume]() }, func() any { return &corev1.PersistentVolume{} }},
		{"PersistentVolumeClaim", func() any { return filled[PersistentVolumeClaim]() }, func() any { return &corev1.PersistentVolumeClaim{} }},
		{"ReplicationController", func() any { return filled[ReplicationController]() }, func() any { return &corev1.ReplicationController{} }},
		{"ServiceAccount", func() any { return filled[ServiceAccount]() }, func() any { return &corev1.ServiceAccount{} }},
		{"ResourceQuota", func() any { return filled[ResourceQuota]() }, func() any { return &corev1.ResourceQuota{} }},
		{"StatefulSet", func() any { return filled[StatefulSet]() }, func() any { return &appsv1.StatefulSet{} }},
		{"DaemonSet", func() any { return filled[DaemonSet]() }, func() any { return &appsv1.DaemonSet{} }},
		{"ControllerRevision", func() any { return filled[ControllerRevision]() }, func() any { return &appsv1.ControllerRevision{} }},
		{"CronJob", func() any { return filled[CronJob]() }, func() any { return &batchv1.CronJob{} }},
		{"PodDisruptionBudget", func() any { return filled[PodDisruptionBudget]() }, func() any { return &policyv1.PodDisruptionBudget{} }},
		{"HorizontalPodAutoscaler", func() any { return filled[HorizontalPodAutoscaler]() }, func() any { return &autoscalingv2.HorizontalPodAutoscaler{} }},
		{"HorizontalPodAutoscalerV1", func() any { return filled[HorizontalPodAutoscalerV1]() }, func() any { return &autoscalingv1.HorizontalPodAutoscaler{} }},
		{"StorageClass", func() any { return filled[StorageClass]() }, func() any { return &storagev1.StorageClass{} }},
		{"CSINode", func() any { return filled[CSINode]() }, func() any { return &storagev1.CSINode{} }},
		{"CSIDriver", func() any { return filled[CSIDriver]() }, func() any { return &storagev1.CSIDriver{} }},
		{"CSIStorageCapacity", func() any { return filled[CSIStorageCapacity]() }, func() any { return &storagev1.CSIStorageCapacity{} }},
		{"VolumeAttachment", func() any { return filled[VolumeAttachment]() }, func() any { return &storagev1.VolumeAttachment{} }},
		{"VolumeAttributesClass", func() any { return filled[VolumeAttributesClass]() }, func() any { return &storagev1.VolumeAttributesClass{} }},
		{"DeviceClass", func() any { return filled[DeviceClass]() }, func() any { return &resourcev1.DeviceClass{} }},
		{"ResourceClaim", func() any { return filled[ResourceClaim]() }, func() any { return &resourcev1.ResourceClaim{} }},
		{"ResourceClaimTemplate", func() any { return filled[ResourceClaimTemplate]() }, func() any { return &resourcev1.ResourceClaimTemplate{} }},
		{"ResourceSlice", func() any { return filled[ResourceSlice]() }, func() any { return &resourcev1.ResourceSlice{} }},
		{"DeviceTaintRule", func() any { return filled[DeviceTaintRule]() }, func() any { return &resourcev1.DeviceTaintRule{} }},
		{"ServiceCIDR", func() any { return filled[ServiceCIDR]() }, func() any { return &networkingv1.ServiceCIDR{} }},
		{"IPAddress", func() any { return filled[IPAddress]() }, func() any { return &networkingv1.IPAddress{} }},
		{"PodCertificateRequest", func() any { return filled[PodCertificateRequest]() }, func() any { return &certificatesv1.PodCertificateRequest{} }},
		{"ValidatingAdmissionPolicy", func() any { return filled[ValidatingAdmissionPolicy]() }, func() any { return &admissionregistrationv1.ValidatingAdmissionPolicy{} }},
		{"ValidatingAdmissionPolicyBinding", func() any { return filled[ValidatingAdmissionPolicyBinding]() }, func() any { return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{} }},
		{"MutatingWebhookConfiguration", func() any { return filled[MutatingWebhookConfiguration]() }, func() any { return &admissionregistrationv1.MutatingWebhookConfiguration{} }},
		{"ValidatingWebhookConfiguration", func() any { return filled[ValidatingWebhookConfiguration]() }, func() any { return &admissionregistrationv1.ValidatingWebhookConfiguration{} }},
		{"StorageVersionMigration", func() any { return filled[StorageVersionMigration]() }, func() any { return &storagemigrationv1.StorageVersionMigration{} }},
		{"events.k8s.io/v1 Event", func() any { return filled[EventV1]() }, func() any { return &eventsv1.Event{} }},
		{"PodTemplate", func() any { return filled[PodTemplate]() }, func() any { return &corev1.PodTemplate{} }},
		{"LimitRange", func() any { return filled[LimitRange]() }, func() any { return &corev1.LimitRange{} }},
		{"PodList", func() any { return filled[PodList]() }, func() any { return &corev1.PodList{} }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ours := tc.ours()
			data, err := json.Marshal(ours)
			if err != nil {
				t.Fatalf("marshal: %v", err)
			}
			theirs := tc.theirs()
			if err := strictDecode(data, theirs); err != nil {
				t.Fatalf("Kubernetes' %T rejects our JSON: %v\n%s", theirs, err, data)
			}
			// Round trip without the raw volume sources, which Kubernetes
			// fills in.
			clearRaw(reflect.ValueOf(ours))
			if data, err = json.Marshal(ours); err != nil {
				t.Fatalf("marshal: %v", err)
			}
			theirs = tc.theirs()
			if err := strictDecode(data, theirs); err != nil {
				t.Fatalf("Kubernetes' %T rejects our JSON: %v\n%s", theirs, err, data)
			}
			back, err := json.Marshal(theirs)
			if err != nil {
				t.Fatalf("marshal k8s: %v", err)
			}
			again := reflect.New(reflect.TypeOf(ours).Elem()).Interface()
			if err := strictDecode(back, again); err != nil {
				t.Fatalf("our type rejects Kubernetes' JSON: %v\n%s", err, back)
			}
			data2, _ := json.Marshal(again)
			if !bytes.Equal(data, data2) {
				i := 0
				for i < len(data) && i < len(data2) && data[i] == data2[i] {
					i++
				}
				lo := max(0, i-80)
				t.Errorf("round trip through Kubernetes changed the object at byte %d:\nours:  ...%s\nafter: ...%s",
					i, data[lo:min(len(data), i+80)], data2[lo:min(len(data2), i+80)])
			}
		})
	}
}

// A manifest as written for real Kubernetes decodes, and the fields whose
// JSON forms are special come out right.
func TestManifestDecodes(t *testing.T) {
	t.Parallel()
	const manifest = `{
	  "apiVersion": "apps/v1", "kind": "Deployment",
	  "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
	  "spec": {
	    "replicas": 3,
	    "selector": {"matchLabels": {"app": "web"}},
	    "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}},
	    "template": {
	      "metadata": {"labels": {"app": "web"}},
	      "spec": {
	        "containers": [{
	          "name": "nginx", "image": "nginx:1.25",
	          "ports": [{"containerPort": 80, "name": "http"}],
	          "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"cpu": 0.5, "memory": "1.5Gi"}},
	          "readinessProbe": {"httpGet": {"path": "/", "port": "http"}, "periodSeconds": 5},
	          "env": [{"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}]
	        }],
	        "volumes": [{"name": "cache", "emptyDir": {"sizeLimit": "1Gi"}}, {"name": "data", "persistentVolumeClaim": {"claimName": "d"}}, {"name": "info", "downwardAPI": {"items": [{"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}}]}}]
	      }
	    }
	  }
	}`
	var d Deployment
	if err := json.Unmarshal([]byte(manifest), &d); err != nil {
		t.Fatal(err)
	}
	c := d.Spec.Template.Spec.Containers[0]
	if got := c.Resources.Limits[ResourceMemory]; got.String() != "1536Mi" {
		t.Errorf("memory limit = %s, want 1536Mi", got.String())
	}
	if got := c.Resources.Limits[ResourceCPU]; got.MilliValue() != 500 {
		t.Errorf("cpu limit = %dm, want 500m", got.MilliValue())
	}
	if p := c.ReadinessProbe.HTTPGet.Port; p.Type != String || p.StrVal != "http" {
		t.Errorf("probe port = %#v, want the name http", p)
	}
	ru := d.Spec.Strategy.RollingUpdate
	if ru.MaxSurge.String() != "25%" || ru.MaxUnavailable.Type != Int || ru.MaxUnavailable.IntVal != 0 {
		t.Errorf("rollingUpdate = %s/%s", ru.MaxSurge, ru.MaxUnavailable)
	}
	if vs := d.Spec.Template.Spec.Volumes; vs[1].PersistentVolumeClaim == nil || vs[2].DownwardAPI == nil || vs[2].DownwardAPI.Items[0].FieldRef.FieldPath != "metadata.labels" {
		t.Errorf("volume sources not kept: %+v", vs)
	}
	out, err := json.Marshal(&d)
	if err != nil {
		t.Fatal(err)
	}
	// Unset optional structs are omitted, not written as {}; an empty
	// status is written, as kube-apiserver writes it.
	for _, absent := range []string{`"securityContext"`, `"creationTimestamp"`} {
		if bytes.Contains(out, []byte(absent)) {
			t.Errorf("encoded deployment contains %s: %s", absent, out)
		}
	}
	if !bytes.HasSuffix(out, []byte(`,"status":{}}`)) {
		t.Errorf("encoded deployment does not end with an empty status: %s", out)
	}
}

func TestSecretDataIsBase64(t *testing.T) {
	t.Parallel()
	s := Secret{Data: map[string][]byte{"password": []byte("hunter2")}}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"password":"aHVudGVyMg=="`)) {
		t.Errorf("secret JSON = %s", b)
	}
}

// The events.k8s.io/v1 Event is the core Event converted: every field
// survives the way there and back.
func TestEventV1Conversion(t *testing.T) {
	t.Parallel()
	core := filled[Event]()
	core.TypeMeta = TypeMeta{Kind: "Event", APIVersion: "v1"}
	v1 := EventToV1(core)
	if v1.Regarding != core.InvolvedObject || v1.Note != core.Message || v1.DeprecatedCount != core.Count ||
		v1.DeprecatedSource != core.Source || v1.ReportingController != core.ReportingController || v1.APIVersion != "events.k8s.io/v1" {
		t.Errorf("EventToV1 = %+v", v1)
	}
	if back := EventFromV1(v1); !reflect.DeepEqual(back, core) {
		t.Errorf("round trip:\n got %+v\nwant %+v", back, core)
	}
}
