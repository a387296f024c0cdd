package admission

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
	"github.com/minik8s/minik8s/internal/quota"
)

// LimitRangerAnnotation records on a pod what LimitRanger defaulted.
const LimitRangerAnnotation = "kubernetes.io/limit-ranger"

// LimitRangeLister lists a namespace's LimitRanges.
type LimitRangeLister interface {
	ListLimitRanges(ctx context.Context, namespace string) ([]*api.LimitRange, error)
}

// LimitRanger is Kubernetes' LimitRanger admission plugin, for pods being
// created and claims being created or updated. Admit gives each container
// and init container the default limits and requests of the namespace's
// Container LimitRanges it lacks, and says so in the kubernetes.io/limit-
// ranger annotation; Validate refuses (403) a pod whose containers, or
// whose sum, fall outside a LimitRange's min, max or
// maxLimitRequestRatio, and a claim whose storage request is outside its
// min and max, with every violation in Kubernetes' words.
type LimitRanger struct {
	LimitRanges LimitRangeLister
}

var (
	_ Mutator   = (*LimitRanger)(nil)
	_ Validator = (*LimitRanger)(nil)
)

// Name implements Plugin.
func (*LimitRanger) Name() string { return "LimitRanger" }

// Handles implements Plugin.
func (*LimitRanger) Handles(op Operation) bool { return op == Create || op == Update }

// ranges returns the namespace's LimitRanges when a is one LimitRanger
// looks at.
func (p *LimitRanger) ranges(ctx context.Context, a *Attributes) ([]*api.LimitRange, error) {
	if a.Subresource != "" || a.Namespace == "" || a.Resource.Group != "" {
		return nil, nil
	}
	switch a.Resource.Resource {
	case "pods":
		if a.Operation != Create {
			return nil, nil // containers cannot change after create
		}
	case "persistentvolumeclaims":
	default:
		return nil, nil
	}
	if a.OldObject != nil && a.OldObject.GetObjectMeta().DeletionTimestamp != nil {
		return nil, nil
	}
	lrs, err := p.LimitRanges.ListLimitRanges(ctx, a.Namespace)
	if err != nil {
		return nil, NewForbidden(a, fmt.Errorf("unable to %s %s at this time because there was an error enforcing limit ranges", a.Operation, a.Resource.Resource))
	}
	return lrs, nil
}

// Admit implements Mutator.
func (p *LimitRanger) Admit(ctx context.Context, a *Attributes) error {
	lrs, err := p.ranges(ctx, a)
	if err != nil {
		return err
	}
	pod, ok := a.Object.(*api.Pod)
	if !ok {
		return nil
	}
	for _, lr := range lrs {
		defaultContainers(pod, lr)
	}
	return nil
}

// defaultContainers gives pod's containers what lr's Container items
// default, as Kubernetes' mergePodResourceRequirements.
func defaultContainers(pod *api.Pod, lr *api.LimitRange) {
	req, lim := api.ResourceList{}, api.ResourceList{}
	for _, it := range lr.Spec.Limits {
		if it.Type == api.LimitTypeContainer {
			for k, v := range it.DefaultRequest {
				req[k] = v
			}
			for k, v := range it.Default {
				lim[k] = v
			}
		}
	}
	var notes []string
	merge := func(c *api.Container, kind string) {
		set := func(dst *api.ResourceList, from api.ResourceList) []string {
			var names []string
			if *dst == nil {
				*dst = api.ResourceList{}
			}
			for k, v := range from {
				if _, ok := (*dst)[k]; !ok {
					(*dst)[k] = v
					names = append(names, string(k))
				}
			}
			sort.Strings(names)
			return names
		}
		setLim := set(&c.Resources.Limits, lim)
		setReq := set(&c.Resources.Requests, req)
		if len(setReq) > 0 {
			notes = append(notes, strings.Join(setReq, ", ")+" request for "+kind+" "+c.Name)
		}
		if len(setLim) > 0 {
			notes = append(notes, strings.Join(setLim, ", ")+" limit for "+kind+" "+c.Name)
		}
	}
	for i := range pod.Spec.Containers {
		merge(&pod.Spec.Containers[i], "container")
	}
	for i := range pod.Spec.InitContainers {
		merge(&pod.Spec.InitContainers[i], "init container")
	}
	if len(notes) > 0 {
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[LimitRangerAnnotation] = "LimitRanger plugin set: " + strings.Join(notes, "; ")
	}
}

// Validate implements Validator.
func (p *LimitRanger) Validate(ctx context.Context, a *Attributes) error {
	lrs, err := p.ranges(ctx, a)
	if err != nil {
		return err
	}
	for _, lr := range lrs {
		var errs []string
		switch o := a.Object.(type) {
		case *api.Pod:
			errs = validatePodLimits(lr, o)
		case *api.PersistentVolumeClaim:
			errs = validateClaimLimits(lr, o)
		}
		if len(errs) > 0 {
			return NewForbidden(a, aggregate(errs))
		}
	}
	return nil
}

// aggregate prints errors as Kubernetes' error aggregates do: one as it
// is, several in brackets, duplicates once.
func aggregate(msgs []string) error {
	var uniq []string
	seen := map[string]bool{}
	for _, m := range msgs {
		if !seen[m] {
			seen[m] = true
			uniq = append(uniq, m)
		}
	}
	if len(uniq) == 1 {
		return fmt.Errorf("%s", uniq[0])
	}
	return fmt.Errorf("[%s]", strings.Join(uniq, ", "))
}

