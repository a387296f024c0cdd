package crd

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/admission"
	"github.com/minik8s/minik8s/apiserver/fieldmanager"
	"github.com/minik8s/minik8s/apiserver/openapi"
	"github.com/minik8s/minik8s/apiserver/registry"
	"github.com/minik8s/minik8s/apiserver/server"
	"github.com/minik8s/minik8s/apiserver/storage"
)

// resyncInterval bounds how long a failed step (a status write, the
// deletion of a CRD's objects) waits for its retry.
const resyncInterval = 5 * time.Second

// Config assembles a Controller.
type Config struct {
	// CRDs is the store of CustomResourceDefinitions.
	CRDs *registry.Store
	// Storage, Admission, Transformer and the watch cache settings are
	// those of the custom resources' stores, as of the built-in ones.
	Storage          *storage.Store
	Admission        *admission.Chain
	Transformer      func(group, resource string) registry.ValueTransformer
	BookmarkInterval time.Duration
	EventBufferSize  int
	// Docs, if set, gets the served versions' OpenAPI documents.
	Docs *openapi.Docs
	// Schemas are the built-in OpenAPI v3 definitions (openapi.Docs.Schemas):
	// the meta/v1 ones complete a custom resource's for server-side apply.
	Schemas []byte
	Logger  *slog.Logger
}

// Controller keeps the CRDs' conditions and serves their resources; it is
// the server's CustomResources.
type Controller struct {
	cfg      Config
	log      *slog.Logger
	metaDefs map[string]*spec.Schema
	now      func() time.Time
	kick     chan struct{}
	synced   atomic.Bool

	mu     sync.RWMutex
	byGVR  map[string]*server.CustomResource // "group/version/resource"
	served []*server.CustomResource
	// serving is the serving state of each established CRD, by name.
	serving map[string]*serving
}

var _ server.CustomResources = (*Controller)(nil)

// serving is what one CRD serves.
type serving struct {
	// key changes when what is served must be rebuilt.
	key         string
	versions    []*server.CustomResource
	terminating bool
	stop        context.CancelFunc
	done        sync.WaitGroup
	v2Paths     map[string]json.RawMessage
	v2Defs      map[string]json.RawMessage
	v3          map[string]*spec3.OpenAPI // by "apis/GROUP/VERSION"
}

// New returns a Controller; Run starts it.
func New(cfg Config) (*Controller, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	c := &Controller{cfg: cfg, log: log.With("controller", "customresourcedefinitions"), now: time.Now,
		kick: make(chan struct{}, 1), byGVR: map[string]*server.CustomResource{}, serving: map[string]*serving{},
		metaDefs: map[string]*spec.Schema{}}
	if len(cfg.Schemas) > 0 {
		all := map[string]*spec.Schema{}
		if err := json.Unmarshal(cfg.Schemas, &all); err != nil {
			return nil, fmt.Errorf("read the built-in schemas: %w", err)
		}
		for name, s := range all {
			if strings.HasPrefix(name, "io.k8s.apimachinery.") {
				c.metaDefs[name] = s
			}
		}
	}
	return c, nil
}

// Lookup implements server.CustomResources.
func (c *Controller) Lookup(group, version, resource string) (*server.CustomResource, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	cr, ok := c.byGVR[group+"/"+version+"/"+resource]
	return cr, ok
}

// Served implements server.CustomResources.
func (c *Controller) Served() []*server.CustomResource {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.served
}

// Synced reports whether the CRDs present at start have been looked at
// once: their resources are served from then on.
func (c *Controller) Synced() bool { return c.synced.Load() }

// WaitSynced waits until Synced or ctx ends.
func (c *Controller) WaitSynced(ctx context.Context) error {
	for !c.Synced() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}

// Run keeps the CRDs' conditions and the served resources in step with
// the CRDs until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	go c.watch(ctx)
	ticker := time.NewTicker(resyncInterval)
	defer ticker.Stop()
	defer c.stopAll()
	for {
		if err := c.sync(ctx); err != nil && ctx.Err() == nil {
			c.log.Warn("sync failed; retrying", "err", err)
		}
		c.synced.Store(true)
		select {
		case <-ctx.Done():
			return
		case <-c.kick:
		case <-ticker.C:
		}
	}
}

