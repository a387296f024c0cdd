package openapi

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
)

// Definition name prefixes, as Kubernetes spells them.
const (
	metaPrefix      = "io.k8s.apimachinery.pkg.apis.meta.v1"
	quantityName    = "io.k8s.apimachinery.pkg.api.resource.Quantity"
	intOrStringName = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
	timeName        = metaPrefix + ".Time"
	microTimeName   = metaPrefix + ".MicroTime"
	fieldsV1Name    = metaPrefix + ".FieldsV1"
	patchName       = metaPrefix + ".Patch"
	statusName      = metaPrefix + ".Status"
	deleteOptsName  = metaPrefix + ".DeleteOptions"
	watchEventName  = metaPrefix + ".WatchEvent"
)

var (
	apiPkg          = reflect.TypeFor[api.TypeMeta]().PkgPath()
	apiTimeType     = reflect.TypeFor[api.Time]()
	apiMicroType    = reflect.TypeFor[api.MicroTime]()
	fieldsV1Type    = reflect.TypeFor[api.FieldsV1]()
	durationType    = reflect.TypeFor[api.Duration]()
	intOrStringType = reflect.TypeFor[api.IntOrString]()
	quantityType    = reflect.TypeFor[resource.Quantity]()
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
	goTimeType      = reflect.TypeFor[time.Time]()
	jsonMarshaler   = reflect.TypeFor[json.Marshaler]()
	textMarshaler   = reflect.TypeFor[encoding.TextMarshaler]()
)

// metaNames are the api types Kubernetes declares in apimachinery's meta/v1
// rather than in an API group.
var metaNames = map[reflect.Type]string{
	reflect.TypeFor[api.ObjectMeta]():               metaPrefix + ".ObjectMeta",
	reflect.TypeFor[api.ListMeta]():                 metaPrefix + ".ListMeta",
	reflect.TypeFor[api.OwnerReference]():           metaPrefix + ".OwnerReference",
	reflect.TypeFor[api.ManagedFieldsEntry]():       metaPrefix + ".ManagedFieldsEntry",
	reflect.TypeFor[api.Status]():                   statusName,
	reflect.TypeFor[api.StatusDetails]():            metaPrefix + ".StatusDetails",
	reflect.TypeFor[api.StatusCause]():              metaPrefix + ".StatusCause",
	reflect.TypeFor[api.DeleteOptions]():            deleteOptsName,
	reflect.TypeFor[api.Preconditions]():            metaPrefix + ".Preconditions",
	reflect.TypeFor[api.LabelSelector]():            metaPrefix + ".LabelSelector",
	reflect.TypeFor[api.LabelSelectorRequirement](): metaPrefix + ".LabelSelectorRequirement",
	reflect.TypeFor[api.Condition]():                metaPrefix + ".Condition",
	reflect.TypeFor[api.WatchEvent]():               watchEventName,
	reflect.TypeFor[api.GroupResource]():            metaPrefix + ".GroupResource",
}

// coreEntryTypes are core/v1 types that other groups embed (a Deployment's
// pod template, an EndpointSlice's targetRef, a StatefulSet's claim
// templates): Kubernetes names them io.k8s.api.core.v1.* whoever reaches them
// first. Types below them inherit the core prefix from their parent.
var coreEntryTypes = map[string]bool{
	"PodTemplateSpec":           true,
	"ObjectReference":           true,
	"LocalObjectReference":      true,
	"TypedLocalObjectReference": true,
	"PersistentVolumeClaim":     true,
	"NodeSelector":              true,
	"Toleration":                true,
	"TopologySelectorTerm":      true,
	"EventSource":               true,
	"ResourceRequirements":      true,
}

