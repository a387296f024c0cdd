package validation

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/api/naming"
)

// MaxSecretSize bounds the data of a Secret or ConfigMap (1 MiB).
const MaxSecretSize = 1 * 1024 * 1024

// ValidateNamespace checks a namespace: its name is a DNS label and its
// spec finalizers are valid finalizer names.
func ValidateNamespace(ns *api.Namespace) field.ErrorList {
	errs := ValidateObjectMeta(&ns.ObjectMeta, false, naming.NameIsDNSLabel, field.NewPath("metadata"))
	return append(errs, validateNamespaceFinalizers(ns.Spec.Finalizers)...)
}

func validateNamespaceFinalizers(fs []api.FinalizerName) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("spec", "finalizers")
	for i, f := range fs {
		for _, msg := range naming.IsQualifiedName(string(f)) {
			errs = append(errs, field.Invalid(p.Index(i), string(f), msg))
		}
		errs = append(errs, validateKubeFinalizerName(string(f), p.Index(i))...)
	}
	return errs
}

// ValidateNamespaceUpdate checks a namespace update. Kubernetes ignores
// spec and status changes here (they go through namespaces/finalize and
// namespaces/status); the apiserver is expected to keep the stored ones.
func ValidateNamespaceUpdate(ns, old *api.Namespace) field.ErrorList {
	return ValidateObjectMetaUpdate(&ns.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
}

// ValidateNamespaceStatusUpdate checks a write to namespaces/status: the
// phase is Active until deletion starts and Terminating after.
func ValidateNamespaceStatusUpdate(ns, old *api.Namespace) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&ns.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	p := field.NewPath("status", "phase")
	if ns.DeletionTimestamp == nil {
		if ns.Status.Phase != api.NamespaceActive {
			errs = append(errs, field.Invalid(p, string(ns.Status.Phase), "may only be 'Active' if `deletionTimestamp` is empty"))
		}
	} else if ns.Status.Phase != api.NamespaceTerminating {
		errs = append(errs, field.Invalid(p, string(ns.Status.Phase), "may only be 'Terminating' if `deletionTimestamp` is not empty"))
	}
	return errs
}

// ValidateNamespaceFinalizeUpdate checks a write to namespaces/finalize.
func ValidateNamespaceFinalizeUpdate(ns, old *api.Namespace) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&ns.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(errs, validateNamespaceFinalizers(ns.Spec.Finalizers)...)
}

// ValidateConfigMap checks a config map: keys valid, no key in both data
// and binaryData, at most 1 MiB in total.
func ValidateConfigMap(cm *api.ConfigMap) field.ErrorList {
	errs := ValidateObjectMeta(&cm.ObjectMeta, true, naming.NameIsDNSSubdomain, field.NewPath("metadata"))
	total := 0
	for _, k := range slices.Sorted(maps.Keys(cm.Data)) {
		p := field.NewPath("data").Key(k)
		for _, msg := range naming.IsConfigMapKey(k) {
			errs = append(errs, field.Invalid(p, k, msg))
		}
		if _, dup := cm.BinaryData[k]; dup {
			errs = append(errs, field.Invalid(p, k, "duplicate of key present in binaryData"))
		}
		total += len(cm.Data[k])
	}
	for _, k := range slices.Sorted(maps.Keys(cm.BinaryData)) {
		for _, msg := range naming.IsConfigMapKey(k) {
			errs = append(errs, field.Invalid(field.NewPath("binaryData").Key(k), k, msg))
		}
		total += len(cm.BinaryData[k])
	}
	if total > MaxSecretSize {
		errs = append(errs, field.TooLong(field.NewPath(""), "", MaxSecretSize))
	}
	return errs
}

