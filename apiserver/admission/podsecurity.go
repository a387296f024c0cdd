package admission

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	basemetrics "k8s.io/component-base/metrics"
	"k8s.io/klog/v2"
	psadmission "k8s.io/pod-security-admission/admission"
	psconfig "k8s.io/pod-security-admission/admission/api"
	psload "k8s.io/pod-security-admission/admission/api/load"
	psapi "k8s.io/pod-security-admission/api"
	psmetrics "k8s.io/pod-security-admission/metrics"
	"k8s.io/pod-security-admission/policy"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/audit"
	"github.com/minik8s/minik8s/apiserver/warning"
)

// PodSecuritySource is what PodSecurity reads besides the request: a
// pod's namespace (its pod-security.kubernetes.io labels) and, when a
// namespace's enforce level tightens, the pods already in it.
type PodSecuritySource interface {
	// Namespace returns the namespace name, found false when it does not
	// exist.
	Namespace(ctx context.Context, name string) (*api.Namespace, bool, error)
	// PodsInNamespace lists the pods of a namespace.
	PodsInNamespace(ctx context.Context, namespace string) ([]*api.Pod, error)
}

// PodSecurity is kube-apiserver's PodSecurity admission plugin: it
// enforces, audits and warns about the Pod Security Standards each
// namespace's pod-security.kubernetes.io/{enforce,audit,warn}[-version]
// labels choose. The decisions, messages and exemptions are those of
// k8s.io/pod-security-admission's admission package, the library the
// plugin in kube-apiserver delegates to; this type adapts minik8s' objects
// (JSON-compatible with k8s.io/api) and reports warnings, audit
// annotations and refusals the way kube-apiserver's plugin does.
type PodSecurity struct {
	delegate *psadmission.Admission
	recorder *psmetrics.PrometheusRecorder
	// logger is the library's klog logger, writing to the apiserver's
	// slog handler.
	logger logr.Logger
}

var _ Validator = (*PodSecurity)(nil)

// NewPodSecurity builds the plugin from its PodSecurityConfiguration (the
// PodSecurity entry of --admission-control-config-file), nil for the
// defaults: privileged everywhere, no exemptions. The library's few log
// lines (failed lookups) go to log.
func NewPodSecurity(config io.Reader, src PodSecuritySource, log *slog.Logger) (*PodSecurity, error) {
	cfg, err := psload.LoadFromReader(config)
	if err != nil {
		return nil, fmt.Errorf("PodSecurity configuration: %w", err)
	}
	p, err := newPodSecurity(cfg, src)
	if err != nil {
		return nil, err
	}
	if log != nil {
		p.logger = logr.FromSlogHandler(log.With("plugin", "PodSecurity").Handler())
	}
	return p, nil
}

func newPodSecurity(cfg *psconfig.PodSecurityConfiguration, src PodSecuritySource) (*PodSecurity, error) {
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		return nil, fmt.Errorf("PodSecurity checks: %w", err)
	}
	rec := psmetrics.NewPrometheusRecorder(psapi.GetAPIVersion())
	p := &PodSecurity{recorder: rec, logger: logr.Discard(), delegate: &psadmission.Admission{
		Configuration:    cfg,
		Evaluator:        evaluator,
		Metrics:          rec,
		PodSpecExtractor: psadmission.DefaultPodSpecExtractor{},
		NamespaceGetter:  namespaceGetter{src},
		PodLister:        podLister{src},
	}}
	if err := p.delegate.CompleteConfiguration(); err != nil {
		return nil, fmt.Errorf("PodSecurity configuration error: %w", err)
	}
	if err := p.delegate.ValidateConfiguration(); err != nil {
		return nil, fmt.Errorf("PodSecurity invalid: %w", err)
	}
	return p, nil
}

// Name is the plugin's name in --disable-admission-plugins.
func (*PodSecurity) Name() string { return "PodSecurity" }

// Handles: creates and updates, as kube's plugin.
func (*PodSecurity) Handles(op Operation) bool { return op == Create || op == Update }

// Register adds kube's pod_security_evaluations_total,
// pod_security_exemptions_total and pod_security_errors_total to reg.
func (p *PodSecurity) Register(reg prometheus.Registerer) (err error) {
	p.recorder.MustRegister(func(cs ...basemetrics.Registerable) {
		for _, c := range cs {
			if !c.Create(nil) {
				continue
			}
			if e := reg.Register(c); e != nil && err == nil {
				err = e
			}
		}
	})
	return err
}

// Validate admits a pod, a namespace or a pod controller as kube's plugin
// does: a pod violating its namespace's enforce level is refused with 403;
// warn-level violations become Warning headers and audit-level ones audit
// annotations (pod-security.kubernetes.io/audit-violations), for pods and
// for the pod templates of controllers, which are never refused.
func (p *PodSecurity) Validate(ctx context.Context, a *Attributes) error {
	gr := schema.GroupResource{Group: a.Resource.Group, Resource: a.Resource.Resource}
	if gr != podsGR && gr != namespacesGR && !p.delegate.PodSpecExtractor.HasPodSpec(gr) {
		return nil
	}
	res := p.delegate.Validate(klog.NewContext(ctx, p.logger), &psAttributes{a: a})
	for _, w := range res.Warnings {
		warning.Add(ctx, w)
	}
	for k, v := range res.AuditAnnotations {
		audit.AddAnnotation(ctx, psapi.AuditAnnotationPrefix+k, v)
	}
	if res.Allowed {
		return nil
	}
	refusal := NewForbidden(a, errors.New("Not allowed by PodSecurity")).(*apierrors.StatusError)
	if res.Result == nil {
		return refusal
	}
	var st api.Status
	data, err := json.Marshal(res.Result)
	if err == nil {
		err = json.Unmarshal(data, &st)
	}
	if err != nil {
		return refusal
	}
	if st.Message != "" {
		refusal.ErrStatus.Message = st.Message
	}
	if st.Reason != "" {
		refusal.ErrStatus.Reason = st.Reason
	}
	if st.Details != nil {
		refusal.ErrStatus.Details = st.Details
	}
	if st.Code != 0 {
		refusal.ErrStatus.Code = st.Code
	}
	return refusal
}

