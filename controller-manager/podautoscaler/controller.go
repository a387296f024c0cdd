package podautoscaler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/labels"
	"github.com/minik8s/minik8s/controller-manager/controller"
	"github.com/minik8s/minik8s/internal/cache"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/internal/informer"
)

// Config tunes a Controller (kube-controller-manager's HPA flags).
type Config struct {
	SyncPeriod              time.Duration
	DownscaleStabilization  time.Duration
	Tolerance               float64
	CPUInitializationPeriod time.Duration
	InitialReadinessDelay   time.Duration
}

// Controller is the HorizontalPodAutoscaler controller.
type Controller struct {
	client   *client.Client
	hpas     *informer.Informer[api.HorizontalPodAutoscaler]
	pods     *informer.Informer[api.Pod]
	metrics  MetricsSource
	recorder events.Recorder
	*controller.Loop[string]
	log     *slog.Logger
	cfg     Config
	calc    calculator
	history *history
	now     func() time.Time
}

var _ controller.Interface = (*Controller)(nil)

// New is the "horizontal-pod-autoscaling" constructor.
func New(ctx *controller.Context) (controller.Interface, error) {
	m, err := controller.NewSyncMetrics(ctx.Metrics, "horizontal_pod_autoscaling")
	if err != nil {
		return nil, err
	}
	o := ctx.Options
	c := NewController(ctx.Client,
		informer.Shared[api.HorizontalPodAutoscaler](ctx.Factory, "", client.ListOptions{}),
		informer.Shared[api.Pod](ctx.Factory, "", client.ListOptions{}),
		APIMetrics{Client: ctx.Client}, ctx.Events.RecorderFor("horizontal-pod-autoscaler"), ctx.Logger,
		Config{SyncPeriod: o.HPASyncPeriod, DownscaleStabilization: o.HPADownscaleStabilization, Tolerance: o.HPATolerance,
			CPUInitializationPeriod: o.HPACPUInitializationPeriod, InitialReadinessDelay: o.HPAInitialReadinessDelay})
	c.SetMetrics(m)
	return c, nil
}

// NewController wires the controller.
func NewController(c *client.Client, hpas *informer.Informer[api.HorizontalPodAutoscaler], pods *informer.Informer[api.Pod],
	metrics MetricsSource, rec events.Recorder, log *slog.Logger, cfg Config) *Controller {
	if cfg.SyncPeriod <= 0 {
		cfg.SyncPeriod = 15 * time.Second
	}
	if cfg.Tolerance <= 0 {
		cfg.Tolerance = Tolerance
	}
	ctl := &Controller{client: c, hpas: hpas, pods: pods, metrics: metrics, recorder: rec, log: log, cfg: cfg,
		calc:    calculator{tolerance: cfg.Tolerance, cpuInitializationPeriod: cfg.CPUInitializationPeriod, initialReadinessDelay: cfg.InitialReadinessDelay, now: time.Now},
		history: newHistory(), now: time.Now}
	ctl.Loop = controller.NewLoop(controller.LoopConfig[string]{Queue: "horizontalpodautoscaler", Sync: ctl.sync, Log: log})
	controller.Watch(ctl.Loop, hpas, informer.Handler[api.HorizontalPodAutoscaler]{
		OnAdd: func(h *api.HorizontalPodAutoscaler, _ bool) { ctl.Add(controller.Key(h)) },
		OnUpdate: func(old, h *api.HorizontalPodAutoscaler) {
			// Status writes are the controller's own: only spec changes
			// call for an early sync, as kube's updateHPA.
			if !reflect.DeepEqual(old.Spec, h.Spec) {
				ctl.Add(controller.Key(h))
			}
		},
		OnDelete: func(h *api.HorizontalPodAutoscaler, _ bool) { ctl.history.forget(controller.Key(h)) },
	})
	// Pods (the scaled target's) are read by the sync, their events ignored.
	ctl.WaitFor(pods)
	return ctl
}

