package registry

import (
	"context"
	"slices"
	"strconv"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/defaults"
	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/api/validation"
	"github.com/minik8s/minik8s/apiserver/admission/policy"
	"github.com/minik8s/minik8s/apiserver/request"
	"github.com/minik8s/minik8s/apiserver/servicealloc"
)

// kind is what the registry does for one served resource besides the
// defaults (BaseStrategy, stored as served).
type kind struct {
	strategy Strategy
	// allocating, when set, is the strategy when the server has an
	// allocator of Service ClusterIPs and NodePorts.
	allocating func(*servicealloc.Allocator) Strategy
	// storage, when set, is the kind the resource is kept as in etcd.
	storage *storageVersion
}

// kinds is the registry's table of kinds, keyed by group/version/resource
// as kindKey spells it ("v1/pods", "apps/v1/replicasets"). A resource of
// api.Resources that is not here has BaseStrategy and is stored as served:
// a new kind needs an entry only when it has rules of its own. The
// CustomResourceDefinition strategy is package crd's (apiserver/app picks
// it), since crd builds on this package.
var kinds = map[string]kind{
	"v1/pods":                   {strategy: podStrategy{}},
	"v1/nodes":                  {strategy: nodeStrategy{}},
	"v1/namespaces":             {strategy: namespaceStrategy{}},
	"v1/events":                 {strategy: eventStrategy{BaseStrategy{CreateOnUpdate: true}}},
	"v1/endpoints":              {strategy: BaseStrategy{CreateOnUpdate: true}},
	"v1/secrets":                {strategy: secretStrategy{}},
	"v1/persistentvolumes":      {strategy: persistentVolumeStrategy{}},
	"v1/persistentvolumeclaims": {strategy: persistentVolumeClaimStrategy{}},
	"v1/services": {strategy: serviceStrategy{},
		allocating: func(alloc *servicealloc.Allocator) Strategy {
			return allocatingServiceStrategy{serviceStrategy: serviceStrategy{primaryFamily: familyOf(alloc.CIDR())}, alloc: alloc}
		}},
	"apps/v1/replicasets":                               {strategy: replicaSetStrategy{}},
	"apps/v1/daemonsets":                                {strategy: daemonSetStrategy{}},
	"coordination.k8s.io/v1/leases":                     {strategy: BaseStrategy{CreateOnUpdate: true}},
	"batch/v1/jobs":                                     {strategy: jobStrategy{}},
	"certificates.k8s.io/v1/certificatesigningrequests": {strategy: csrStrategy{}},
	"certificates.k8s.io/v1/podcertificaterequests":     {strategy: podCertificateRequestStrategy{}},
	// autoscaling/v2 is the storage version; what v1 writes is defaulted
	// as v2, as kube-apiserver defaults it when it reads it back.
	"autoscaling/v2/horizontalpodautoscalers": {strategy: hpaStrategy{}},
	"autoscaling/v1/horizontalpodautoscalers": {strategy: hpaV1Strategy{}, storage: &storageVersion{
		info:        servedResource("autoscaling", "horizontalpodautoscalers"),
		toStorage:   func(obj api.Object) api.Object { return hpaFromV1(obj) },
		fromStorage: func(obj api.Object) api.Object { return api.HPAToV1(obj.(*api.HorizontalPodAutoscaler)) },
		partial:     true,
	}},
	// events.k8s.io/v1 Events are core v1 Events in etcd, under the same
	// keys, as in Kubernetes, so each API sees the other's writes.
	"events.k8s.io/v1/events": {strategy: eventV1Strategy{BaseStrategy{CreateOnUpdate: true}}, storage: &storageVersion{
		info:        servedResource("", "events"),
		toStorage:   func(obj api.Object) api.Object { return api.EventFromV1(obj.(*api.EventV1)) },
		fromStorage: func(obj api.Object) api.Object { return api.EventToV1(obj.(*api.Event)) },
	}},
	"admissionregistration.k8s.io/v1/validatingadmissionpolicies":     {strategy: celStrategy{check: policyExpressions}},
	"admissionregistration.k8s.io/v1/mutatingadmissionpolicies":       {strategy: celStrategy{check: mutatingPolicyExpressions}},
	"admissionregistration.k8s.io/v1/mutatingwebhookconfigurations":   {strategy: celStrategy{check: policy.ValidateWebhookMatchConditions}},
	"admissionregistration.k8s.io/v1/validatingwebhookconfigurations": {strategy: celStrategy{check: policy.ValidateWebhookMatchConditions}},
	"certificates.k8s.io/v1/clustertrustbundles":                      {strategy: clusterTrustBundleStrategy{}},
}