// renamedTypes are api types whose Go name differs from Kubernetes' because
// package api holds every group in one namespace.
var renamedTypes = map[string]string{
	"EndpointSlicePort":                     "io.k8s.api.discovery.v1.EndpointPort",
	"EventV1":                               "io.k8s.api.events.v1.Event",
	"HorizontalPodAutoscalerSpecV1":         "io.k8s.api.autoscaling.v1.HorizontalPodAutoscalerSpec",
	"HorizontalPodAutoscalerStatusV1":       "io.k8s.api.autoscaling.v1.HorizontalPodAutoscalerStatus",
	"CrossVersionObjectReferenceV1":         "io.k8s.api.autoscaling.v1.CrossVersionObjectReference",
	"CSITokenRequest":                       "io.k8s.api.storage.v1.TokenRequest",
	"CRDWebhookClientConfig":                "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.WebhookClientConfig",
	"CRDServiceReference":                   "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.ServiceReference",
	"APIServiceReference":                   "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.ServiceReference",
	"FlowSchemaSubject":                     "io.k8s.api.flowcontrol.v1.Subject",
	"ContainerResourceClaim":                "io.k8s.api.core.v1.ResourceClaim",
	"WorkloadPodGroupSchedulingPolicy":      "io.k8s.api.scheduling.v1alpha3.WorkloadPodGroupSchedulingPolicy",
	"WorkloadPodGroupBasicSchedulingPolicy": "io.k8s.api.scheduling.v1alpha3.WorkloadPodGroupBasicSchedulingPolicy",
	"WorkloadPodGroupGangSchedulingPolicy":  "io.k8s.api.scheduling.v1alpha3.WorkloadPodGroupGangSchedulingPolicy",
	"WorkloadPodGroupSchedulingConstraints": "io.k8s.api.scheduling.v1alpha3.WorkloadPodGroupSchedulingConstraints",
	"WorkloadTopologyConstraint":            "io.k8s.api.scheduling.v1alpha3.TopologyConstraint",
	"WorkloadPodGroupDisruptionMode":        "io.k8s.api.scheduling.v1alpha3.WorkloadPodGroupDisruptionMode",
	"WorkloadPodGroupSingleDisruptionMode":  "io.k8s.api.scheduling.v1alpha3.WorkloadPodGroupSingleDisruptionMode",
	"WorkloadPodGroupAllDisruptionMode":     "io.k8s.api.scheduling.v1alpha3.WorkloadPodGroupAllDisruptionMode",
	"WorkloadPodGroupResourceClaim":         "io.k8s.api.scheduling.v1alpha3.WorkloadPodGroupResourceClaim",
}

// optionalScalars are the fields, by api type, that are always written but
// that Kubernetes marks +optional rather than required.
var optionalScalars = map[string][]string{
	"Event":                                  {"reportingComponent", "reportingInstance"},
	"DeploymentCondition":                    {"type", "status"},
	"ReplicaSetCondition":                    {"type", "status"},
	"PodFailurePolicyOnPodConditionsPattern": {"status"},
	"NodeRuntimeHandler":                     {"name"},
	"StatefulSetOrdinals":                    {"start"},
	"StatefulSetSpec":                        {"serviceName"},
	"StatefulSetStatus":                      {"availableReplicas"},
	"ControllerRevision":                     {"revision"},
	"RoleRef":                                {"apiGroup"},
	"PodDisruptionBudgetStatus":              {"disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"},
	"StatefulSetCondition":                   {"type", "status"},
	"DaemonSetCondition":                     {"type", "status"},
	"FlowSchemaSpec":                         {"matchingPrecedence"},
	"QueuingConfiguration":                   {"queues", "handSize", "queueLengthLimit"},
	"PriorityClass":                          {"value"},
}

// keyDefaults are the defaults Kubernetes declares on list-map keys, by api
// type and field: server-side apply fills a key an item omits from them.
var keyDefaults = map[string]any{
	"ContainerPort.protocol": "TCP",
	"ServicePort.protocol":   "TCP",
}

// atomicLists are the merge-keyed lists, by api type and field, that
// Kubernetes nevertheless declares +listType=atomic.
var atomicLists = map[string]bool{
	"PodStatus.hostIPs":    true,
	"JobStatus.conditions": true,
}

// atomicStructs are the api types Kubernetes declares +structType=atomic
// (x-kubernetes-map-type: atomic): server-side apply and managedFields
// treat each as one value, owned and replaced whole (a label selector,
// a role reference, an env var's key reference).
var atomicStructs = map[string]bool{
	"ConfigMapKeySelector": true, "EndpointAddress": true, "EndpointPort": true,
	"FileKeySelector": true, "LabelSelector": true, "LocalObjectReference": true,
	"MatchResources": true, "NamedRuleWithOperations": true, "NodeSelector": true,
	"NodeSelectorTerm": true, "ObjectFieldSelector": true, "ObjectReference": true,
	"OwnerReference": true, "ParamKind": true, "ParamRef": true,
	"ResourceFieldSelector": true, "RoleRef": true, "ScopeSelector": true,
	"SecretKeySelector": true, "SecretReference": true, "ServiceBackendPort": true,
	"Subject": true, "TopologySelectorTerm": true, "TypedLocalObjectReference": true,
	"Variable": true, "EvictionResponder": true, "CrossVersionObjectReferenceV1": true,
	"EndpointSlicePort": true,
}