// watch turns every change of a CRD into a sync.
func (c *Controller) watch(ctx context.Context) {
	for ctx.Err() == nil {
		w, err := c.cfg.CRDs.Watch(ctx, "", registry.ListOptions{ResourceVersion: "0"})
		if err != nil {
			c.log.Warn("watch CRDs", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			continue
		}
		for range w.Events() {
			c.trigger()
		}
		w.Stop()
	}
}

func (c *Controller) trigger() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// sync brings every CRD's status and serving in line with its spec.
func (c *Controller) sync(ctx context.Context) error {
	list, err := c.cfg.CRDs.List(ctx, "", registry.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return err
	}
	crds := make([]*api.CustomResourceDefinition, 0, len(list.Items))
	for _, it := range list.Items {
		crds = append(crds, api.DeepCopy(it.Object.(*api.CustomResourceDefinition)))
	}
	// The older CRD keeps a contested name.
	slices.SortFunc(crds, func(a, b *api.CustomResourceDefinition) int {
		return cmp.Or(a.CreationTimestamp.Compare(b.CreationTimestamp.Time), cmp.Compare(a.Name, b.Name))
	})
	var errs []error
	for i, crd := range crds {
		updated, err := c.syncNames(ctx, crd, crds)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		crds[i] = updated
	}
	present := map[string]bool{}
	changed := false
	for _, crd := range crds {
		present[crd.Name] = true
		ch, err := c.syncServing(ctx, crd)
		changed = changed || ch
		if err != nil {
			errs = append(errs, err)
		}
		if crd.DeletionTimestamp != nil && slices.Contains(crd.Finalizers, api.CRDCleanupFinalizer) {
			if err := c.cleanup(ctx, crd); err != nil {
				errs = append(errs, err)
			}
		}
	}
	c.mu.Lock()
	var gone []*serving
	for name, sv := range c.serving {
		if !present[name] {
			gone = append(gone, sv)
			delete(c.serving, name)
			changed = true
		}
	}
	if changed {
		c.publishLocked()
	}
	c.mu.Unlock()
	for _, sv := range gone {
		sv.stop()
		sv.done.Wait()
	}
	if changed {
		if err := c.publishOpenAPI(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// syncNames decides NamesAccepted and Established, as kube's naming and
// establishing controllers do, and writes them when they change. all are
// all CRDs, with the status already decided for those before crd. As in
// kube, the names taken are those every CRD of the group accepted, crd's
// own included: a name crd accepted in one role (its singular, say) is
// not free for another (a short name).
func (c *Controller) syncNames(ctx context.Context, crd *api.CustomResourceDefinition, all []*api.CustomResourceDefinition) (*api.CustomResourceDefinition, error) {
	resources, kinds := map[string]bool{}, map[string]bool{}
	for _, o := range all {
		if o.Spec.Group != crd.Spec.Group {
			continue
		}
		n := o.Status.AcceptedNames
		for _, r := range append([]string{n.Plural, n.Singular}, n.ShortNames...) {
			resources[r] = true
		}
		kinds[n.Kind], kinds[n.ListKind] = true, true
	}
	want, accepted := crd.Spec.Names, crd.Status.AcceptedNames
	names := accepted
	cond := api.CustomResourceDefinitionCondition{Type: api.CRDNamesAccepted, Status: api.ConditionTrue,
		Reason: "NoConflicts", Message: "no conflicts found"}
	conflict := func(reason string, err error) {
		cond.Status, cond.Reason, cond.Message = api.ConditionFalse, reason, err.Error()
	}
	if err := freshName(want.Plural, accepted.Plural, resources); err != nil {
		conflict("PluralConflict", err)
	} else {
		names.Plural = want.Plural
	}
	if err := freshName(want.Singular, accepted.Singular, resources); err != nil {
		conflict("SingularConflict", err)
	} else {
		names.Singular = want.Singular
	}
	if !slices.Equal(want.ShortNames, accepted.ShortNames) {
		var msgs []string
		for _, s := range want.ShortNames {
			if slices.Contains(accepted.ShortNames, s) {
				continue
			}
			if err := freshName(s, "", resources); err != nil {
				msgs = append(msgs, err.Error())
			}
		}
		switch len(msgs) {
		case 0:
			names.ShortNames = want.ShortNames
		case 1:
			conflict("ShortNamesConflict", errors.New(msgs[0]))
		default:
			conflict("ShortNamesConflict", errors.New("["+strings.Join(msgs, ", ")+"]"))
		}
	}
	if err := freshName(want.Kind, accepted.Kind, kinds); err != nil {
		conflict("KindConflict", err)
	} else {
		names.Kind = want.Kind
	}
	if err := freshName(want.ListKind, accepted.ListKind, kinds); err != nil {
		conflict("ListKindConflict", err)
	} else {
		names.ListKind = want.ListKind
	}
	names.Categories = want.Categories

	established, had := condition(crd, api.CRDEstablished)
	wasEstablished := established.Status == api.ConditionTrue
	if !had {
		established = api.CustomResourceDefinitionCondition{Type: api.CRDEstablished, Status: api.ConditionFalse,
			Reason: "NotAccepted", Message: "not all names are accepted"}
	}
	if established.Status != api.ConditionTrue && cond.Status == api.ConditionTrue {
		// A single apiserver serves the names as soon as they are
		// accepted: kube's establishing controller then marks it at once.
		established = api.CustomResourceDefinitionCondition{Type: api.CRDEstablished, Status: api.ConditionTrue,
			Reason: "InitialNamesAccepted", Message: "the initial names have been accepted"}
	}
	next := api.DeepCopy(crd)
	next.Status.AcceptedNames = names
	now := c.now()
	setCondition(next, cond, now)
	setCondition(next, established, now)
	if reflect.DeepEqual(conditionsWithoutTimes(next), conditionsWithoutTimes(crd)) &&
		reflect.DeepEqual(next.Status.AcceptedNames, crd.Status.AcceptedNames) {
		return crd, nil
	}
	if established.Status == api.ConditionTrue && !wasEstablished {
		// Served, and in discovery, before the condition says so, as
		// kube's handler serves an established CRD at once: a client that
		// waits for Established (Helm, kubectl wait) and then reads
		// discovery must find the resource.
		if _, err := c.syncServing(ctx, next); err != nil {
			return crd, err
		}
	}
	out, err := c.cfg.CRDs.Mutate(ctx, "", crd.Name, crd.ResourceVersion, registry.WriteOptions{Subresource: "status"},
		func(cur api.Object) (api.Object, error) {
			cur.(*api.CustomResourceDefinition).Status = next.Status
			return cur, nil
		})
	if err != nil {
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			c.trigger() // the watch brings the newer object
			return crd, nil
		}
		return crd, fmt.Errorf("update the status of %s: %w", crd.Name, err)
	}
	return out.(*api.CustomResourceDefinition), nil
}

func conditionsWithoutTimes(crd *api.CustomResourceDefinition) []api.CustomResourceDefinitionCondition {
	out := slices.Clone(crd.Status.Conditions)
	for i := range out {
		out[i].LastTransitionTime = api.Time{}
	}
	return out
}

// freshName is nil when name may be taken: it is the one already
// accepted, or no other CRD of the group uses it.
func freshName(name, accepted string, used map[string]bool) error {
	if name == accepted || !used[name] {
		return nil
	}
	return fmt.Errorf("%q is already in use", name)
}

// syncServing starts, rebuilds or marks what crd serves; changed reports
// a change of the served set.
func (c *Controller) syncServing(ctx context.Context, crd *api.CustomResourceDefinition) (bool, error) {
	est, _ := condition(crd, api.CRDEstablished)
	terminating := crd.DeletionTimestamp != nil
	c.mu.RLock()
	cur := c.serving[crd.Name]
	c.mu.RUnlock()
	if est.Status != api.ConditionTrue {
		if cur == nil {
			return false, nil
		}
		c.replace(crd.Name, nil)
		return true, nil
	}
	v1, err := toV1(crd)
	if err != nil {
		return false, err
	}
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(v1)
	key := servingKey(crd)
	if cur != nil && cur.key == key {
		if cur.terminating != terminating {
			c.mu.Lock()
			cur.terminating = terminating
			for _, v := range cur.versions {
				v.Terminating.Store(terminating)
			}
			c.mu.Unlock()
			return true, nil
		}
		return false, nil
	}
	sv, err := c.build(ctx, v1, key)
	if err != nil {
		return false, fmt.Errorf("serve %s: %w", crd.Name, err)
	}
	sv.terminating = terminating
	for _, v := range sv.versions {
		v.Terminating.Store(terminating)
	}
	c.replace(crd.Name, sv)
	c.log.Info("serving custom resource", "crd", crd.Name, "versions", len(sv.versions))
	return true, nil
}

// servingKey changes when what crd serves must be rebuilt: another CRD of
// the name, a spec change, other accepted names.
func servingKey(crd *api.CustomResourceDefinition) string {
	names, _ := json.Marshal(crd.Status.AcceptedNames)
	return fmt.Sprintf("%s/%d/%s", crd.UID, crd.Generation, names)
}

// replace makes sv what the CRD name serves (nil: nothing) and stops what
// it served before.
func (c *Controller) replace(name string, sv *serving) {
	c.mu.Lock()
	old := c.serving[name]
	if sv == nil {
		delete(c.serving, name)
	} else {
		c.serving[name] = sv
	}
	c.mu.Unlock()
	// The documents first: a client that finds the resource finds its
	// schema too.
	if err := c.publishOpenAPI(); err != nil {
		c.log.Warn("publish OpenAPI", "err", err)
	}
	c.mu.Lock()
	c.publishLocked()
	c.mu.Unlock()
	if old != nil {
		old.stop()
		old.done.Wait()
	}
}

// publishLocked rebuilds the lookup table and the discovery order.
func (c *Controller) publishLocked() {
	c.byGVR = map[string]*server.CustomResource{}
	var served []*server.CustomResource
	for _, sv := range c.serving {
		for _, v := range sv.versions {
			info := v.Store.Info
			c.byGVR[info.Group+"/"+info.Version+"/"+info.Resource] = v
			served = append(served, v)
		}
	}
	slices.SortStableFunc(served, func(a, b *server.CustomResource) int {
		ai, bi := a.Store.Info, b.Store.Info
		if ai.Group != bi.Group {
			return cmp.Compare(ai.Group, bi.Group)
		}
		if ai.Version != bi.Version {
			// Preferred (highest priority) first.
			return -version.CompareKubeAwareVersionStrings(ai.Version, bi.Version)
		}
		return cmp.Compare(ai.Resource, bi.Resource)
	})
	c.served = served
}

// build makes the stores, printers and OpenAPI documents of the served
// versions of crd and starts their watch caches.
func (c *Controller) build(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, key string) (*serving, error) {
	runCtx, stop := context.WithCancel(ctx)
	sv := &serving{key: key, stop: stop, v2Paths: map[string]json.RawMessage{}, v2Defs: map[string]json.RawMessage{},
		v3: map[string]*spec3.OpenAPI{}}
	ok := false
	defer func() {
		if !ok {
			stop()
			sv.done.Wait()
		}
	}()
	names := crd.Status.AcceptedNames
	webhook := crd.Spec.Conversion != nil && crd.Spec.Conversion.Strategy == apiextensionsv1.WebhookConverter
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		if !v.Served {
			continue
		}
		if webhook && !v.Storage {
			// Conversion webhooks are not implemented: serving another
			// version with None conversion would hand out objects the
			// webhook would have changed.
			c.log.Error("conversion webhooks are not implemented; only the storage version is served",
				"crd", crd.Name, "version", v.Name)
			continue
		}
		cfg, err := c.storeConfig(crd, v)
		if err != nil {
			return nil, err
		}
		info := cfg.Info
		fields, err := c.fieldManager(crd, v.Name)
		if err != nil {
			c.log.Warn("no server-side apply for this version", "crd", crd.Name, "version", v.Name, "err", err)
		}
		if fields != nil {
			cfg.FieldManager = fields.For(info)
		}
		st := registry.NewStore(cfg)
		sv.done.Add(1)
		go func() {
			defer sv.done.Done()
			if err := st.Run(runCtx); err != nil && runCtx.Err() == nil {
				c.log.Error("watch cache of a custom resource ended", "resource", info.Resource, "group", info.Group, "err", err)
			}
		}()
		sv.versions = append(sv.versions, &server.CustomResource{Store: st, Printer: newPrinter(v, c.log), Categories: names.Categories})
		if c.cfg.Docs != nil {
			if err := sv.addOpenAPI(crd, v.Name); err != nil {
				c.log.Warn("no OpenAPI for this version", "crd", crd.Name, "version", v.Name, "err", err)
			}
		}
	}
	waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for _, v := range sv.versions {
		if err := v.Store.Cacher().WaitReady(waitCtx); err != nil {
			return nil, fmt.Errorf("watch cache of %s: %w", v.Store.Info.Resource, err)
		}
	}
	ok = true
	return sv, nil
}

// storeConfig is the configuration of the store of one version of crd
// (no field manager): its objects are those of every version, under
// GROUP/PLURAL, stored in the storage version.
func (c *Controller) storeConfig(crd *apiextensionsv1.CustomResourceDefinition, v *apiextensionsv1.CustomResourceDefinitionVersion) (registry.Config, error) {
	strategy, err := newResourceStrategy(crd, v.Name)
	if err != nil {
		return registry.Config{}, err
	}
	names := crd.Status.AcceptedNames
	info := api.ResourceInfo{Group: crd.Spec.Group, Version: v.Name, Kind: names.Kind, Resource: names.Plural,
		Singular: names.Singular, ShortNames: names.ShortNames, Namespaced: crd.Spec.Scope == apiextensionsv1.NamespaceScoped,
		New: func() api.Object { return &api.CustomObject{} }}
	if v.Subresources != nil && v.Subresources.Status != nil {
		info.Subresources = append(info.Subresources, "status")
	}
	if v.Subresources != nil && v.Subresources.Scale != nil {
		info.Subresources = append(info.Subresources, "scale")
	}
	cfg := registry.Config{Info: info, Strategy: strategy, Storage: c.cfg.Storage, Admission: c.cfg.Admission,
		BookmarkInterval: c.cfg.BookmarkInterval, EventBufferSize: c.cfg.EventBufferSize,
		KeyPrefix: crd.Spec.Group + "/" + names.Plural, StorageAPIVersion: crd.Spec.Group + "/" + storageVersion(crd), Logger: c.log}
	if c.cfg.Transformer != nil {
		cfg.Transformer = c.cfg.Transformer(crd.Spec.Group, names.Plural)
	}
	return cfg, nil
}

// storageVersion is the name of crd's storage version.
func storageVersion(crd *apiextensionsv1.CustomResourceDefinition) string {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			return v.Name
		}
	}
	return ""
}