// ValidateConfigMapUpdate checks a config map update: an immutable config
// map keeps its data and stays immutable.
func ValidateConfigMapUpdate(cm, old *api.ConfigMap) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&cm.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	if old.Immutable != nil && *old.Immutable {
		errs = append(errs, immutableDataErrors(cm.Immutable, semanticEqual(cm.Data, old.Data))...)
		if !semanticEqual(cm.BinaryData, old.BinaryData) {
			errs = append(errs, field.Forbidden(field.NewPath("binaryData"), "field is immutable when `immutable` is set"))
		}
	}
	return append(errs, ValidateConfigMap(cm)...)
}

func immutableDataErrors(immutable *bool, dataEqual bool) field.ErrorList {
	var errs field.ErrorList
	if immutable == nil || !*immutable {
		errs = append(errs, field.Forbidden(field.NewPath("immutable"), "field is immutable when `immutable` is set"))
	}
	if !dataEqual {
		errs = append(errs, field.Forbidden(field.NewPath("data"), "field is immutable when `immutable` is set"))
	}
	return errs
}

// ValidateSecret checks a secret: keys valid, at most 1 MiB of data, and
// the keys its type requires. It expects stringData already merged into
// data (package defaults does that). Secret contents never appear in errors.
func ValidateSecret(s *api.Secret) field.ErrorList {
	errs := ValidateObjectMeta(&s.ObjectMeta, true, naming.NameIsDNSSubdomain, field.NewPath("metadata"))
	dataPath := field.NewPath("data")
	total := 0
	for _, k := range slices.Sorted(maps.Keys(s.Data)) {
		for _, msg := range naming.IsConfigMapKey(k) {
			errs = append(errs, field.Invalid(dataPath.Key(k), k, msg))
		}
		total += len(s.Data[k])
	}
	for _, k := range slices.Sorted(maps.Keys(s.StringData)) {
		for _, msg := range naming.IsConfigMapKey(k) {
			errs = append(errs, field.Invalid(field.NewPath("stringData").Key(k), k, msg))
		}
		total += len(s.StringData[k])
	}
	if total > MaxSecretSize {
		errs = append(errs, field.TooLong(dataPath, "", MaxSecretSize))
	}
	has := func(k string) bool {
		if _, ok := s.Data[k]; ok {
			return true
		}
		_, ok := s.StringData[k]
		return ok
	}
	value := func(k string) []byte {
		if v, ok := s.StringData[k]; ok {
			return []byte(v)
		}
		return s.Data[k]
	}
	const redacted = "<secret contents redacted>"
	switch s.Type {
	case api.SecretTypeServiceAccountToken:
		if s.Annotations[api.ServiceAccountNameKey] == "" {
			errs = append(errs, field.Required(field.NewPath("metadata", "annotations").Key(api.ServiceAccountNameKey), ""))
		}
	case api.SecretTypeDockercfg, api.SecretTypeDockerConfigJSON:
		key := api.DockerConfigKey
		if s.Type == api.SecretTypeDockerConfigJSON {
			key = api.DockerConfigJSONKey
		}
		if !has(key) {
			errs = append(errs, field.Required(dataPath.Key(key), ""))
			break
		}
		if err := json.Unmarshal(value(key), &map[string]any{}); err != nil {
			errs = append(errs, field.Invalid(dataPath.Key(key), redacted, err.Error()))
		}
	case api.SecretTypeBasicAuth:
		if !has(api.BasicAuthUsernameKey) && !has(api.BasicAuthPasswordKey) {
			errs = append(errs, field.Required(dataPath.Key(api.BasicAuthUsernameKey), ""),
				field.Required(dataPath.Key(api.BasicAuthPasswordKey), ""))
		}
	case api.SecretTypeSSHAuth:
		if len(value(api.SSHAuthPrivateKey)) == 0 {
			errs = append(errs, field.Required(dataPath.Key(api.SSHAuthPrivateKey), ""))
		}
	case api.SecretTypeTLS:
		if !has(api.TLSCertKey) {
			errs = append(errs, field.Required(dataPath.Key(api.TLSCertKey), ""))
		}
		if !has(api.TLSPrivateKeyKey) {
			errs = append(errs, field.Required(dataPath.Key(api.TLSPrivateKeyKey), ""))
		}
	}
	return errs
}