var (
	podsGR       = schema.GroupResource{Resource: "pods"}
	namespacesGR = schema.GroupResource{Resource: "namespaces"}
)

// psAttributes presents an admission request to the library, converting
// the objects to their k8s.io/api types on first use.
type psAttributes struct {
	a *Attributes

	objOnce, oldOnce sync.Once
	obj, old         runtime.Object
	objErr, oldErr   error
}

var _ psapi.Attributes = (*psAttributes)(nil)

func (p *psAttributes) GetName() string {
	if p.a.Name == "" && p.a.Object != nil {
		return p.a.Object.GetObjectMeta().Name
	}
	return p.a.Name
}

// GetNamespace is, for a namespace, its own name, as kube-apiserver's
// request attributes carry it (the library exempts a namespace by it).
func (p *psAttributes) GetNamespace() string {
	if p.a.Namespace == "" && p.a.Resource.Group == "" && p.a.Resource.Resource == "namespaces" {
		return p.GetName()
	}
	return p.a.Namespace
}
func (p *psAttributes) GetResource() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: p.a.Resource.Group, Version: p.a.Resource.Version, Resource: p.a.Resource.Resource}
}
func (p *psAttributes) GetKind() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: p.a.Resource.Group, Version: p.a.Resource.Version, Kind: p.a.Resource.Kind}
}
func (p *psAttributes) GetSubresource() string { return p.a.Subresource }
func (p *psAttributes) GetOperation() admissionv1.Operation {
	return admissionv1.Operation(p.a.Operation)
}
func (p *psAttributes) GetUserName() string {
	if p.a.User == nil {
		return ""
	}
	return p.a.User.Name
}

func (p *psAttributes) GetObject() (runtime.Object, error) {
	p.objOnce.Do(func() { p.obj, p.objErr = toExternal(p.a.Object, p.GetResource().GroupResource(), p.a.Subresource) })
	return p.obj, p.objErr
}

func (p *psAttributes) GetOldObject() (runtime.Object, error) {
	p.oldOnce.Do(func() { p.old, p.oldErr = toExternal(p.a.OldObject, p.GetResource().GroupResource(), p.a.Subresource) })
	return p.old, p.oldErr
}

// toExternal converts obj to the k8s.io/api type the library expects for
// gr through JSON, the encoding both share. A pod subresource's object
// (ephemeralcontainers, resize) is the Pod.
func toExternal(obj api.Object, gr schema.GroupResource, sub string) (runtime.Object, error) {
	if obj == nil {
		return nil, errors.New("no object")
	}
	var out runtime.Object
	switch gr {
	case namespacesGR:
		out = &corev1.Namespace{}
	case podsGR:
		out = &corev1.Pod{}
	case corev1.Resource("replicationcontrollers"):
		out = &corev1.ReplicationController{}
	case corev1.Resource("podtemplates"):
		out = &corev1.PodTemplate{}
	case appsv1.Resource("replicasets"):
		out = &appsv1.ReplicaSet{}
	case appsv1.Resource("deployments"):
		out = &appsv1.Deployment{}
	case appsv1.Resource("statefulsets"):
		out = &appsv1.StatefulSet{}
	case appsv1.Resource("daemonsets"):
		out = &appsv1.DaemonSet{}
	case batchv1.Resource("jobs"):
		out = &batchv1.Job{}
	case batchv1.Resource("cronjobs"):
		out = &batchv1.CronJob{}
	default:
		return nil, fmt.Errorf("unexpected resource %s", gr)
	}
	if sub != "" && gr != podsGR {
		// A controller's scale or status: the library skips subresources
		// before it reads the object.
		return nil, fmt.Errorf("unexpected subresource %s/%s", gr, sub)
	}
	if err := convertJSON(obj, out); err != nil {
		return nil, fmt.Errorf("convert %T: %w", obj, err)
	}
	return out, nil
}

func convertJSON(in, out any) error {
	data, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, out)
}

// namespaceGetter reads namespaces for the library; a namespace that does
// not exist is kube's NotFound.
type namespaceGetter struct{ src PodSecuritySource }

func (g namespaceGetter) GetNamespace(ctx context.Context, name string) (*corev1.Namespace, error) {
	ns, found, err := g.src.Namespace(ctx, name)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, apierrors.NewNotFound(apierrors.GroupResource{Resource: "namespaces"}, name)
	}
	out := &corev1.Namespace{}
	if err := convertJSON(ns, out); err != nil {
		return nil, err
	}
	return out, nil
}

// podLister lists a namespace's pods for the library, converted.
type podLister struct{ src PodSecuritySource }

func (l podLister) ListPods(ctx context.Context, namespace string) ([]*corev1.Pod, error) {
	pods, err := l.src.PodsInNamespace(ctx, namespace)
	if err != nil {
		return nil, err
	}
	out := make([]*corev1.Pod, 0, len(pods))
	for _, p := range pods {
		if err := ctx.Err(); err != nil {
			// The library bounds its check of existing pods in time.
			break
		}
		cp := &corev1.Pod{}
		if err := convertJSON(p, cp); err != nil {
			return nil, err
		}
		out = append(out, cp)
	}
	return out, nil
}