// atomicMaps are the map fields, by api type and field, Kubernetes declares
// +mapType=atomic: a Service's or ReplicationController's selector, a
// pod's nodeSelector are owned and replaced whole.
var atomicMaps = map[string]bool{
	"PodSpec.nodeSelector":               true,
	"ReplicationControllerSpec.selector": true,
	"ServiceSpec.selector":               true,
	"Scheduling.nodeSelector":            true,
}

// mapLists are the lists, by api type and field, Kubernetes declares
// +listType=map with these keys though they have no strategic-merge key
// (CRDs take no strategic merge patch; newer fields have no patch tags).
var mapLists = map[string][]string{
	"CustomResourceDefinitionStatus.conditions":  {"type"},
	"ResourceRequirements.claims":                {"name"},
	"PodStatus.volumeHealth":                     {"name"},
	"ResourceStatus.resources":                   {"resourceID"},
	"ValidatingAdmissionPolicyStatus.conditions": {"type"},
	"CertificateSigningRequestStatus.conditions": {"type"},
}

// setLists are the lists of scalars, by api type and field, Kubernetes
// declares +listType=set without a strategic-merge strategy: server-side
// apply owns and merges their values one by one.
var setLists = map[string]bool{
	"ContainerRestartRuleOnExitCodes.values":                 true,
	"NodeAllocatableResourceClaimStatus.containers":          true,
	"NodePodPreemptionPolicy.disableResizePreemption":        true,
	"VolumeMount.bindMountOptions":                           true,
	"ValidatingAdmissionPolicyBindingSpec.validationActions": true,
	"PodFailurePolicyOnExitCodesRequirement.values":          true,
	"UncountedTerminatedPods.failed":                         true,
	"UncountedTerminatedPods.succeeded":                      true,
	"Endpoint.addresses":                                     true,
	"NonResourcePolicyRule.nonResourceURLs":                  true,
	"NonResourcePolicyRule.verbs":                            true,
	"ResourcePolicyRule.apiGroups":                           true,
	"ResourcePolicyRule.namespaces":                          true,
	"ResourcePolicyRule.resources":                           true,
	"ResourcePolicyRule.verbs":                               true,
	"ResourceSliceSpec.skipNodeOperations":                   true,
	"CSIDriverSpec.volumeLifecycleModes":                     true,
}

// multiKeyLists are the list-map keys of the lists whose items Kubernetes
// identifies by more than their patch merge key (ports are unique per
// protocol), keyed by that merge key. Keys the item type lacks are dropped.
var multiKeyLists = map[string][]string{
	"containerPort": {"containerPort", "protocol"},
	"port":          {"port", "protocol"},
	"topologyKey":   {"topologyKey", "whenUnsatisfiable"},
	"status":        {"status", "reason"},
}

// patchSchema answers which strategic-merge metadata a list field of one kind
// has; api/patch's KubernetesSchema(kind) provides it. path is the field's
// JSON path from the object root ("spec", "containers").
type patchSchema interface {
	Lookup(path []string) (mergeKey, strategy string)
}

// builder turns Go types into schemas of one dialect, collecting the named
// definitions it reaches.
type builder struct {
	d      dialect
	defs   map[string]*schema
	nameOf map[reflect.Type]string
	typeOf map[string]reflect.Type
	// patchFor gives a kind's patch metadata; nil, or a nil result, means none.
	patchFor func(kind string) patchSchema
}

func newBuilder(d dialect, patchFor func(kind string) patchSchema) *builder {
	return &builder{
		d: d, defs: map[string]*schema{}, nameOf: map[reflect.Type]string{},
		typeOf: map[string]reflect.Type{}, patchFor: patchFor,
	}
}

// walk is where in an object the builder is: the definition prefix new
// types get, the kind's patch metadata and the JSON path from the root.
type walk struct {
	prefix string
	patch  patchSchema
	path   []string
}