// fieldManager builds server-side apply's type converter of one version
// from its schema, completed by the built-in meta/v1 definitions.
func (c *Controller) fieldManager(crd *apiextensionsv1.CustomResourceDefinition, version string) (*fieldmanager.Manager, error) {
	doc, err := builder.BuildOpenAPIV3(crd, version, builder.Options{})
	if err != nil {
		return nil, err
	}
	defs := map[string]*spec.Schema{}
	for name, s := range c.metaDefs {
		defs[name] = s
	}
	if doc.Components != nil {
		for name, s := range doc.Components.Schemas {
			defs[name] = s
		}
	}
	return fieldmanager.FromDefinitions(defs, crd.Spec.PreserveUnknownFields)
}

// addOpenAPI adds one version's OpenAPI v2 and v3 documents.
func (sv *serving) addOpenAPI(crd *apiextensionsv1.CustomResourceDefinition, version string) error {
	v2, err := builder.BuildOpenAPIV2(crd, version, builder.Options{V2: true, IncludeSelectableFields: true})
	if err != nil {
		return err
	}
	if v2.Paths != nil {
		for p, item := range v2.Paths.Paths {
			raw, err := json.Marshal(item)
			if err != nil {
				return err
			}
			sv.v2Paths[p] = raw
		}
	}
	for name, def := range v2.Definitions {
		raw, err := json.Marshal(def)
		if err != nil {
			return err
		}
		sv.v2Defs[name] = raw
	}
	v3, err := builder.BuildOpenAPIV3(crd, version, builder.Options{V2: false, IncludeSelectableFields: true})
	if err != nil {
		return err
	}
	sv.v3["apis/"+crd.Spec.Group+"/"+version] = v3
	return nil
}