// sync reconciles one HPA and schedules its next sync a period later.
func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	cached, err := c.hpas.Lister().Namespace(ns).Get(name)
	if apierrors.IsNotFound(err) {
		c.history.forget(key)
		return nil
	}
	if err != nil {
		return err
	}
	c.Queue.AddAfter(key, c.cfg.SyncPeriod)
	if err := c.reconcile(ctx, key, cached); err != nil {
		c.log.Info("horizontal pod autoscaler", "hpa", key, "err", err)
	}
	return nil
}

// toV2 is the HPA as the autoscaling/v2 types of k8s.io/api (its metric
// sources and behavior are kept as raw JSON in package api).
func toV2(h *api.HorizontalPodAutoscaler) (*autoscalingv2.HorizontalPodAutoscaler, error) {
	b, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	var out autoscalingv2.HorizontalPodAutoscaler
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// setCondition sets a condition as kube's setConditionInList: the
// transition time moves only when the status changes.
func (c *Controller) setCondition(h *autoscalingv2.HorizontalPodAutoscaler, t autoscalingv2.HorizontalPodAutoscalerConditionType, status corev1.ConditionStatus, reason, format string, args ...any) {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	for i := range h.Status.Conditions {
		cond := &h.Status.Conditions[i]
		if cond.Type == t {
			if cond.Status != status {
				cond.LastTransitionTime = metav1.NewTime(c.now())
			}
			cond.Status, cond.Reason, cond.Message = status, reason, msg
			return
		}
	}
	h.Status.Conditions = append(h.Status.Conditions, autoscalingv2.HorizontalPodAutoscalerCondition{Type: t, Status: status,
		Reason: reason, Message: msg, LastTransitionTime: metav1.NewTime(c.now())})
}

// target is the scaled resource's path.
type target struct {
	path     string // /apis/apps/v1/namespaces/NS/deployments/NAME/scale
	resource string // "deployments.apps"
}

// resolveTarget finds the resource of scaleTargetRef: a built-in kind
// with a scale subresource, else what discovery says of apiVersion (custom
// resources).
func (c *Controller) resolveTarget(ctx context.Context, ns string, ref autoscalingv2.CrossVersionObjectReference) (target, error) {
	gv := ref.APIVersion
	group, version, found := strings.Cut(gv, "/")
	if !found {
		group, version = "", gv
	}
	if strings.Count(gv, "/") > 1 || version == "" {
		return target{}, fmt.Errorf("unexpected GroupVersion string: %s", gv)
	}
	prefix := "/apis/" + gv
	if group == "" {
		prefix = "/api/" + version
	}
	resourceName := ""
	for _, ri := range api.Resources {
		if ri.Group == group && ri.Kind == ref.Kind && ri.HasSubresource("scale") {
			resourceName = ri.Resource
			break
		}
	}
	if resourceName == "" {
		b, err := c.client.Do(ctx, client.Request{Path: prefix})
		if err == nil {
			var list metav1.APIResourceList
			if json.Unmarshal(b, &list) == nil {
				for _, r := range list.APIResources {
					if r.Kind == ref.Kind && !strings.Contains(r.Name, "/") {
						resourceName = r.Name
					}
				}
			}
		}
	}
	if resourceName == "" {
		return target{}, fmt.Errorf("no matches for kind %q in group %q", ref.Kind, group)
	}
	gr := resourceName
	if group != "" {
		gr += "." + group
	}
	return target{path: prefix + "/namespaces/" + ns + "/" + resourceName + "/" + ref.Name + "/scale", resource: gr}, nil
}

func (c *Controller) getScale(ctx context.Context, t target) (*api.Scale, error) {
	b, err := c.client.Do(ctx, client.Request{Path: t.path})
	if err != nil {
		return nil, err
	}
	var s api.Scale
	return &s, json.Unmarshal(b, &s)
}

// updateScale writes the replicas, re-reading the scale on a conflict
// (kube retries with client-go's DefaultRetry).
func (c *Controller) updateScale(ctx context.Context, t target, s *api.Scale, replicas int32) error {
	var err error
	for range 5 {
		s.Spec.Replicas = replicas
		s.APIVersion, s.Kind = api.ScaleAPIVersion, "Scale"
		body, _ := json.Marshal(s)
		if _, err = c.client.Do(ctx, client.Request{Method: "PUT", Path: t.path, Body: body}); err == nil || !apierrors.IsConflict(err) {
			return err
		}
		latest, gerr := c.getScale(ctx, t)
		if gerr != nil {
			return err
		}
		s = latest
	}
	return err
}

// reconcile is kube's reconcileAutoscaler.
func (c *Controller) reconcile(ctx context.Context, key string, cached *api.HorizontalPodAutoscaler) error {
	hpa, err := toV2(cached)
	if err != nil {
		return err
	}
	original := hpa.Status.DeepCopy()
	ref := hpa.Spec.ScaleTargetRef
	reference := fmt.Sprintf("%s/%s/%s", ref.Kind, hpa.Namespace, ref.Name)
	now := c.now()

	failGetScale := func(err error) error {
		c.recorder.Event(cached, api.EventTypeWarning, "FailedGetScale", err.Error())
		c.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionFalse, "FailedGetScale", "the HPA controller was unable to get the target's current scale: %v", err)
		if uerr := c.updateStatusIfNeeded(ctx, cached, original, hpa); uerr != nil {
			return uerr
		}
		return fmt.Errorf("failed to query scale subresource for %s: %w", reference, err)
	}
	t, err := c.resolveTarget(ctx, hpa.Namespace, ref)
	if err != nil {
		return failGetScale(err)
	}
	scale, err := c.getScale(ctx, t)
	if err != nil {
		return failGetScale(err)
	}
	c.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededGetScale", "the HPA controller was able to get the target's current scale")
	current := scale.Spec.Replicas
	c.history.recordInitial(key, current, now)

	minReplicas := int32(1)
	if hpa.Spec.MinReplicas != nil {
		minReplicas = *hpa.Spec.MinReplicas
	}
	var (
		desired  int32
		reason   string
		statuses []autoscalingv2.MetricStatus
		rescale  = true
		compute  = true
	)
	switch {
	case current == 0 && minReplicas != 0:
		desired, rescale, compute = 0, false, false
		c.setCondition(hpa, autoscalingv2.ScalingActive, corev1.ConditionFalse, "ScalingDisabled", "scaling is disabled since the replica count of the target is zero")
	case current > hpa.Spec.MaxReplicas:
		reason, desired, compute = "Current number of replicas above Spec.MaxReplicas", hpa.Spec.MaxReplicas, false
	case current < minReplicas:
		reason, desired, compute = "Current number of replicas below Spec.MinReplicas", minReplicas, false
	}
	if compute {
		proposal, metricName, sts, err := c.computeReplicas(ctx, hpa, cached, scale)
		statuses = sts
		if err != nil && proposal == -1 {
			c.setStatus(hpa, current, hpa.Status.DesiredReplicas, statuses, false)
			if uerr := c.updateStatusIfNeeded(ctx, cached, original, hpa); uerr != nil {
				return uerr
			}
			c.recorder.Event(cached, api.EventTypeWarning, "FailedComputeMetricsReplicas", err.Error())
			return fmt.Errorf("failed to compute desired number of replicas based on listed metrics for %s: %w", reference, err)
		}
		rescaleMetric := ""
		if proposal > desired {
			desired, rescaleMetric = proposal, metricName
		}
		if desired > current {
			reason = fmt.Sprintf("%s above target", rescaleMetric)
		}
		if desired < current {
			reason = "All metrics below target"
		}
		var l limit
		if hpa.Spec.Behavior == nil {
			l = c.history.normalizeLegacy(key, current, desired, minReplicas, hpa.Spec.MaxReplicas, c.cfg.DownscaleStabilization, now)
		} else {
			b := defaultBehavior(hpa.Spec.Behavior, c.cfg.DownscaleStabilization)
			hpa.Spec.Behavior = b
			l = c.history.normalizeBehavior(key, b, current, desired, minReplicas, hpa.Spec.MaxReplicas, now)
		}
		if l.stabilized {
			c.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, l.stabilizeReason, "%s", l.stabilizeMsg)
		} else {
			c.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, "ReadyForNewScale", "recommended size matches current size")
		}
		limited := corev1.ConditionFalse
		if l.replicas != l.stabilizedTo {
			limited = corev1.ConditionTrue
		}
		c.setCondition(hpa, autoscalingv2.ScalingLimited, limited, l.limitReason, "%s", l.limitMsg)
		desired = l.replicas
		rescale = desired != current
	}
	if rescale {
		if err := c.updateScale(ctx, t, scale, desired); err != nil {
			c.recorder.Eventf(cached, api.EventTypeWarning, "FailedRescale", "New size: %d; reason: %s; error: %v", desired, reason, err.Error())
			c.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionFalse, "FailedUpdateScale", "the HPA controller was unable to update the target scale: %v", err)
			c.setStatus(hpa, current, hpa.Status.DesiredReplicas, statuses, false)
			if uerr := c.updateStatusIfNeeded(ctx, cached, original, hpa); uerr != nil {
				return uerr
			}
			return fmt.Errorf("failed to rescale %s: %w", reference, err)
		}
		c.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededRescale", "the HPA controller was able to update the target scale to %d", desired)
		c.recorder.Eventf(cached, api.EventTypeNormal, "SuccessfulRescale", "New size: %d; reason: %s", desired, reason)
		c.history.recordScale(key, hpa.Spec.Behavior, current, desired, now)
		c.log.Info("successfully rescaled", "hpa", key, "currentReplicas", current, "desiredReplicas", desired, "reason", reason)
	}
	c.setStatus(hpa, current, desired, statuses, rescale)
	return c.updateStatusIfNeeded(ctx, cached, original, hpa)
}