func (w walk) child(name string) walk {
	w.path = append(slices.Clip(w.path), name)
	return w
}

// root starts a walk at a top-level kind of the definition prefix.
func (b *builder) root(prefix, kind string) walk {
	w := walk{prefix: prefix}
	if b.patchFor != nil {
		w.patch = b.patchFor(kind)
	}
	return w
}

// schemaFor returns the schema of a value of type t: a $ref for named
// structs (adding their definition), an inline schema otherwise.
func (b *builder) schemaFor(t reflect.Type, w walk) (*schema, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == apiTimeType:
		return b.special(timeName), nil
	case t == apiMicroType:
		return b.special(microTimeName), nil
	case t == fieldsV1Type:
		return b.special(fieldsV1Name), nil
	case t == intOrStringType:
		return b.special(intOrStringName), nil
	case t == quantityType:
		return b.special(quantityName), nil
	case t == durationType:
		return &schema{Type: "string"}, nil
	case t == rawMessageType:
		return &schema{Type: "object", PreserveUnknown: true}, nil
	case t == goTimeType:
		return &schema{Type: "string", Format: "date-time"}, nil
	case implements(t, jsonMarshaler):
		return nil, fmt.Errorf("type %s has its own JSON encoding, which the OpenAPI generator does not know", t)
	case implements(t, textMarshaler):
		return &schema{Type: "string"}, nil
	}
	switch t.Kind() {
	case reflect.Bool:
		return &schema{Type: "boolean"}, nil
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Uint8, reflect.Uint16:
		return &schema{Type: "integer", Format: "int32"}, nil
	case reflect.Int, reflect.Int64, reflect.Uint, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return &schema{Type: "integer", Format: "int64"}, nil
	case reflect.Float32:
		return &schema{Type: "number", Format: "float"}, nil
	case reflect.Float64:
		return &schema{Type: "number", Format: "double"}, nil
	case reflect.String:
		return &schema{Type: "string"}, nil
	case reflect.Slice, reflect.Array:
		// encoding/json writes byte slices (not arrays) as base64.
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 && !implements(t.Elem(), jsonMarshaler) && !implements(t.Elem(), textMarshaler) {
			return &schema{Type: "string", Format: "byte"}, nil
		}
		items, err := b.schemaFor(t.Elem(), w)
		if err != nil {
			return nil, err
		}
		return &schema{Type: "array", Items: items}, nil
	case reflect.Map:
		switch k := t.Key(); {
		case k.Kind() == reflect.String, implements(k, textMarshaler):
		case k.Kind() >= reflect.Int && k.Kind() <= reflect.Uintptr:
		default:
			return nil, fmt.Errorf("type %s: map key %s cannot be encoded as JSON", t, k)
		}
		values, err := b.schemaFor(t.Elem(), w)
		if err != nil {
			return nil, err
		}
		return &schema{Type: "object", AdditionalProperties: values}, nil
	case reflect.Interface:
		// Any JSON value.
		return &schema{PreserveUnknown: true}, nil
	case reflect.Struct:
		if t.Name() == "" {
			return b.structSchema(t, w)
		}
		return b.definition(t, w)
	}
	return nil, fmt.Errorf("type %s (%s) cannot be encoded as JSON", t, t.Kind())
}

func implements(t, iface reflect.Type) bool {
	return t.Implements(iface) || (t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(iface))
}

// special adds the definition of one of the custom-JSON meta types and
// returns a reference to it.
func (b *builder) special(name string) *schema {
	if _, ok := b.defs[name]; !ok {
		var s *schema
		switch name {
		case timeName:
			s = &schema{Type: "string", Format: "date-time",
				Description: "Time is a wrapper around time.Time which supports correct marshaling to YAML and JSON, as an RFC 3339 date-time with second precision."}
		case fieldsV1Name:
			s = &schema{Type: "object",
				Description: "FieldsV1 stores a set of fields in a data structure like a Trie, in JSON format."}
		case microTimeName:
			s = &schema{Type: "string", Format: "date-time",
				Description: "MicroTime is version of Time with microsecond level precision."}
		case intOrStringName:
			s = &schema{Format: "int-or-string",
				Description: "IntOrString is a type that can hold an int32 or a string. In JSON or YAML it is the inner value."}
			if b.d == v3 {
				s.OneOf = []*schema{{Type: "integer"}, {Type: "string"}}
				s.IntOrString = true
			} else {
				s.Type = "string"
			}
		case quantityName:
			s = &schema{Description: "Quantity is a fixed-point representation of a number, written as a string such as \"100m\", \"1.5Gi\" or \"2\"."}
			if b.d == v3 {
				s.OneOf = []*schema{{Type: "string"}, {Type: "number"}}
			} else {
				s.Type = "string"
			}
		}
		b.defs[name] = s
	}
	return b.d.ref(name)
}