// publishOpenAPI gives the documents the served versions' paths and schemas.
func (c *Controller) publishOpenAPI() error {
	if c.cfg.Docs == nil {
		return nil
	}
	ext := openapi.Extension{V2Paths: map[string]json.RawMessage{}, V2Definitions: map[string]json.RawMessage{}, V3: map[string][]byte{}}
	byGV := map[string][]*spec3.OpenAPI{}
	c.mu.RLock()
	for _, sv := range c.serving {
		for k, v := range sv.v2Paths {
			ext.V2Paths[k] = v
		}
		for k, v := range sv.v2Defs {
			ext.V2Definitions[k] = v
		}
		for gv, doc := range sv.v3 {
			byGV[gv] = append(byGV[gv], doc)
		}
	}
	c.mu.RUnlock()
	for gv, docs := range byGV {
		merged, err := builder.MergeSpecsV3(docs...)
		if err != nil {
			return fmt.Errorf("merge the OpenAPI v3 documents of %s: %w", gv, err)
		}
		data, err := json.Marshal(merged)
		if err != nil {
			return err
		}
		ext.V3[gv] = data
	}
	return c.cfg.Docs.SetExtension(ext)
}

// overlappingBuiltIn are the resources kube's CRD finalizer leaves alone:
// a CRD of that group and plural has the storage of a built-in resource.
var overlappingBuiltIn = map[string]bool{
	"apiregistration.k8s.io/apiservices":             true,
	"apiextensions.k8s.io/customresourcedefinitions": true,
}