// setStatus is kube's setStatus: the replicas, the metrics, and the last
// scale time when it rescaled.
func (c *Controller) setStatus(h *autoscalingv2.HorizontalPodAutoscaler, current, desired int32, metrics []autoscalingv2.MetricStatus, rescaled bool) {
	h.Status.CurrentReplicas = current
	h.Status.DesiredReplicas = desired
	h.Status.CurrentMetrics = metrics
	if rescaled {
		t := metav1.NewTime(c.now())
		h.Status.LastScaleTime = &t
	}
}

// updateStatusIfNeeded writes the status through /status when it changed.
func (c *Controller) updateStatusIfNeeded(ctx context.Context, cached *api.HorizontalPodAutoscaler, original *autoscalingv2.HorizontalPodAutoscalerStatus, h *autoscalingv2.HorizontalPodAutoscaler) error {
	if reflect.DeepEqual(*original, h.Status) {
		return nil
	}
	b, err := json.Marshal(h.Status)
	if err != nil {
		return err
	}
	upd := api.DeepCopy(cached)
	upd.Status = api.HorizontalPodAutoscalerStatus{}
	if err := json.Unmarshal(b, &upd.Status); err != nil {
		return err
	}
	if upd.Status.CurrentMetrics == nil {
		upd.Status.CurrentMetrics = []api.MetricStatus{}
	}
	if _, err := client.Resource[api.HorizontalPodAutoscaler](c.client).Namespace(upd.Namespace).UpdateStatus(ctx, upd); err != nil {
		c.recorder.Event(cached, api.EventTypeWarning, "FailedUpdateStatus", err.Error())
		return fmt.Errorf("failed to update status for %s: %w", upd.Name, err)
	}
	return nil
}