// definition adds the named struct type t (once) and returns a $ref to it.
func (b *builder) definition(t reflect.Type, w walk) (*schema, error) {
	if name, ok := b.nameOf[t]; ok {
		return b.d.ref(name), nil
	}
	name, err := b.defName(t, w.prefix)
	if err != nil {
		return nil, err
	}
	return b.define(t, w, name)
}

// kindDefinition adds the struct type of a top-level kind, named after the
// kind unless something reached it before.
func (b *builder) kindDefinition(t reflect.Type, w walk, kind string) (*schema, error) {
	if name, ok := b.nameOf[t]; ok {
		return b.d.ref(name), nil
	}
	if _, meta := metaNames[t]; meta {
		return b.definition(t, w)
	}
	return b.define(t, w, w.prefix+"."+kind)
}

// define adds the struct type t as the definition name.
func (b *builder) define(t reflect.Type, w walk, name string) (*schema, error) {
	if other, taken := b.typeOf[name]; taken && other != t {
		return nil, fmt.Errorf("types %s and %s both map to the definition %s", other, t, name)
	}
	b.nameOf[t], b.typeOf[name] = name, t
	// A placeholder first, so recursive types terminate.
	b.defs[name] = &schema{}
	w.prefix = name[:strings.LastIndexByte(name, '.')]
	s, err := b.structSchema(t, w)
	if err != nil {
		return nil, err
	}
	b.defs[name] = s
	return b.d.ref(name), nil
}

// defName is the Kubernetes definition name of the struct type t reached
// under the given prefix.
func (b *builder) defName(t reflect.Type, prefix string) (string, error) {
	if n, ok := metaNames[t]; ok {
		return n, nil
	}
	name := t.Name()
	if i := strings.IndexByte(name, '['); i >= 0 {
		// api.List[T] is T's list kind ("PodList"), beside T.
		items, ok := t.FieldByName("Items")
		if name[:i] != "List" || t.PkgPath() != apiPkg || !ok || items.Type.Kind() != reflect.Slice {
			return "", fmt.Errorf("generic type %s has no definition name", t)
		}
		it := items.Type.Elem()
		itemName, err := b.defName(it, prefix)
		if err != nil {
			return "", err
		}
		if n, ok := b.nameOf[it]; ok {
			itemName = n
		}
		return itemName + "List", nil
	}
	if n, ok := renamedTypes[name]; ok && t.PkgPath() == apiPkg {
		return n, nil
	}
	if t.PkgPath() == apiPkg && coreEntryTypes[name] {
		return "io.k8s.api.core.v1." + name, nil
	}
	return prefix + "." + name, nil
}

// structSchema is the object schema of struct t: its JSON fields as
// properties.
func (b *builder) structSchema(t reflect.Type, w walk) (*schema, error) {
	s := &schema{Type: "object", Properties: map[string]*schema{}}
	for _, f := range jsonFields(t) {
		fw := w.child(f.name)
		p, err := b.schemaFor(f.typ, fw)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", t, f.name, err)
		}
		if f.asString {
			switch p.Type {
			case "integer", "number", "boolean":
				p = &schema{Type: "string"}
			}
		}
		if p.Type == "array" {
			b.listExtensions(p, fw, t.PkgPath() == apiPkg && atomicLists[t.Name()+"."+f.name])
			if keys, ok := mapLists[t.Name()+"."+f.name]; ok && t.PkgPath() == apiPkg {
				p.ListType, p.ListMapKeys = "map", keys
			}
			if setLists[t.Name()+"."+f.name] && t.PkgPath() == apiPkg {
				p.ListType = "set"
			}
		}
		if t.PkgPath() == apiPkg && atomicMaps[t.Name()+"."+f.name] {
			p.MapType = "atomic"
		}
		if d, ok := keyDefaults[t.Name()+"."+f.name]; ok && t.PkgPath() == apiPkg {
			p.Default = d
		}
		s.Properties[f.name] = p
		if f.required() && !(t.PkgPath() == apiPkg && slices.Contains(optionalScalars[t.Name()], f.name)) {
			s.Required = append(s.Required, f.name)
		}
	}
	if len(s.Properties) == 0 {
		s.Properties = nil
	}
	if t.PkgPath() == apiPkg && atomicStructs[t.Name()] {
		s.MapType = "atomic"
	}
	slices.Sort(s.Required)
	return s, nil
}