func validatePodLimits(lr *api.LimitRange, pod *api.Pod) []string {
	var errs []string
	check := func(it api.LimitRangeItem, req, lim api.ResourceList) {
		t := string(it.Type)
		for _, k := range quota.ResourceNames(it.Min) {
			errs = appendErr(errs, minConstraint(t, k, it.Min[k], req, lim))
		}
		for _, k := range quota.ResourceNames(it.Max) {
			errs = appendErr(errs, maxConstraint(t, k, it.Max[k], req, lim))
		}
		for _, k := range quota.ResourceNames(it.MaxLimitRequestRatio) {
			errs = appendErr(errs, ratioConstraint(t, k, it.MaxLimitRequestRatio[k], req, lim))
		}
	}
	for _, it := range lr.Spec.Limits {
		switch it.Type {
		case api.LimitTypeContainer:
			for _, cs := range [][]api.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
				for i := range cs {
					check(it, cs[i].Resources.Requests, cs[i].Resources.Limits)
				}
			}
		case api.LimitTypePod:
			// The pod's sum as the scheduler makes it, without overhead.
			bare := *pod
			bare.Spec.Overhead = nil
			check(it, quota.PodRequests(&bare), quota.PodLimits(&bare))
		}
	}
	return errs
}

func validateClaimLimits(lr *api.LimitRange, c *api.PersistentVolumeClaim) []string {
	var errs []string
	for _, it := range lr.Spec.Limits {
		if it.Type != api.LimitTypePersistentVolumeClaim {
			continue
		}
		t := string(it.Type)
		for _, k := range quota.ResourceNames(it.Min) {
			errs = appendErr(errs, minConstraint(t, k, it.Min[k], c.Spec.Resources.Requests, api.ResourceList{}))
		}
		for _, k := range quota.ResourceNames(it.Max) {
			req, ok := c.Spec.Resources.Requests[k]
			r, _, e := commonPrecision(req, resource.Quantity{}, it.Max[k])
			switch {
			case !ok:
				errs = append(errs, fmt.Sprintf("maximum %s usage per %s is %s.  No request is specified", k, t, it.Max[k].String()))
			case r > e:
				errs = append(errs, fmt.Sprintf("maximum %s usage per %s is %s, but request is %s", k, t, it.Max[k].String(), req.String()))
			}
		}
	}
	return errs
}

func appendErr(errs []string, msg string) []string {
	if msg != "" {
		errs = append(errs, msg)
	}
	return errs
}

// commonPrecision returns the three values in milli-units when none
// overflows them, else in units, so they compare exactly.
func commonPrecision(req, lim, enforced resource.Quantity) (int64, int64, int64) {
	r, l, e := req.Value(), lim.Value(), enforced.Value()
	if r <= resource.MaxMilliValue && l <= resource.MaxMilliValue && e <= resource.MaxMilliValue {
		return req.MilliValue(), lim.MilliValue(), enforced.MilliValue()
	}
	return r, l, e
}

func minConstraint(t string, k api.ResourceName, enforced resource.Quantity, request, limit api.ResourceList) string {
	req, hasReq := request[k]
	lim, hasLim := limit[k]
	r, l, e := commonPrecision(req, lim, enforced)
	switch {
	case !hasReq:
		return fmt.Sprintf("minimum %s usage per %s is %s.  No request is specified", k, t, enforced.String())
	case r < e:
		return fmt.Sprintf("minimum %s usage per %s is %s, but request is %s", k, t, enforced.String(), req.String())
	case hasLim && l < e:
		return fmt.Sprintf("minimum %s usage per %s is %s, but limit is %s", k, t, enforced.String(), lim.String())
	}
	return ""
}

func maxConstraint(t string, k api.ResourceName, enforced resource.Quantity, request, limit api.ResourceList) string {
	req, hasReq := request[k]
	lim, hasLim := limit[k]
	r, l, e := commonPrecision(req, lim, enforced)
	switch {
	case !hasLim:
		return fmt.Sprintf("maximum %s usage per %s is %s.  No limit is specified", k, t, enforced.String())
	case l > e:
		return fmt.Sprintf("maximum %s usage per %s is %s, but limit is %s", k, t, enforced.String(), lim.String())
	case hasReq && r > e:
		return fmt.Sprintf("maximum %s usage per %s is %s, but request is %s", k, t, enforced.String(), req.String())
	}
	return ""
}

func ratioConstraint(t string, k api.ResourceName, enforced resource.Quantity, request, limit api.ResourceList) string {
	req, hasReq := request[k]
	lim, hasLim := limit[k]
	r, l, _ := commonPrecision(req, lim, enforced)
	if !hasReq || r == 0 {
		return fmt.Sprintf("%s max limit to request ratio per %s is %s, but no request is specified or request is 0", k, t, enforced.String())
	}
	if !hasLim || l == 0 {
		return fmt.Sprintf("%s max limit to request ratio per %s is %s, but no limit is specified or limit is 0", k, t, enforced.String())
	}
	observed := float64(l) / float64(r)
	shown := observed
	maxRatio := float64(enforced.Value())
	if enforced.Value() <= resource.MaxMilliValue {
		observed *= 1000
		maxRatio = float64(enforced.MilliValue())
	}
	if observed > maxRatio {
		return fmt.Sprintf("%s max limit to request ratio per %s is %s, but provided ratio is %f", k, t, enforced.String(), shown)
	}
	return ""
}