// cleanup deletes the stored objects of a CRD being deleted, then lifts
// its finalizer, as kube's CRD finalizer controller does. What is deleted
// is decided by what is stored, not by what is served: an established CRD
// may have objects under GROUP/PLURAL whatever its versions serve now, so
// every object there is deleted (through the storage version, with
// admission); a CRD never established has none.
//
// A pass that finds the CRD already Terminating=True writes no new
// condition before it tries: each status write is a watch event that
// triggers another pass, so a deletion that keeps failing (the same
// InstanceDeletionFailed message, a no-op write) waits for the ticker
// instead of looping, as kube's finalizer ignores Terminating-only updates.
func (c *Controller) cleanup(ctx context.Context, crd *api.CustomResourceDefinition) error {
	var err error
	if cur, ok := condition(crd, api.CRDTerminating); !ok || cur.Status != api.ConditionTrue {
		crd, err = c.setTerminating(ctx, crd, api.ConditionTrue, "InstanceDeletionInProgress", "CustomResource deletion is in progress")
		if crd == nil || err != nil {
			return err
		}
	}
	est, _ := condition(crd, api.CRDEstablished)
	var done api.CustomResourceDefinitionCondition
	switch {
	case overlappingBuiltIn[crd.Spec.Group+"/"+crd.Spec.Names.Plural]:
		done = terminatingCondition(api.ConditionFalse, "OverlappingBuiltInResource", "instances overlap with built-in resources in storage")
	case est.Status == api.ConditionTrue:
		left, err := c.deleteStored(ctx, crd)
		if err != nil {
			if _, werr := c.setTerminating(ctx, crd, api.ConditionTrue, "InstanceDeletionFailed", err.Error()); werr != nil {
				c.log.Warn("update the Terminating condition", "crd", crd.Name, "err", werr)
			}
			return fmt.Errorf("delete the objects of %s: %w", crd.Name, err)
		}
		if left > 0 {
			// Objects with finalizers: the ticker looks again (after a
			// failed pass, the condition says deletion is in progress).
			if _, err := c.setTerminating(ctx, crd, api.ConditionTrue, "InstanceDeletionInProgress", "CustomResource deletion is in progress"); err != nil {
				return err
			}
			c.log.Info("waiting for custom objects to go", "crd", crd.Name, "left", left)
			return nil
		}
		done = terminatingCondition(api.ConditionFalse, "InstanceDeletionCompleted", "removed all instances")
	default:
		done = terminatingCondition(api.ConditionFalse, "NeverEstablished", "resource was never established")
	}
	if crd, err = c.setTerminating(ctx, crd, done.Status, done.Reason, done.Message); crd == nil || err != nil {
		return err
	}
	_, err = c.cfg.CRDs.Mutate(ctx, "", crd.Name, crd.ResourceVersion, registry.WriteOptions{}, func(cur api.Object) (api.Object, error) {
		o := cur.(*api.CustomResourceDefinition)
		o.Finalizers = slices.DeleteFunc(o.Finalizers, func(f string) bool { return f == api.CRDCleanupFinalizer })
		return o, nil
	})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		c.trigger() // gone, or changed: the watch brings the newer object
		return nil
	}
	if err != nil {
		return fmt.Errorf("remove the finalizer of %s: %w", crd.Name, err)
	}
	c.trigger()
	return nil
}