// kindKey is ri's key in kinds.
func kindKey(ri api.ResourceInfo) string { return ri.GroupVersion() + "/" + ri.Resource }

// servedResource is the preferred version of a resource of api.Resources;
// a storage version the table names must be served.
func servedResource(group, resource string) api.ResourceInfo {
	ri, ok := api.LookupResource(group, resource)
	if !ok {
		panic("registry: storage version " + group + "/" + resource + " is not in api.Resources")
	}
	return ri
}

// StrategyFor returns the strategy of a served resource; Services allocate
// their ClusterIPs and NodePorts from alloc (none if nil).
func StrategyFor(ri api.ResourceInfo, alloc *servicealloc.Allocator) Strategy {
	k, ok := kinds[kindKey(ri)]
	switch {
	case !ok:
		return BaseStrategy{}
	case k.allocating != nil && alloc != nil:
		return k.allocating(alloc)
	}
	return k.strategy
}

// storageVersion is the kind a resource is kept as in etcd when it is not
// the served one, and the conversions both ways.
type storageVersion struct {
	info        api.ResourceInfo
	toStorage   func(api.Object) api.Object
	fromStorage func(api.Object) api.Object
	// partial says the served version cannot hold all of the stored
	// object (a v1 HPA holds v2's metrics, current metrics and conditions
	// in annotations, which a client may rewrite): the rules of a write
	// then apply to the storage form, as Kubernetes applies them to its
	// internal object, and what the write may not change is taken from
	// the stored object itself, not from its served form.
	partial bool
}

// storageVersionFor is the storage of a resource served over another's
// (kinds' storage), nil for the others, stored as they are served.
func storageVersionFor(ri api.ResourceInfo) *storageVersion { return kinds[kindKey(ri)].storage }

func hpaFromV1(obj api.Object) *api.HorizontalPodAutoscaler {
	h := api.HPAFromV1(obj.(*api.HorizontalPodAutoscalerV1))
	defaults.HorizontalPodAutoscaler(h)
	return h
}

// hpaV1Strategy serves autoscaling/v1 HPAs: Kubernetes validates the
// (internal) HPA they convert to, so errors name v2's field paths. What a
// write may not change (the status on create and update, the spec through
// /status) is kept on the v2 form, whatever annotations the v1 object
// carries (storageVersion.partial).
type hpaV1Strategy struct{ BaseStrategy }

func (hpaV1Strategy) Validate(ctx context.Context, obj api.Object) field.ErrorList {
	return validation.Validate(hpaFromV1(obj))
}

func (hpaV1Strategy) ValidateUpdate(ctx context.Context, obj, old api.Object) field.ErrorList {
	return validation.ValidateUpdate(hpaFromV1(obj), hpaFromV1(old))
}

func (hpaV1Strategy) ValidateStatusUpdate(ctx context.Context, obj, old api.Object) field.ErrorList {
	return validation.ValidateStatusUpdate(hpaFromV1(obj), hpaFromV1(old))
}

// hpaStrategy serves autoscaling/v2 HPAs: like Kubernetes' conversion of
// v2, a write keeps none of the annotations autoscaling/v1 carries v2's
// fields in (v1 writes lose them in their conversion to v2).
type hpaStrategy struct{ BaseStrategy }

func (s hpaStrategy) PrepareForCreate(ctx context.Context, obj api.Object) {
	s.BaseStrategy.PrepareForCreate(ctx, obj)
	dropHPARoundTrip(obj)
}

func (hpaStrategy) PrepareForUpdate(ctx context.Context, obj, old api.Object) { dropHPARoundTrip(obj) }

func (hpaStrategy) PrepareForStatusUpdate(ctx context.Context, obj, old api.Object) {
	dropHPARoundTrip(obj)
}

func dropHPARoundTrip(obj api.Object) {
	m := obj.GetObjectMeta()
	m.Annotations = api.DropHPARoundTripAnnotations(m.Annotations)
}

// eventV1Strategy serves events.k8s.io/v1 Events: Kubernetes validates the
// core Event they convert to, with the stricter rules of the events.k8s.io
// API on create (field paths are the core Event's, as Kubernetes reports
// them), and selects on the events.k8s.io field names.
type eventV1Strategy struct{ BaseStrategy }

func (eventV1Strategy) Validate(ctx context.Context, obj api.Object) field.ErrorList {
	return validation.ValidateEventV1Create(api.EventFromV1(obj.(*api.EventV1)))
}