// computeReplicas is kube's computeReplicasForMetrics: one proposal per
// metric, the largest wins; -1 when no metric could be computed (or some
// failed and the others would scale down).
func (c *Controller) computeReplicas(ctx context.Context, hpa *autoscalingv2.HorizontalPodAutoscaler, cached *api.HorizontalPodAutoscaler, scale *api.Scale) (int32, string, []autoscalingv2.MetricStatus, error) {
	if scale.Status.Selector == "" {
		msg := "selector is required"
		c.recorder.Event(cached, api.EventTypeWarning, "SelectorRequired", msg)
		c.setCondition(hpa, autoscalingv2.ScalingActive, corev1.ConditionFalse, "InvalidSelector", "the HPA target's scale is missing a selector")
		return -1, "", nil, errors.New(msg)
	}
	sel, err := labels.Parse(scale.Status.Selector)
	if err != nil {
		msg := fmt.Sprintf("couldn't convert selector into a corresponding internal selector object: %v", err)
		c.recorder.Event(cached, api.EventTypeWarning, "InvalidSelector", msg)
		c.setCondition(hpa, autoscalingv2.ScalingActive, corev1.ConditionFalse, "InvalidSelector", "%s", msg)
		return -1, "", nil, errors.New(msg)
	}
	specReplicas := scale.Spec.Replicas
	statuses := make([]autoscalingv2.MetricStatus, len(hpa.Spec.Metrics))
	var (
		replicas    int32
		metric      string
		invalid     int
		firstErr    error
		invalidCond autoscalingv2.HorizontalPodAutoscalerCondition
	)
	for i, spec := range hpa.Spec.Metrics {
		proposal, name, cond, err := c.computeMetric(ctx, hpa, cached, spec, specReplicas, sel, &statuses[i])
		if err != nil {
			if invalid == 0 {
				invalidCond, firstErr = cond, err
			}
			invalid++
			continue
		}
		if replicas == 0 || proposal > replicas {
			replicas, metric = proposal, name
		}
	}
	if firstErr != nil {
		firstErr = fmt.Errorf("invalid metrics (%v invalid out of %v), first error is: %w", invalid, len(hpa.Spec.Metrics), firstErr)
	}
	if invalid >= len(hpa.Spec.Metrics) || (invalid > 0 && replicas < specReplicas) {
		c.setCondition(hpa, invalidCond.Type, invalidCond.Status, invalidCond.Reason, "%s", invalidCond.Message)
		return -1, "", statuses, firstErr
	}
	c.setCondition(hpa, autoscalingv2.ScalingActive, corev1.ConditionTrue, "ValidMetricFound", "the HPA was able to successfully calculate a replica count from %s", metric)
	return replicas, metric, statuses, firstErr
}