func terminatingCondition(status string, reason, message string) api.CustomResourceDefinitionCondition {
	return api.CustomResourceDefinitionCondition{Type: api.CRDTerminating, Status: status, Reason: reason, Message: message}
}

// setTerminating writes crd's Terminating condition unless it says that
// already. It returns the CRD as written, or nil when it changed or went
// meanwhile (the watch brings the newer object).
func (c *Controller) setTerminating(ctx context.Context, crd *api.CustomResourceDefinition, status string, reason, message string) (*api.CustomResourceDefinition, error) {
	want := terminatingCondition(status, reason, message)
	if cur, ok := condition(crd, api.CRDTerminating); ok && cur.Status == status && cur.Reason == reason && cur.Message == message {
		return crd, nil
	}
	next := api.DeepCopy(crd)
	setCondition(next, want, c.now())
	out, err := c.cfg.CRDs.Mutate(ctx, "", crd.Name, crd.ResourceVersion, registry.WriteOptions{Subresource: "status"},
		func(cur api.Object) (api.Object, error) {
			cur.(*api.CustomResourceDefinition).Status = next.Status
			return cur, nil
		})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		c.trigger()
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("update the status of %s: %w", crd.Name, err)
	}
	return out.(*api.CustomResourceDefinition), nil
}

// cleanupPageSize bounds the objects read from etcd at once by cleanup.
const cleanupPageSize = 500