// listExtensions marks a list field with its strategic-merge metadata and,
// from it, its server-side-apply list type (atomic if Kubernetes says so
// against the merge key).
func (b *builder) listExtensions(p *schema, w walk, atomic bool) {
	if w.patch == nil {
		return
	}
	key, strategy := w.patch.Lookup(w.path)
	p.PatchMergeKey, p.PatchStrategy = key, strategy
	if atomic {
		p.ListType = "atomic"
		return
	}
	if !strings.Contains(strategy, "merge") {
		return
	}
	if key == "" {
		if p.Items != nil && p.Items.Ref == "" && p.Items.Type != "object" && p.Items.Type != "array" {
			p.ListType = "set"
		}
		return
	}
	p.ListType = "map"
	p.ListMapKeys = []string{key}
	if keys, ok := multiKeyLists[key]; ok && p.Items != nil {
		if item := b.defs[strings.TrimPrefix(p.Items.Ref, b.d.refPrefix())]; item != nil {
			p.ListMapKeys = nil
			for _, k := range keys {
				if _, ok := item.Properties[k]; ok {
					p.ListMapKeys = append(p.ListMapKeys, k)
				}
			}
		}
	}
}

// jsonField is one field as encoding/json sees it.
type jsonField struct {
	name     string
	typ      reflect.Type
	omit     bool // omitempty or omitzero
	asString bool // the ",string" option
	tagged   bool
	depth    int
}

// required reports whether Kubernetes would mark the field required: by its
// convention, a scalar field that is always written.
func (f jsonField) required() bool {
	if f.omit {
		return false
	}
	switch f.typ.Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return !implements(f.typ, jsonMarshaler)
	}
	return false
}

// jsonFields lists the fields encoding/json writes for struct t: exported
// fields by their json names, embedded untagged structs inlined, and among
// fields of one name the shallowest (then the tagged) one, none if still
// ambiguous.
func jsonFields(t reflect.Type) []jsonField {
	var all []jsonField
	collectFields(t, 0, map[reflect.Type]bool{}, &all)
	byName := map[string][]jsonField{}
	var order []string
	for _, f := range all {
		if _, ok := byName[f.name]; !ok {
			order = append(order, f.name)
		}
		byName[f.name] = append(byName[f.name], f)
	}
	out := make([]jsonField, 0, len(order))
	for _, n := range order {
		fs := byName[n]
		minDepth := fs[0].depth
		for _, f := range fs {
			minDepth = min(minDepth, f.depth)
		}
		var top, tagged []jsonField
		for _, f := range fs {
			if f.depth == minDepth {
				top = append(top, f)
				if f.tagged {
					tagged = append(tagged, f)
				}
			}
		}
		switch {
		case len(top) == 1:
			out = append(out, top[0])
		case len(tagged) == 1:
			out = append(out, tagged[0])
		}
	}
	return out
}

func collectFields(t reflect.Type, depth int, seen map[reflect.Type]bool, out *[]jsonField) {
	if seen[t] {
		return
	}
	seen[t] = true
	defer delete(seen, t)
	for i := range t.NumField() {
		f := t.Field(i)
		ft := f.Type
		if f.Anonymous {
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if !f.IsExported() && ft.Kind() != reflect.Struct {
				continue
			}
		} else if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" && f.Anonymous && ft.Kind() == reflect.Struct {
			collectFields(ft, depth+1, seen, out)
			continue
		}
		jf := jsonField{name: name, typ: f.Type, depth: depth, tagged: name != ""}
		if name == "" {
			jf.name = f.Name
		}
		for _, o := range strings.Split(opts, ",") {
			switch o {
			case "omitempty", "omitzero":
				jf.omit = true
			case "string":
				jf.asString = true
			}
		}
		*out = append(*out, jf)
	}
}