// computeMetric proposes replicas for one metric.
func (c *Controller) computeMetric(ctx context.Context, hpa *autoscalingv2.HorizontalPodAutoscaler, cached *api.HorizontalPodAutoscaler, spec autoscalingv2.MetricSpec,
	current int32, sel labels.Selector, status *autoscalingv2.MetricStatus) (int32, string, autoscalingv2.HorizontalPodAutoscalerCondition, error) {
	unable := func(reason string, err error) autoscalingv2.HorizontalPodAutoscalerCondition {
		c.recorder.Event(cached, api.EventTypeWarning, reason, err.Error())
		return autoscalingv2.HorizontalPodAutoscalerCondition{Type: autoscalingv2.ScalingActive, Status: corev1.ConditionFalse, Reason: reason,
			Message: fmt.Sprintf("the HPA was unable to compute the replica count: %v", err)}
	}
	switch spec.Type {
	case autoscalingv2.ResourceMetricSourceType, autoscalingv2.ContainerResourceMetricSourceType:
		var (
			res       corev1.ResourceName
			tgt       autoscalingv2.MetricTarget
			container string
			reason    = "FailedGetResourceMetric"
			wrap      string
		)
		if spec.Type == autoscalingv2.ResourceMetricSourceType {
			if spec.Resource == nil {
				return 0, "", unable(reason, errors.New("invalid resource metric source: resource is unset")), errors.New("resource is unset")
			}
			res, tgt = spec.Resource.Name, spec.Resource.Target
			wrap = fmt.Sprintf("failed to get %s resource metric value", res)
		} else {
			if spec.ContainerResource == nil {
				return 0, "", unable("FailedGetContainerResourceMetric", errors.New("invalid container resource metric source: containerResource is unset")), errors.New("containerResource is unset")
			}
			res, tgt, container = spec.ContainerResource.Name, spec.ContainerResource.Target, spec.ContainerResource.Container
			reason, wrap = "FailedGetContainerResourceMetric", fmt.Sprintf("failed to get %s container metric value", container)
		}
		proposal, value, name, err := c.resourceProposal(ctx, hpa.Namespace, current, res, tgt, container, sel, spec.Type)
		if err != nil {
			cond := unable(reason, err)
			return 0, "", cond, fmt.Errorf("%s: %w", wrap, err)
		}
		if spec.Type == autoscalingv2.ResourceMetricSourceType {
			*status = autoscalingv2.MetricStatus{Type: spec.Type, Resource: &autoscalingv2.ResourceMetricStatus{Name: res, Current: value}}
		} else {
			*status = autoscalingv2.MetricStatus{Type: spec.Type, ContainerResource: &autoscalingv2.ContainerResourceMetricStatus{Name: res, Container: container, Current: value}}
		}
		return proposal, name, autoscalingv2.HorizontalPodAutoscalerCondition{}, nil
	case autoscalingv2.PodsMetricSourceType, autoscalingv2.ObjectMetricSourceType, autoscalingv2.ExternalMetricSourceType:
		reason := map[autoscalingv2.MetricSourceType]string{autoscalingv2.PodsMetricSourceType: "FailedGetPodsMetric",
			autoscalingv2.ObjectMetricSourceType: "FailedGetObjectMetric", autoscalingv2.ExternalMetricSourceType: "FailedGetExternalMetric"}[spec.Type]
		err := fmt.Errorf("%s metrics need the custom or external metrics API, which this cluster does not serve", spec.Type)
		return 0, "", unable(reason, err), err
	default:
		err := fmt.Errorf("unknown metric source type %q%w", string(spec.Type), errors.New(""))
		return 0, "", unable("InvalidMetricSourceType", err), err
	}
}