// deleteStored deletes every object stored for crd, of every version, and
// returns how many are left (those with finalizers, or created meanwhile).
func (c *Controller) deleteStored(ctx context.Context, crd *api.CustomResourceDefinition) (int, error) {
	st, err := c.storedObjects(crd)
	if err != nil {
		return 0, fmt.Errorf("could not list instances: %w", err)
	}
	var errs []error
	_, err = forEachStored(ctx, st, func(o api.Object) {
		m := o.GetObjectMeta()
		if _, _, err := st.Delete(ctx, m.Namespace, m.Name, &api.DeleteOptions{}, false); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	})
	if err != nil {
		return 0, fmt.Errorf("could not list instances: %w", err)
	}
	if err := errors.Join(errs...); err != nil {
		return 0, fmt.Errorf("could not issue all deletes: %w", err)
	}
	left, err := forEachStored(ctx, st, func(api.Object) {})
	if err != nil {
		return 0, fmt.Errorf("could not confirm zero CustomResources remaining: %w", err)
	}
	return left, nil
}

// forEachStored calls f on every object of st, read from etcd page by
// page (not from a watch cache, which st need not run), and returns their
// number.
func forEachStored(ctx context.Context, st *registry.Store, f func(api.Object)) (int, error) {
	n := 0
	opts := registry.ListOptions{Limit: cleanupPageSize}
	for {
		page, err := st.List(ctx, "", opts)
		if err != nil {
			return n, err
		}
		for _, it := range page.Items {
			f(it.Object)
			n++
		}
		if page.Continue == "" {
			return n, nil
		}
		opts.Continue = page.Continue
	}
}

// storedObjects is a store of crd's storage version, for its clean-up:
// its watch cache is not run, it reads etcd.
func (c *Controller) storedObjects(crd *api.CustomResourceDefinition) (*registry.Store, error) {
	v1, err := toV1(crd)
	if err != nil {
		return nil, err
	}
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(v1)
	name := storageVersion(v1)
	for i := range v1.Spec.Versions {
		if v := &v1.Spec.Versions[i]; v.Name == name {
			cfg, err := c.storeConfig(v1, v)
			if err != nil {
				return nil, err
			}
			return registry.NewStore(cfg), nil
		}
	}
	return nil, fmt.Errorf("no storage version")
}

// stopAll stops every served version's watch cache.
func (c *Controller) stopAll() {
	c.mu.Lock()
	all := c.serving
	c.serving = map[string]*serving{}
	c.publishLocked()
	c.mu.Unlock()
	for _, sv := range all {
		sv.stop()
		sv.done.Wait()
	}
}