func (eventV1Strategy) ValidateUpdate(ctx context.Context, obj, old api.Object) field.ErrorList {
	return validation.ValidateEventUpdate(api.EventFromV1(obj.(*api.EventV1)), api.EventFromV1(old.(*api.EventV1)))
}

func (eventV1Strategy) Fields(obj api.Object) map[string]string {
	e := obj.(*api.EventV1)
	return map[string]string{
		"regarding.kind":            e.Regarding.Kind,
		"regarding.namespace":       e.Regarding.Namespace,
		"regarding.name":            e.Regarding.Name,
		"regarding.uid":             string(e.Regarding.UID),
		"regarding.apiVersion":      e.Regarding.APIVersion,
		"regarding.resourceVersion": e.Regarding.ResourceVersion,
		"regarding.fieldPath":       e.Regarding.FieldPath,
		"reason":                    e.Reason,
		"reportingController":       e.ReportingController,
		"type":                      e.Type,
	}
}

// podStrategy: graceful deletion, the server-set initial status, and the
// fields kubelets and schedulers select on.
type podStrategy struct{ BaseStrategy }

var (
	_ GracefulStrategy      = podStrategy{}
	_ DeletedObjectReturner = podStrategy{}
)

func (podStrategy) PrepareForCreate(ctx context.Context, obj api.Object) {
	pod := obj.(*api.Pod)
	// kube's pod strategy sets the QoS class at creation.
	pod.Status = api.PodStatus{Phase: api.PodPending, QOSClass: api.ComputePodQOS(pod)}
	syncAppArmorAnnotations(ctx, pod)
}

// PrepareForStatusUpdate is kube's pod status strategy's PrepareForUpdate:
// it keeps what a status writer left out and the server or other writers
// own (the QoS class, set at creation and immutable; the DRA claim
// statuses, which only a non-nil empty list clears; the observedGeneration
// of the status and of each condition), and drops the status fields of
// disabled features the pod did not use (DropDisabledPodStatusFields).
func (podStrategy) PrepareForStatusUpdate(ctx context.Context, obj, old api.Object) {
	pod, o := obj.(*api.Pod), old.(*api.Pod)
	st, os := &pod.Status, &o.Status
	if st.QOSClass == "" {
		st.QOSClass = os.QOSClass
	}
	if st.ResourceClaimStatuses == nil && os.ResourceClaimStatuses != nil {
		st.ResourceClaimStatuses = os.ResourceClaimStatuses
	}
	if st.ExtendedResourceClaimStatus == nil && os.ExtendedResourceClaimStatus != nil {
		st.ExtendedResourceClaimStatus = os.ExtendedResourceClaimStatus
	}
	if st.NodeAllocatableResourceClaimStatuses == nil && os.NodeAllocatableResourceClaimStatuses != nil {
		st.NodeAllocatableResourceClaimStatuses = os.NodeAllocatableResourceClaimStatuses
	}
	if st.ObservedGeneration == 0 {
		st.ObservedGeneration = os.ObservedGeneration
	}
	// Conditions of one type take the old ones' generations in order
	// (validation allows several of a type).
	oldGenerations := map[api.PodConditionType][]int64{}
	for _, c := range os.Conditions {
		oldGenerations[c.Type] = append(oldGenerations[c.Type], c.ObservedGeneration)
	}
	for i := range st.Conditions {
		c := &st.Conditions[i]
		var g int64
		if gens := oldGenerations[c.Type]; len(gens) > 0 {
			g, oldGenerations[c.Type] = gens[0], gens[1:]
		}
		if c.ObservedGeneration == 0 {
			c.ObservedGeneration = g
		}
	}
	defaults.DropDisabledPodStatusFields(st, os)
}

func (podStrategy) Fields(obj api.Object) map[string]string {
	pod := obj.(*api.Pod)
	return map[string]string{
		"spec.nodeName":            pod.Spec.NodeName,
		"spec.restartPolicy":       string(pod.Spec.RestartPolicy),
		"spec.schedulerName":       pod.Spec.SchedulerName,
		"spec.serviceAccountName":  pod.Spec.ServiceAccountName,
		"spec.hostNetwork":         strconv.FormatBool(pod.Spec.HostNetwork),
		"status.phase":             string(pod.Status.Phase),
		"status.podIP":             pod.Status.PodIP,
		"status.nominatedNodeName": pod.Status.NominatedNodeName,
	}
}