// resourceProposal is kube's computeStatusForResourceMetricGeneric.
func (c *Controller) resourceProposal(ctx context.Context, ns string, current int32, res corev1.ResourceName, tgt autoscalingv2.MetricTarget,
	container string, sel labels.Selector, typ autoscalingv2.MetricSourceType) (int32, autoscalingv2.MetricValueStatus, string, error) {
	metrics, _, err := resourceMetrics(ctx, c.metrics, api.ResourceName(res), ns, sel, container)
	pods := c.pods.Lister().Namespace(ns).List(sel)
	format := resource.DecimalSI
	if res == corev1.ResourceMemory {
		format = resource.BinarySI
	}
	if tgt.AverageValue != nil {
		if err != nil {
			return 0, autoscalingv2.MetricValueStatus{}, "", fmt.Errorf("failed to get %s usage: unable to get metrics for resource %s: %w", res, res, err)
		}
		n, usage, err := c.calc.rawReplicas(current, tgt.AverageValue.MilliValue(), api.ResourceName(res), pods, metrics)
		if err != nil {
			return 0, autoscalingv2.MetricValueStatus{}, "", fmt.Errorf("failed to get %s usage: %w", res, err)
		}
		q := *resource.NewMilliQuantity(usage, format)
		return n, autoscalingv2.MetricValueStatus{AverageValue: &q}, fmt.Sprintf("%s resource", res), nil
	}
	if tgt.AverageUtilization == nil {
		return 0, autoscalingv2.MetricValueStatus{}, "", errors.New("invalid resource metric source: neither an average utilization target nor an average value (usage) target was set")
	}
	if err != nil {
		return 0, autoscalingv2.MetricValueStatus{}, "", fmt.Errorf("failed to get %s utilization: unable to get metrics for resource %s: %w", res, res, err)
	}
	n, util, raw, err := c.calc.resourceReplicas(current, *tgt.AverageUtilization, api.ResourceName(res), container, pods, metrics)
	if err != nil {
		return 0, autoscalingv2.MetricValueStatus{}, "", fmt.Errorf("failed to get %s utilization: %w", res, err)
	}
	name := fmt.Sprintf("%s resource utilization (percentage of request)", res)
	if typ == autoscalingv2.ContainerResourceMetricSourceType {
		name = fmt.Sprintf("%s container resource utilization (percentage of request)", res)
	}
	q := *resource.NewMilliQuantity(raw, format)
	return n, autoscalingv2.MetricValueStatus{AverageUtilization: &util, AverageValue: &q}, name, nil
}