// ValidateSecretUpdate checks a secret update: the type never changes and
// an immutable secret keeps its data and stays immutable.
func ValidateSecretUpdate(s, old *api.Secret) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&s.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	errs = append(errs, validateImmutable(string(s.Type), string(old.Type), field.NewPath("type"))...)
	if old.Immutable != nil && *old.Immutable {
		errs = append(errs, immutableDataErrors(s.Immutable, semanticEqual(s.Data, old.Data) && len(s.StringData) == 0)...)
	}
	return append(errs, ValidateSecret(s)...)
}

// Limits of event fields.
const (
	ReportingInstanceLengthLimit = 128
	ActionLengthLimit            = 128
	ReasonLengthLimit            = 128
	NoteLengthLimit              = 1024
)

// ValidateEvent checks a core/v1 event the way Kubernetes does for that API
// version: the event's namespace matches the involved object's, and events
// with an eventTime carry the newer reporting fields.
func ValidateEvent(e *api.Event) field.ErrorList {
	errs := ValidateObjectMeta(&e.ObjectMeta, true, naming.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(errs, validateEventFields(e)...)
}

func validateEventFields(e *api.Event) field.ErrorList {
	var errs field.ErrorList
	nsPath := field.NewPath("involvedObject", "namespace")
	if e.EventTime.IsZero() {
		if e.InvolvedObject.Namespace == "" {
			if e.Namespace != "" && e.Namespace != api.NamespaceDefault {
				errs = append(errs, field.Invalid(nsPath, e.InvolvedObject.Namespace, "does not match event.namespace"))
			}
		} else if e.Namespace != e.InvolvedObject.Namespace {
			errs = append(errs, field.Invalid(nsPath, e.InvolvedObject.Namespace, "does not match event.namespace"))
		}
		return errs
	}
	if e.InvolvedObject.Namespace == "" && e.Namespace != api.NamespaceDefault && e.Namespace != api.NamespaceSystem {
		errs = append(errs, field.Invalid(nsPath, e.InvolvedObject.Namespace, "does not match event.namespace"))
	}
	if e.ReportingController == "" {
		errs = append(errs, field.Required(field.NewPath("reportingController"), ""))
	}
	for _, msg := range naming.IsQualifiedName(e.ReportingController) {
		errs = append(errs, field.Invalid(field.NewPath("reportingController"), e.ReportingController, msg))
	}
	for _, f := range []struct {
		name, value string
		limit       int
		required    bool
	}{
		{"reportingInstance", e.ReportingInstance, ReportingInstanceLengthLimit, true},
		{"action", e.Action, ActionLengthLimit, true},
		{"reason", e.Reason, ReasonLengthLimit, true},
		{"message", e.Message, NoteLengthLimit, false},
	} {
		if f.required && f.value == "" {
			errs = append(errs, field.Required(field.NewPath(f.name), ""))
		}
		if len(f.value) > f.limit {
			errs = append(errs, field.Invalid(field.NewPath(f.name), "", fmt.Sprintf("can have at most %v characters", f.limit)))
		}
	}
	return errs
}

// ValidateEventV1Create checks an event created through events.k8s.io/v1,
// converted to a core Event, as Kubernetes' ValidateEventCreate does for
// that API: the legacy rules, then the strict ones (an eventTime, a type,
// a series of at least 2, no legacy counters or source).
func ValidateEventV1Create(e *api.Event) field.ErrorList {
	errs := ValidateEvent(e)
	if s := e.Series; s != nil {
		if s.Count < 2 {
			errs = append(errs, field.Invalid(field.NewPath("series.count"), "", "should be at least 2"))
		}
		if s.LastObservedTime.IsZero() {
			errs = append(errs, field.Required(field.NewPath("series.lastObservedTime"), ""))
		}
	}
	if e.EventTime.IsZero() {
		errs = append(errs, field.Required(field.NewPath("eventTime"), ""))
	}
	if e.Type != api.EventTypeNormal && e.Type != api.EventTypeWarning {
		errs = append(errs, field.Invalid(field.NewPath("type"), "", fmt.Sprintf("has invalid value: %v", e.Type)))
	}
	if !e.FirstTimestamp.IsZero() {
		errs = append(errs, field.Invalid(field.NewPath("firstTimestamp"), "", "needs to be unset"))
	}
	if !e.LastTimestamp.IsZero() {
		errs = append(errs, field.Invalid(field.NewPath("lastTimestamp"), "", "needs to be unset"))
	}
	if e.Count != 0 {
		errs = append(errs, field.Invalid(field.NewPath("count"), "", "needs to be unset"))
	}
	if e.Source.Component != "" || e.Source.Host != "" {
		errs = append(errs, field.Invalid(field.NewPath("source"), "", "needs to be unset"))
	}
	return errs
}

// ValidateEventUpdate checks an event update.
func ValidateEventUpdate(e, old *api.Event) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&e.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(errs, validateEventFields(e)...)
}