// GracePeriod implements GracefulStrategy the way Kubernetes' pod registry
// does: pods not bound to a node, or already terminal, go at once; others
// wait for their kubelet, for the requested period or the pod's own.
func (podStrategy) GracePeriod(obj api.Object, opts *api.DeleteOptions) (int64, bool) {
	pod := obj.(*api.Pod)
	if opts.GracePeriodSeconds != nil {
		if *opts.GracePeriodSeconds == 0 {
			return 0, false
		}
	}
	if pod.Spec.NodeName == "" || pod.Status.Phase == api.PodSucceeded || pod.Status.Phase == api.PodFailed {
		zero := int64(0)
		opts.GracePeriodSeconds = &zero
		return 0, false
	}
	if opts.GracePeriodSeconds != nil {
		return *opts.GracePeriodSeconds, true
	}
	grace := int64(30)
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		grace = *pod.Spec.TerminationGracePeriodSeconds
	}
	if grace <= 0 {
		// A pod asking for no grace still gets the minimum of one second so
		// its kubelet can stop it, as Kubernetes does.
		grace = 1
	}
	return grace, true
}

func (podStrategy) ReturnDeletedObject() bool { return true }

type nodeStrategy struct{ BaseStrategy }

// PrepareForCreate keeps the status: a kubelet registers its Node with it.
func (nodeStrategy) PrepareForCreate(ctx context.Context, obj api.Object) {}

func (nodeStrategy) Fields(obj api.Object) map[string]string {
	n := obj.(*api.Node)
	return map[string]string{"spec.unschedulable": strconv.FormatBool(n.Spec.Unschedulable)}
}

type namespaceStrategy struct{ BaseStrategy }

// PrepareForCreate: a new namespace is Active and has the "kubernetes"
// finalizer, as kube's strategy makes it (after the status reset every kind
// gets, and after the field manager: the creator does not own the
// finalizer). Only on create: the namespace controller removes the
// finalizer during deletion and must not see it come back.
func (s namespaceStrategy) PrepareForCreate(ctx context.Context, obj api.Object) {
	s.BaseStrategy.PrepareForCreate(ctx, obj)
	ns := obj.(*api.Namespace)
	ns.Status = api.NamespaceStatus{Phase: api.NamespaceActive}
	if !slices.Contains(ns.Spec.Finalizers, api.FinalizerKubernetes) {
		ns.Spec.Finalizers = append(ns.Spec.Finalizers, api.FinalizerKubernetes)
	}
}

// PrepareForUpdate keeps spec.finalizers: only /finalize changes them.
func (namespaceStrategy) PrepareForUpdate(ctx context.Context, obj, old api.Object) {
	obj.(*api.Namespace).Spec.Finalizers = old.(*api.Namespace).Spec.Finalizers
}

func (namespaceStrategy) Fields(obj api.Object) map[string]string {
	return map[string]string{"status.phase": string(obj.(*api.Namespace).Status.Phase)}
}

// pendingDeletion implements deletionBlocker: a namespace with spec
// finalizers waits for the namespace controller to empty it.
func (namespaceStrategy) pendingDeletion(obj api.Object) bool {
	return len(obj.(*api.Namespace).Spec.Finalizers) > 0
}

func (namespaceStrategy) markDeleting(obj api.Object) {
	obj.(*api.Namespace).Status.Phase = api.NamespaceTerminating
}

// deletionBlocker is implemented by kinds whose deletion waits for something
// besides metadata.finalizers (namespaces' spec.finalizers).
type deletionBlocker interface {
	pendingDeletion(obj api.Object) bool
	markDeleting(obj api.Object)
}

// eventStrategy serves core Events.
type eventStrategy struct{ BaseStrategy }

// Fields are kube's: "source" is the reporting controller of an event
// without a source (one written through events.k8s.io/v1).
func (eventStrategy) Fields(obj api.Object) map[string]string {
	e := obj.(*api.Event)
	source := e.Source.Component
	if source == "" {
		source = e.ReportingController
	}
	return map[string]string{
		"involvedObject.kind":            e.InvolvedObject.Kind,
		"involvedObject.namespace":       e.InvolvedObject.Namespace,
		"involvedObject.name":            e.InvolvedObject.Name,
		"involvedObject.uid":             string(e.InvolvedObject.UID),
		"involvedObject.apiVersion":      e.InvolvedObject.APIVersion,
		"involvedObject.resourceVersion": e.InvolvedObject.ResourceVersion,
		"involvedObject.fieldPath":       e.InvolvedObject.FieldPath,
		"reason":                         e.Reason,
		"reportingComponent":             e.ReportingController,
		"source":                         source,
		"type":                           e.Type,
	}
}

type secretStrategy struct{ BaseStrategy }

func (secretStrategy) Fields(obj api.Object) map[string]string {
	return map[string]string{"type": string(obj.(*api.Secret).Type)}
}

