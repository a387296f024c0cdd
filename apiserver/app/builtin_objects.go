package app

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/validation"
	"github.com/minik8s/minik8s/apiserver/admission"
	"github.com/minik8s/minik8s/apiserver/cacher"
	"github.com/minik8s/minik8s/apiserver/registry"
)

// flowcontrolDefaults are kube-apiserver v1.37's mandatory and suggested
// PriorityLevelConfigurations and FlowSchemas, as
// k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap (v0.37.2) declares them,
// written out as JSON. Nothing acts on them yet: API priority and fairness
// is not implemented (issue 25 asks for the objects only).
//
//go:embed flowcontrol_defaults.json
var flowcontrolDefaults []byte

// bootstrapBuiltinObjects creates the objects kube-apiserver creates at
// start, when they are missing: the system PriorityClasses
// (system-node-critical, system-cluster-critical), the API priority and
// fairness configuration and the default ServiceCIDR.
func (a *APIServer) bootstrapBuiltinObjects(ctx context.Context) error {
	pcs := a.Store("scheduling.k8s.io", "priorityclasses")
	for _, pc := range validation.SystemPriorityClasses {
		pc := pc
		if err := createIfMissing(ctx, pcs, &pc); err != nil {
			return err
		}
	}
	var apf struct {
		MandatoryPLCs []api.PriorityLevelConfiguration `json:"mandatoryPriorityLevelConfigurations"`
		SuggestedPLCs []api.PriorityLevelConfiguration `json:"suggestedPriorityLevelConfigurations"`
		MandatoryFSs  []api.FlowSchema                 `json:"mandatoryFlowSchemas"`
		SuggestedFSs  []api.FlowSchema                 `json:"suggestedFlowSchemas"`
	}
	if err := json.Unmarshal(flowcontrolDefaults, &apf); err != nil {
		return fmt.Errorf("read the flow control defaults: %w", err)
	}
	plcs := a.Store("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations")
	for _, plc := range append(apf.MandatoryPLCs, apf.SuggestedPLCs...) {
		if err := createIfMissing(ctx, plcs, &plc); err != nil {
			return err
		}
	}
	fss := a.Store("flowcontrol.apiserver.k8s.io", "flowschemas")
	for _, fs := range append(apf.MandatoryFSs, apf.SuggestedFSs...) {
		if err := createIfMissing(ctx, fss, &fs); err != nil {
			return err
		}
	}
	return a.bootstrapServiceCIDR(ctx)
}

// defaultServiceCIDRName is the ServiceCIDR kube-apiserver's
// default-servicecidr controller keeps for --service-cluster-ip-range.
const defaultServiceCIDRName = "kubernetes"

// bootstrapServiceCIDR creates the default ServiceCIDR "kubernetes" from
// --service-cluster-ip-range and marks it Ready, as kube-apiserver's
// default-servicecidr controller does; one that exists with other ranges
// is left as it is, with a warning (kube's controller reports it as an
// event and changes nothing either).
func (a *APIServer) bootstrapServiceCIDR(ctx context.Context) error {
	var cidrs []string
	for _, c := range strings.Split(a.opts.ServiceClusterIPRange, ",") {
		if c = strings.TrimSpace(c); c != "" {
			cidrs = append(cidrs, c)
		}
	}
	if len(cidrs) == 0 {
		return nil
	}
	st := a.Store("networking.k8s.io", "servicecidrs")
	if err := createIfMissing(ctx, st, &api.ServiceCIDR{ObjectMeta: api.ObjectMeta{Name: defaultServiceCIDRName}, Spec: api.ServiceCIDRSpec{CIDRs: cidrs}}); err != nil {
		return err
	}
	_, err := st.Mutate(ctx, "", defaultServiceCIDRName, "", registry.WriteOptions{Subresource: "status"}, func(cur api.Object) (api.Object, error) {
		sc := cur.(*api.ServiceCIDR)
		if !slices.Equal(sc.Spec.CIDRs, cidrs) {
			slog.Warn("the default ServiceCIDR does not match --service-cluster-ip-range; left as it is", "serviceCIDR", defaultServiceCIDRName, "cidrs", sc.Spec.CIDRs, "flag", cidrs)
			return sc, nil
		}
		for _, c := range sc.Status.Conditions {
			if c.Type == "Ready" && c.Status != api.ConditionUnknown {
				return sc, nil
			}
		}
		sc.Status.Conditions = append(slices.DeleteFunc(sc.Status.Conditions, func(c api.Condition) bool { return c.Type == "Ready" }),
			api.Condition{Type: "Ready", Status: api.ConditionTrue, Message: "Kubernetes default Service CIDR is ready", LastTransitionTime: api.Now()})
		return sc, nil
	})
	if err != nil {
		return fmt.Errorf("mark the default ServiceCIDR Ready: %w", err)
	}
	return nil
}

func createIfMissing(ctx context.Context, s *registry.Store, obj api.Object) error {
	if _, err := s.Create(ctx, "", obj, registry.WriteOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create %s %s: %w", s.Info.Kind, obj.GetObjectMeta().Name, err)
	}
	return nil
}

// priorityClasses is the Priority admission plugin's view of the
// PriorityClasses: the watch cache, and etcd for a class the cache has
// not seen yet. store is set once the stores exist.
type priorityClasses struct{ store *registry.Store }

var _ admission.PriorityClassLister = (*priorityClasses)(nil)

func (p *priorityClasses) GetPriorityClass(ctx context.Context, name string) (*api.PriorityClass, bool, error) {
	if p.store == nil {
		return nil, false, errors.New("the PriorityClasses are not served yet")
	}
	return lookup[api.PriorityClass](ctx, p.store, "", name, false)
}

func (p *priorityClasses) ListPriorityClasses(ctx context.Context) ([]*api.PriorityClass, error) {
	if p.store == nil {
		return nil, errors.New("the PriorityClasses are not served yet")
	}
	return cachedValues[api.PriorityClass](p.store, cacher.Predicate{}), nil
}