// ValidateEndpoints checks endpoints: each subset has addresses, addresses
// are valid non-special IPs, ports are valid (and named when several).
func ValidateEndpoints(e *api.Endpoints) field.ErrorList {
	errs := ValidateObjectMeta(&e.ObjectMeta, true, naming.NameIsDNSSubdomain, field.NewPath("metadata"))
	for i := range e.Subsets {
		ss := &e.Subsets[i]
		p := field.NewPath("subsets").Index(i)
		if len(ss.Addresses) == 0 && len(ss.NotReadyAddresses) == 0 {
			errs = append(errs, field.Required(p, "must specify `addresses` or `notReadyAddresses`"))
		}
		for j := range ss.Addresses {
			errs = append(errs, validateEndpointAddress(&ss.Addresses[j], p.Child("addresses").Index(j))...)
		}
		for j := range ss.NotReadyAddresses {
			errs = append(errs, validateEndpointAddress(&ss.NotReadyAddresses[j], p.Child("notReadyAddresses").Index(j))...)
		}
		for j, port := range ss.Ports {
			pp := p.Child("ports").Index(j)
			if len(ss.Ports) > 1 && port.Name == "" {
				errs = append(errs, field.Required(pp.Child("name"), ""))
			} else if port.Name != "" {
				errs = append(errs, validateDNS1123Label(port.Name, pp.Child("name"))...)
			}
			for _, msg := range naming.IsValidPortNum(int(port.Port)) {
				errs = append(errs, field.Invalid(pp.Child("port"), port.Port, msg))
			}
			errs = append(errs, validateProtocol(port.Protocol, pp.Child("protocol"))...)
			if port.AppProtocol != nil {
				errs = append(errs, validateQualifiedName(*port.AppProtocol, pp.Child("appProtocol"))...)
			}
		}
	}
	return errs
}

func validateEndpointAddress(a *api.EndpointAddress, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range naming.IsValidIPForLegacyField(a.IP, false) {
		errs = append(errs, field.Invalid(p.Child("ip"), a.IP, msg))
	}
	if a.Hostname != "" {
		errs = append(errs, validateDNS1123Label(a.Hostname, p.Child("hostname"))...)
	}
	if a.NodeName != nil {
		for _, msg := range naming.NameIsDNSSubdomain(*a.NodeName, false) {
			errs = append(errs, field.Invalid(p.Child("nodeName"), *a.NodeName, msg))
		}
	}
	return append(errs, validateNonSpecialIP(a.IP, p.Child("ip"))...)
}

// ValidateEndpointsUpdate checks an endpoints update.
func ValidateEndpointsUpdate(e, old *api.Endpoints) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&e.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(errs, ValidateEndpoints(e)...)
}