// serviceStrategy is the Service strategy; primaryFamily is the IP family
// of the cluster's service range ("": IPv4).
type serviceStrategy struct {
	BaseStrategy
	primaryFamily api.IPFamily
}

func (serviceStrategy) Fields(obj api.Object) map[string]string {
	s := obj.(*api.Service)
	return map[string]string{"spec.clusterIP": s.Spec.ClusterIP, "spec.type": string(s.Spec.Type)}
}

type replicaSetStrategy struct{ BaseStrategy }

func (replicaSetStrategy) Fields(obj api.Object) map[string]string {
	return map[string]string{"status.replicas": strconv.Itoa(int(obj.(*api.ReplicaSet).Status.Replicas))}
}

type jobStrategy struct{ BaseStrategy }

// PrepareForCreate resets the status and, unless manualSelector is true,
// generates the selector and template labels from the Job's uid, as kube's
// job strategy (after the field manager: the creator owns neither).
func (s jobStrategy) PrepareForCreate(ctx context.Context, obj api.Object) {
	s.BaseStrategy.PrepareForCreate(ctx, obj)
	j := obj.(*api.Job)
	if j.Spec.ManualSelector == nil || !*j.Spec.ManualSelector {
		defaults.GenerateJobSelector(j)
	}
}

func (jobStrategy) Fields(obj api.Object) map[string]string {
	return map[string]string{"status.successful": strconv.Itoa(int(obj.(*api.Job).Status.Succeeded))}
}

// csrStrategy records who asked: a CSR's requester identity comes from the
// authenticated user, never from the body, as in Kubernetes.
type csrStrategy struct{ BaseStrategy }

func (csrStrategy) PrepareForCreate(ctx context.Context, obj api.Object) {
	csr := obj.(*api.CertificateSigningRequest)
	csr.Status = api.CertificateSigningRequestStatus{}
	csr.Spec.Username, csr.Spec.UID, csr.Spec.Groups, csr.Spec.Extra = "", "", nil, nil
	if u, ok := request.UserFrom(ctx); ok {
		csr.Spec.Username, csr.Spec.UID, csr.Spec.Groups = u.Name, u.UID, append([]string(nil), u.Groups...)
		for k, v := range u.Extra {
			if csr.Spec.Extra == nil {
				csr.Spec.Extra = map[string]api.ExtraValue{}
			}
			csr.Spec.Extra[k] = append(api.ExtraValue(nil), v...)
		}
	}
}

// PrepareForUpdate keeps the request and the requester: a CSR's spec is immutable.
// Fields: a CSR list or watch may select on its signer, as kube's.
func (csrStrategy) Fields(obj api.Object) map[string]string {
	return map[string]string{"spec.signerName": obj.(*api.CertificateSigningRequest).Spec.SignerName}
}

func (csrStrategy) PrepareForUpdate(ctx context.Context, obj, old api.Object) {
	obj.(*api.CertificateSigningRequest).Spec = old.(*api.CertificateSigningRequest).Spec
}

var _ StatusSubresources = csrStrategy{}

// StatusSubresource implements StatusSubresources: /approval.
func (csrStrategy) StatusSubresource(sub string) (StatusStrategy, bool) {
	if sub == "approval" {
		return csrApprovalStrategy{}, true
	}
	return nil, false
}

// csrApprovalStrategy is the rules of a CSR's /approval: it adds the
// Approved or Denied condition; the certificate is the signer's.
type csrApprovalStrategy struct{}

func (csrApprovalStrategy) PrepareForStatusUpdate(ctx context.Context, obj, old api.Object) {
	obj.(*api.CertificateSigningRequest).Status.Certificate = old.(*api.CertificateSigningRequest).Status.Certificate
}

func (csrApprovalStrategy) ValidateStatusUpdate(ctx context.Context, obj, old api.Object) field.ErrorList {
	return validation.ValidateCertificateSigningRequestApprovalUpdate(obj.(*api.CertificateSigningRequest), old.(*api.CertificateSigningRequest))
}

// persistentVolumeStrategy: a new volume is Pending, since now, as in
// Kubernetes (the binder makes it Available).
type persistentVolumeStrategy struct{ BaseStrategy }

func (persistentVolumeStrategy) PrepareForCreate(ctx context.Context, obj api.Object) {
	now := api.Now()
	obj.(*api.PersistentVolume).Status = api.PersistentVolumeStatus{Phase: api.VolumePending, LastPhaseTransitionTime: &now}
}

// persistentVolumeClaimStrategy: see claims.go.
type persistentVolumeClaimStrategy struct{ BaseStrategy }
