package validation

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/api/naming"
)

// The kinds served for issue 25 are checked for their main rules with
// Kubernetes' messages (pkg/apis/{scheduling,node,networking}/validation
// of v1.37.2). FlowSchemas, PriorityLevelConfigurations,
// MutatingAdmissionPolicies and their bindings, NetworkPolicies and
// ClusterTrustBundles get their object metadata checked only: kube's
// deeper rules for them are not written yet.

// Kubernetes' priority bounds and the classes it reserves.
const (
	// HighestUserDefinablePriority is the highest value a PriorityClass
	// not named system-* may have.
	HighestUserDefinablePriority = 1000000000
	systemPriorityClassPrefix    = "system-"
)

// SystemPriorityClasses are the classes the apiserver creates at start,
// the only system-* names allowed, with these values.
var SystemPriorityClasses = []api.PriorityClass{
	{ObjectMeta: api.ObjectMeta{Name: "system-node-critical"}, Value: 2000001000,
		Description: "Used for system critical pods that must not be moved from their current node."},
	{ObjectMeta: api.ObjectMeta{Name: "system-cluster-critical"}, Value: 2000000000,
		Description: "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary."},
}

// validateBuiltinKinds checks a kind of issue 25 being created, or
// updated when old is not nil; ok is false for the other kinds.
func validateBuiltinKinds(obj, old api.Object) (errs field.ErrorList, ok bool) {
	switch o := obj.(type) {
	case *api.PriorityClass:
		errs = validatePriorityClass(o)
		if old != nil {
			o2 := old.(*api.PriorityClass)
			if o.Value != o2.Value {
				errs = append(errs, field.Forbidden(field.NewPath("value"), "may not be changed in an update."))
			}
			errs = append(errs, validateImmutable(o.PreemptionPolicy, o2.PreemptionPolicy, field.NewPath("preemptionPolicy"))...)
		}
	case *api.RuntimeClass:
		p := field.NewPath("handler")
		if o.Handler == "" {
			errs = append(errs, field.Required(p, ""))
		} else {
			for _, msg := range naming.NameIsDNSLabel(o.Handler, false) {
				errs = append(errs, field.Invalid(p, o.Handler, msg))
			}
		}
		// kube's declarative check of it prints no value.
		if old != nil && o.Handler != old.(*api.RuntimeClass).Handler {
			errs = append(errs, field.Invalid(p, (*string)(nil), fieldImmutableErrorMsg))
		}
	case *api.IngressClass:
		p := field.NewPath("spec", "controller")
		if old != nil {
			errs = append(errs, validateImmutable(o.Spec.Controller, old.(*api.IngressClass).Spec.Controller, p)...)
		}
		if len(o.Spec.Controller) > 250 {
			errs = append(errs, field.TooLong(p, "", 250))
		}
		errs = append(errs, domainPrefixedPath(p, o.Spec.Controller)...)
	case *api.Ingress:
		errs = validateIngressSpec(&o.Spec, field.NewPath("spec"))
	case *api.MutatingAdmissionPolicy:
		errs = validateMutatingAdmissionPolicy(&o.Spec, field.NewPath("spec"))
	case *api.MutatingAdmissionPolicyBinding:
		errs = validateMutatingAdmissionPolicyBinding(&o.Spec, field.NewPath("spec"))
	case *api.NetworkPolicy:
		errs = validateNetworkPolicySpec(&o.Spec, field.NewPath("spec"))
	case *api.FlowSchema:
		errs = validateFlowSchemaSpec(o.Name, &o.Spec, field.NewPath("spec"))
	case *api.PriorityLevelConfiguration:
		errs = validatePriorityLevelConfigurationSpec(o.Name, &o.Spec, field.NewPath("spec"))
	default:
		return nil, false
	}
	return errs, true
}

func validatePriorityClass(pc *api.PriorityClass) field.ErrorList {
	var errs field.ErrorList
	if strings.HasPrefix(pc.Name, systemPriorityClassPrefix) {
		if err := knownSystemPriorityClass(pc); err != nil {
			errs = append(errs, field.Forbidden(field.NewPath("metadata", "name"),
				"priority class names with '"+systemPriorityClassPrefix+"' prefix are reserved for system use only. error: "+err.Error()))
		}
	} else if pc.Value > HighestUserDefinablePriority {
		errs = append(errs, field.Forbidden(field.NewPath("value"), fmt.Sprintf("maximum allowed value of a user defined priority is %v", HighestUserDefinablePriority)))
	}
	if pc.PreemptionPolicy != nil {
		errs = append(errs, validatePreemptionPolicy(pc.PreemptionPolicy, field.NewPath("preemptionPolicy"))...)
	}
	return errs
}

// knownSystemPriorityClass is kube's IsKnownSystemPriorityClass.
func knownSystemPriorityClass(pc *api.PriorityClass) error {
	for _, s := range SystemPriorityClasses {
		if s.Name == pc.Name {
			if s.Value != pc.Value {
				return fmt.Errorf("value of %v PriorityClass must be %v", s.Name, s.Value)
			}
			if s.GlobalDefault != pc.GlobalDefault {
				return fmt.Errorf("globalDefault of %v PriorityClass must be %v", s.Name, s.GlobalDefault)
			}
			return nil
		}
	}
	return fmt.Errorf("%v is not a known system priority class", pc.Name)
}

func validatePreemptionPolicy(p *api.PreemptionPolicy, path *field.Path) field.ErrorList {
	switch *p {
	case api.PreemptLowerPriority, api.PreemptNever:
		return nil
	case "":
		return field.ErrorList{field.Required(path, "")}
	}
	return field.ErrorList{field.NotSupported(path, string(*p), []string{string(api.PreemptLowerPriority), string(api.PreemptNever)})}
}

// domainPrefixedPath is apimachinery's IsDomainPrefixedPath: a DNS
// subdomain, a slash, and a path.
func domainPrefixedPath(p *field.Path, dpPath string) field.ErrorList {
	if dpPath == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	segments := strings.SplitN(dpPath, "/", 2)
	if len(segments) != 2 || segments[0] == "" || segments[1] == "" {
		return field.ErrorList{field.Invalid(p, dpPath, "must be a domain-prefixed path (such as \"acme.io/foo\")")}
	}
	var errs field.ErrorList
	host, path := segments[0], segments[1]
	for _, msg := range naming.IsDNS1123Subdomain(host) {
		errs = append(errs, field.Invalid(p, host, msg))
	}
	for _, c := range path {
		if !strings.ContainsRune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=/%", c) {
			errs = append(errs, field.Invalid(p, path, "Invalid path"))
			break
		}
	}
	return errs
}

func validateIngressSpec(spec *api.IngressSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(spec.Rules) == 0 && spec.DefaultBackend == nil {
		// kube prints the empty rules as null.
		errs = append(errs, field.Invalid(p, (*string)(nil), "either `defaultBackend` or `rules` must be specified"))
	}
	if spec.DefaultBackend != nil {
		errs = append(errs, validateIngressBackend(spec.DefaultBackend, p.Child("defaultBackend"))...)
	}
	for i, r := range spec.Rules {
		rp := p.Child("rules").Index(i)
		if r.Host != "" {
			if net.ParseIP(r.Host) != nil {
				errs = append(errs, field.Invalid(rp.Child("host"), r.Host, "must be a DNS name, not an IP address"))
			}
			if !strings.Contains(r.Host, "*") {
				for _, msg := range naming.IsDNS1123Subdomain(r.Host) {
					errs = append(errs, field.Invalid(rp.Child("host"), r.Host, msg))
				}
			}
		}
		if r.HTTP == nil {
			continue
		}
		hp := rp.Child("http")
		if len(r.HTTP.Paths) == 0 {
			errs = append(errs, field.Required(hp.Child("paths"), ""))
		}
		for j := range r.HTTP.Paths {
			errs = append(errs, validateHTTPIngressPath(&r.HTTP.Paths[j], hp.Child("paths").Index(j))...)
		}
	}
	if spec.IngressClassName != nil {
		for _, msg := range naming.IsDNS1123Subdomain(*spec.IngressClassName) {
			errs = append(errs, field.Invalid(p.Child("ingressClassName"), *spec.IngressClassName, msg))
		}
	}
	return errs
}

func validateHTTPIngressPath(path *api.HTTPIngressPath, p *field.Path) field.ErrorList {
	if path.PathType == nil {
		return field.ErrorList{field.Required(p.Child("pathType"), "pathType must be specified")}
	}
	var errs field.ErrorList
	switch *path.PathType {
	case "Exact", "Prefix":
		if !strings.HasPrefix(path.Path, "/") {
			errs = append(errs, field.Invalid(p.Child("path"), path.Path, "must be an absolute path"))
		}
	case "ImplementationSpecific":
		if path.Path != "" && !strings.HasPrefix(path.Path, "/") {
			errs = append(errs, field.Invalid(p.Child("path"), path.Path, "must be an absolute path"))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("pathType"), *path.PathType, []string{"Exact", "ImplementationSpecific", "Prefix"}))
	}
	return append(errs, validateIngressBackend(&path.Backend, p.Child("backend"))...)
}

func validateIngressBackend(b *api.IngressBackend, p *field.Path) field.ErrorList {
	switch {
	case b.Resource != nil && b.Service != nil:
		return field.ErrorList{field.Invalid(p, "", "cannot set both resource and service backends")}
	case b.Service != nil:
		var errs field.ErrorList
		if b.Service.Name == "" {
			errs = append(errs, field.Required(p.Child("service", "name"), ""))
		} else {
			for _, msg := range naming.NameIsDNS1035Label(b.Service.Name, false) {
				errs = append(errs, field.Invalid(p.Child("service", "name"), b.Service.Name, msg))
			}
		}
		port := b.Service.Port
		switch {
		case port.Name != "" && port.Number != 0:
			errs = append(errs, field.Invalid(p, "", "cannot set both port name & port number"))
		case port.Name == "" && port.Number == 0:
			errs = append(errs, field.Required(p, "port name or number is required"))
		}
		return errs
	case b.Resource == nil:
		return field.ErrorList{field.Invalid(p, "", "resource or service backend is required")}
	}
	return nil
}

// mutatingOperations are the operations a mutating admission policy may
// match: kube's list (CONNECT included).
var mutatingOperations = []string{"*", "CONNECT", "CREATE", "UPDATE"}

func validateMutatingAdmissionPolicy(spec *api.MutatingAdmissionPolicySpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.FailurePolicy == nil {
		errs = append(errs, field.Required(p.Child("failurePolicy"), ""))
	} else if !slices.Contains(failurePolicies, string(*spec.FailurePolicy)) {
		errs = append(errs, field.NotSupported(p.Child("failurePolicy"), string(*spec.FailurePolicy), failurePolicies))
	}
	if spec.ParamKind != nil {
		errs = append(errs, validateParamKind(spec.ParamKind, p.Child("paramKind"))...)
	}
	if spec.MatchConstraints == nil {
		errs = append(errs, field.Required(p.Child("matchConstraints"), ""))
	} else {
		errs = append(errs, validateMatchResources(spec.MatchConstraints, p.Child("matchConstraints"))...)
		if len(spec.MatchConstraints.ResourceRules) == 0 {
			errs = append(errs, field.Required(p.Child("matchConstraints", "resourceRules"), ""))
		}
		errs = append(errs, mutatingRuleOperations(spec.MatchConstraints, p.Child("matchConstraints"))...)
	}
	errs = append(errs, validateMatchConditions(spec.MatchConditions, p.Child("matchConditions"))...)
	for i, v := range spec.Variables {
		vp := p.Child("variables").Index(i)
		if strings.TrimSpace(v.Name) == "" {
			errs = append(errs, field.Required(vp.Child("name"), "name is not specified"))
		} else if !isCELIdentifier(v.Name) {
			errs = append(errs, field.Invalid(vp.Child("name"), v.Name, "must be a valid CEL identifier"))
		}
		if strings.TrimSpace(v.Expression) == "" {
			errs = append(errs, field.Required(vp.Child("expression"), "expression is not specified"))
		}
	}
	if len(spec.Mutations) == 0 {
		errs = append(errs, field.Required(p.Child("mutations"), "mutations must contain at least one item"))
	}
	for i, m := range spec.Mutations {
		mp := p.Child("mutations").Index(i)
		switch m.PatchType {
		case "":
			errs = append(errs, field.Required(mp.Child("patchType"), ""))
		case "JSONPatch":
			if m.JSONPatch == nil {
				errs = append(errs, field.Required(mp.Child("jsonPatch"), "must be specified when patchType is JSONPatch"))
			}
			if m.ApplyConfiguration != nil {
				errs = append(errs, field.Invalid(mp.Child("applyConfiguration"), "{applyConfiguration}", "must not be specified when patchType is JSONPatch"))
			}
		case "ApplyConfiguration":
			if m.ApplyConfiguration == nil {
				errs = append(errs, field.Required(mp.Child("applyConfiguration"), "must be specified when patchType is ApplyConfiguration"))
			}
			if m.JSONPatch != nil {
				errs = append(errs, field.Invalid(mp.Child("jsonPatch"), "{jsonPatch}", "must not be specified when patchType is ApplyConfiguration"))
			}
		default:
			errs = append(errs, field.NotSupported(mp.Child("patchType"), string(m.PatchType), []string{"ApplyConfiguration", "JSONPatch"}))
		}
	}
	if spec.ReinvocationPolicy == "" {
		errs = append(errs, field.Required(p.Child("reinvocationPolicy"), ""))
	} else if !slices.Contains(reinvocations, string(spec.ReinvocationPolicy)) {
		errs = append(errs, field.NotSupported(p.Child("reinvocationPolicy"), string(spec.ReinvocationPolicy), reinvocations))
	}
	return errs
}

func validateMutatingAdmissionPolicyBinding(spec *api.MutatingAdmissionPolicyBindingSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.PolicyName == "" {
		errs = append(errs, field.Required(p.Child("policyName"), ""))
	} else {
		for _, msg := range naming.NameIsDNSSubdomain(spec.PolicyName, false) {
			errs = append(errs, field.Invalid(p.Child("policyName"), spec.PolicyName, msg))
		}
	}
	errs = append(errs, validateParamRef(spec.ParamRef, p.Child("paramRef"))...)
	errs = append(errs, validateMatchResources(spec.MatchResources, p.Child("matchResources"))...)
	if spec.MatchResources != nil {
		errs = append(errs, mutatingRuleOperations(spec.MatchResources, p.Child("matchResources"))...)
	}
	return errs
}

func mutatingRuleOperations(m *api.MatchResources, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, r := range m.ResourceRules {
		for _, op := range r.Operations {
			if !slices.Contains(mutatingOperations, string(op)) {
				errs = append(errs, field.NotSupported(p.Child("resourceRules", "operations"), string(op), mutatingOperations))
			}
		}
	}
	return errs
}

func validateNetworkPolicySpec(spec *api.NetworkPolicySpec, p *field.Path) field.ErrorList {
	errs := ValidateLabelSelector(&spec.PodSelector, LabelSelectorOptions{}, p.Child("podSelector"))
	rules := func(kind, peers string, n int, ports func(int) []api.NetworkPolicyPort, peer func(int) []api.NetworkPolicyPeer) {
		for i := range n {
			rp := p.Child(kind).Index(i)
			for j, port := range ports(i) {
				errs = append(errs, validateNetworkPolicyPort(&port, rp.Child("ports").Index(j))...)
			}
			for j, pe := range peer(i) {
				errs = append(errs, validateNetworkPolicyPeer(&pe, rp.Child(peers).Index(j))...)
			}
		}
	}
	rules("ingress", "from", len(spec.Ingress), func(i int) []api.NetworkPolicyPort { return spec.Ingress[i].Ports },
		func(i int) []api.NetworkPolicyPeer { return spec.Ingress[i].From })
	rules("egress", "to", len(spec.Egress), func(i int) []api.NetworkPolicyPort { return spec.Egress[i].Ports },
		func(i int) []api.NetworkPolicyPeer { return spec.Egress[i].To })
	if len(spec.PolicyTypes) > 2 {
		return append(errs, field.Invalid(p.Child("policyTypes"), asJSON(spec.PolicyTypes), "may not specify more than two policyTypes"))
	}
	for i, t := range spec.PolicyTypes {
		if t != "Ingress" && t != "Egress" {
			errs = append(errs, field.NotSupported(p.Child("policyTypes").Index(i), string(t), []string{"Ingress", "Egress"}))
		}
	}
	return errs
}

func validateNetworkPolicyPort(port *api.NetworkPolicyPort, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if pr := port.Protocol; pr != nil && *pr != api.ProtocolTCP && *pr != api.ProtocolUDP && *pr != api.ProtocolSCTP {
		errs = append(errs, field.NotSupported(p.Child("protocol"), string(*pr), []string{"TCP", "UDP", "SCTP"}))
	}
	switch {
	case port.Port == nil:
		if port.EndPort != nil {
			errs = append(errs, field.Invalid(p.Child("endPort"), *port.EndPort, "may not be specified when `port` is not specified"))
		}
	case port.Port.Type == api.Int:
		for _, msg := range naming.IsValidPortNum(int(port.Port.IntVal)) {
			errs = append(errs, field.Invalid(p.Child("port"), port.Port.IntVal, msg))
		}
		if port.EndPort != nil {
			if *port.EndPort < port.Port.IntVal {
				errs = append(errs, field.Invalid(p.Child("endPort"), *port.EndPort, "must be greater than or equal to `port`"))
			}
			for _, msg := range naming.IsValidPortNum(int(*port.EndPort)) {
				errs = append(errs, field.Invalid(p.Child("endPort"), *port.EndPort, msg))
			}
		}
	default:
		if port.EndPort != nil {
			errs = append(errs, field.Invalid(p.Child("endPort"), *port.EndPort, "may not be specified when `port` is non-numeric"))
		}
		for _, msg := range naming.IsValidPortName(port.Port.StrVal) {
			errs = append(errs, field.Invalid(p.Child("port"), port.Port.StrVal, msg))
		}
	}
	return errs
}

func validateNetworkPolicyPeer(peer *api.NetworkPolicyPeer, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	n := 0
	if peer.PodSelector != nil {
		n++
		errs = append(errs, ValidateLabelSelector(peer.PodSelector, LabelSelectorOptions{}, p.Child("podSelector"))...)
	}
	if peer.NamespaceSelector != nil {
		n++
		errs = append(errs, ValidateLabelSelector(peer.NamespaceSelector, LabelSelectorOptions{}, p.Child("namespaceSelector"))...)
	}
	if b := peer.IPBlock; b != nil {
		n++
		errs = append(errs, validateIPBlock(b, p.Child("ipBlock"))...)
	}
	switch {
	case n == 0:
		errs = append(errs, field.Required(p, "must specify a peer"))
	case n > 1 && peer.IPBlock != nil:
		errs = append(errs, field.Forbidden(p, "may not specify both ipBlock and another peer"))
	}
	return errs
}

func validateIPBlock(b *api.IPBlock, p *field.Path) field.ErrorList {
	if b.CIDR == "" {
		return field.ErrorList{field.Required(p.Child("cidr"), "")}
	}
	var errs field.ErrorList
	for _, msg := range naming.IsValidCIDRForLegacyField(b.CIDR, true) {
		errs = append(errs, field.Invalid(p.Child("cidr"), b.CIDR, msg))
	}
	_, cidr, err := net.ParseCIDR(b.CIDR)
	if err != nil {
		return errs
	}
	for i, ex := range b.Except {
		ep := p.Child("except").Index(i)
		for _, msg := range naming.IsValidCIDRForLegacyField(ex, true) {
			errs = append(errs, field.Invalid(ep, ex, msg))
		}
		_, exNet, err := net.ParseCIDR(ex)
		if err != nil {
			continue
		}
		cidrLen, _ := cidr.Mask.Size()
		exLen, _ := exNet.Mask.Size()
		if !cidr.Contains(exNet.IP) || cidrLen >= exLen {
			errs = append(errs, field.Invalid(ep, ex, "must be a strict subset of `cidr`"))
		}
	}
	return errs
}

// maxTrustBundleSize is kube's bound on a ClusterTrustBundle's PEM.
const maxTrustBundleSize = 1 << 20

// clusterTrustBundleName is kube's ValidateClusterTrustBundleName: a
// bundle of a signer is named "example.com:signer:NAME", one without must
// hold no colon.
func clusterTrustBundleName(signer string) func(name string, prefix bool) []string {
	return func(name string, prefix bool) []string {
		if signer == "" {
			if strings.Contains(name, ":") {
				return []string{"ClusterTrustBundle without signer name must not have \":\" in its name"}
			}
			return naming.NameIsDNSSubdomain(name, prefix)
		}
		want := strings.ReplaceAll(signer, "/", ":") + ":"
		if !strings.HasPrefix(name, want) {
			return []string{fmt.Sprintf("ClusterTrustBundle for signerName %s must be named with prefix %s", signer, want)}
		}
		return naming.NameIsDNSSubdomain(strings.TrimPrefix(name, want), prefix)
	}
}

// validateClusterTrustBundle checks a ClusterTrustBundle being created,
// or updated from old: its name is prefixed with its signer's
// ("example.com:signer:NAME"), its PEM holds CA certificates only, each
// once.
func validateClusterTrustBundle(b, old *api.ClusterTrustBundle) field.ErrorList {
	signer := b.Spec.SignerName
	errs := ValidateObjectMeta(&b.ObjectMeta, false, clusterTrustBundleName(signer), field.NewPath("metadata"))
	if signer != "" {
		errs = append(errs, ValidateSignerName(field.NewPath("spec", "signerName"), signer)...)
	}
	// An update that keeps the PEM does not parse it again, as kube.
	if old == nil || b.Spec.TrustBundle != old.Spec.TrustBundle {
		errs = append(errs, validateTrustBundle(field.NewPath("spec", "trustBundle"), b.Spec.TrustBundle)...)
	}
	if old != nil {
		errs = append(errs, ValidateObjectMetaUpdate(&b.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))...)
		errs = append(errs, validateImmutable(b.Spec.SignerName, old.Spec.SignerName, field.NewPath("spec", "signerName"))...)
	}
	return errs
}

// validateTrustBundle is kube's: PEM CERTIFICATE blocks without headers,
// each a CA certificate, none twice, at least one.
func validateTrustBundle(p *field.Path, in string) field.ErrorList {
	if len(in) > maxTrustBundleSize {
		return field.ErrorList{field.TooLong(p, "", maxTrustBundleSize)}
	}
	const omitted = "<value omitted>"
	var errs field.ErrorList
	seen := map[string][]int{}
	var order []string
	rest := []byte(in)
	for i := 0; ; i++ {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		switch {
		case b.Type != "CERTIFICATE":
			errs = append(errs, field.Invalid(p, omitted, fmt.Sprintf("entry %d has bad block type: %v", i, b.Type)))
			continue
		case len(b.Headers) != 0:
			errs = append(errs, field.Invalid(p, omitted, fmt.Sprintf("entry %d has PEM block headers", i)))
			continue
		}
		cert, err := x509.ParseCertificate(b.Bytes)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(p, omitted, fmt.Sprintf("entry %d does not parse as X.509", i)))
			continue
		case !cert.IsCA:
			errs = append(errs, field.Invalid(p, omitted, fmt.Sprintf("entry %d does not have the CA bit set", i)))
			continue
		case !cert.BasicConstraintsValid:
			errs = append(errs, field.Invalid(p, omitted, fmt.Sprintf("entry %d has invalid basic constraints", i)))
			continue
		}
		if _, ok := seen[string(b.Bytes)]; !ok {
			order = append(order, string(b.Bytes))
		}
		seen[string(b.Bytes)] = append(seen[string(b.Bytes)], i)
	}
	if len(errs) != 0 {
		return errs
	}
	if len(seen) == 0 {
		return field.ErrorList{field.Invalid(p, omitted, "at least one trust anchor must be provided")}
	}
	for _, k := range order {
		if idx := seen[k]; len(idx) > 1 {
			errs = append(errs, field.Invalid(p, omitted, fmt.Sprintf("duplicate trust anchor (indices %v)", idx)))
		}
	}
	return errs
}

// Kubernetes' flow control bounds.
const (
	flowSchemaMaxMatchingPrecedence = 10000
	maxQueues                       = 10 * 1000 * 1000
)

func validateFlowSchemaSpec(name string, spec *api.FlowSchemaSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	mp := p.Child("matchingPrecedence")
	if spec.MatchingPrecedence <= 0 {
		errs = append(errs, field.Invalid(mp, spec.MatchingPrecedence, "must be a positive value"))
	}
	if spec.MatchingPrecedence > flowSchemaMaxMatchingPrecedence {
		errs = append(errs, field.Invalid(mp, spec.MatchingPrecedence, fmt.Sprintf("must not be greater than %v", flowSchemaMaxMatchingPrecedence)))
	}
	if spec.MatchingPrecedence == 1 && name != "exempt" {
		errs = append(errs, field.Invalid(mp, spec.MatchingPrecedence, "only the schema named 'exempt' may have matchingPrecedence 1"))
	}
	if spec.PriorityLevelConfiguration.Name == "" {
		errs = append(errs, field.Required(p.Child("priorityLevelConfiguration", "name"), "must reference a priority level"))
	}
	for i, r := range spec.Rules {
		rp := p.Child("rules").Index(i)
		if len(r.Subjects) == 0 {
			errs = append(errs, field.Required(rp.Child("subjects"), "subjects must contain at least one value"))
		}
		for j := range r.Subjects {
			errs = append(errs, validateFlowSchemaSubject(&r.Subjects[j], rp.Child("subjects").Index(j))...)
		}
		if len(r.ResourceRules) == 0 && len(r.NonResourceRules) == 0 {
			errs = append(errs, field.Required(rp, "at least one of resourceRules and nonResourceRules has to be non-empty"))
		}
		for j, rr := range r.ResourceRules {
			rrp := rp.Child("resourceRules").Index(j)
			if len(rr.Verbs) == 0 {
				errs = append(errs, field.Required(rrp.Child("verbs"), "verbs must contain at least one value"))
			}
			if len(rr.APIGroups) == 0 {
				errs = append(errs, field.Required(rrp.Child("apiGroups"), "resource rules must supply at least one api group"))
			}
			if len(rr.Resources) == 0 {
				errs = append(errs, field.Required(rrp.Child("resources"), "resource rules must supply at least one resource"))
			}
			if len(rr.Namespaces) == 0 && !rr.ClusterScope {
				errs = append(errs, field.Required(rrp.Child("namespaces"), "resource rules that are not cluster scoped must supply at least one namespace"))
			}
		}
		for j, nr := range r.NonResourceRules {
			nrp := rp.Child("nonResourceRules").Index(j)
			if len(nr.Verbs) == 0 {
				errs = append(errs, field.Required(nrp.Child("verbs"), "verbs must contain at least one value"))
			}
			if len(nr.NonResourceURLs) == 0 {
				errs = append(errs, field.Required(nrp.Child("nonResourceURLs"), "nonResourceURLs must contain at least one value"))
			}
		}
	}
	return errs
}

func validateFlowSchemaSubject(s *api.FlowSchemaSubject, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	forbid := func(set bool, child, msg string) {
		if set {
			errs = append(errs, field.Forbidden(p.Child(child), msg))
		}
	}
	const (
		notUser  = "user is forbidden when subject kind is not 'User'"
		notGroup = "group is forbidden when subject kind is not 'Group'"
		notSA    = "serviceAccount is forbidden when subject kind is not 'ServiceAccount'"
	)
	switch s.Kind {
	case "ServiceAccount":
		if sa := s.ServiceAccount; sa == nil {
			errs = append(errs, field.Required(p.Child("serviceAccount"), "serviceAccount is required when subject kind is 'ServiceAccount'"))
		} else {
			if sa.Name == "" {
				errs = append(errs, field.Required(p.Child("serviceAccount", "name"), ""))
			}
			if sa.Namespace == "" {
				errs = append(errs, field.Required(p.Child("serviceAccount", "namespace"), "must specify namespace for service account"))
			}
		}
		forbid(s.User != nil, "user", notUser)
		forbid(s.Group != nil, "group", notGroup)
	case "User":
		if s.User == nil {
			errs = append(errs, field.Required(p.Child("user"), "user is required when subject kind is 'User'"))
		} else if s.User.Name == "" {
			errs = append(errs, field.Required(p.Child("user", "name"), ""))
		}
		forbid(s.ServiceAccount != nil, "serviceAccount", notSA)
		forbid(s.Group != nil, "group", notGroup)
	case "Group":
		if s.Group == nil {
			errs = append(errs, field.Required(p.Child("group"), "group is required when subject kind is 'Group'"))
		} else if s.Group.Name == "" {
			errs = append(errs, field.Required(p.Child("group", "name"), ""))
		}
		forbid(s.ServiceAccount != nil, "serviceAccount", notSA)
		forbid(s.User != nil, "user", notUser)
	default:
		errs = append(errs, field.NotSupported(p.Child("kind"), string(s.Kind), []string{"Group", "ServiceAccount", "User"}))
	}
	return errs
}

// validatePriorityLevelConfigurationSpec is kube's; the errors kube's
// declarative validation reports (the union members, the queuing) carry
// no detail, as kube's do.
func validatePriorityLevelConfigurationSpec(name string, spec *api.PriorityLevelConfigurationSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if (name == "exempt") != (spec.Type == "Exempt") {
		errs = append(errs, field.Invalid(p.Child("type"), string(spec.Type), "must be 'Exempt' if and only if `name` is 'exempt'"))
	}
	percent := func(v *int32, path *field.Path) {
		if v != nil && (*v < 0 || *v > 100) {
			errs = append(errs, field.Invalid(path, *v, "must be between 0 and 100, inclusive"))
		}
	}
	switch spec.Type {
	case "Exempt":
		if spec.Limited != nil {
			errs = append(errs, field.Forbidden(p.Child("limited"), ""))
		}
		if e := spec.Exempt; e != nil {
			if e.NominalConcurrencyShares != nil && *e.NominalConcurrencyShares < 0 {
				errs = append(errs, field.Invalid(p.Child("exempt", "nominalConcurrencyShares"), *e.NominalConcurrencyShares, "must be a non-negative integer"))
			}
			percent(e.LendablePercent, p.Child("exempt", "lendablePercent"))
		}
	case "Limited":
		if spec.Exempt != nil {
			errs = append(errs, field.Forbidden(p.Child("exempt"), ""))
		}
		l := spec.Limited
		if l == nil {
			errs = append(errs, field.Required(p.Child("limited"), ""))
			break
		}
		lp := p.Child("limited")
		if l.NominalConcurrencyShares != nil && *l.NominalConcurrencyShares < 0 {
			errs = append(errs, field.Invalid(lp.Child("nominalConcurrencyShares"), *l.NominalConcurrencyShares, "must be a non-negative integer"))
		}
		errs = append(errs, validateLimitResponse(&l.LimitResponse, lp.Child("limitResponse"))...)
		percent(l.LendablePercent, lp.Child("lendablePercent"))
		if l.BorrowingLimitPercent != nil && *l.BorrowingLimitPercent < 0 {
			errs = append(errs, field.Invalid(lp.Child("borrowingLimitPercent"), *l.BorrowingLimitPercent, "if specified, must be a non-negative integer"))
		}
	default:
		// A union member the type does not name is forbidden, reported
		// (declaratively, in kube) before the type.
		if spec.Limited != nil {
			errs = append(errs, field.Forbidden(p.Child("limited"), ""))
		}
		if spec.Exempt != nil {
			errs = append(errs, field.Forbidden(p.Child("exempt"), ""))
		}
		if spec.Type == "" {
			errs = append(errs, field.Required(p.Child("type"), ""))
		} else {
			errs = append(errs, field.NotSupported(p.Child("type"), string(spec.Type), []string{"Exempt", "Limited"}))
		}
	}
	return errs
}

func validateLimitResponse(lr *api.LimitResponse, p *field.Path) field.ErrorList {
	switch lr.Type {
	case "Reject":
		if lr.Queuing != nil {
			return field.ErrorList{field.Forbidden(p.Child("queuing"), "")}
		}
	case "Queue":
		q := lr.Queuing
		if q == nil {
			return field.ErrorList{field.Required(p.Child("queuing"), "")}
		}
		qp := p.Child("queuing")
		var errs field.ErrorList
		if q.QueueLengthLimit <= 0 {
			errs = append(errs, field.Invalid(qp.Child("queueLengthLimit"), q.QueueLengthLimit, "must be positive"))
		}
		if q.Queues <= 0 {
			errs = append(errs, field.Invalid(qp.Child("queues"), q.Queues, "must be positive"))
		} else if q.Queues > maxQueues {
			errs = append(errs, field.Invalid(qp.Child("queues"), q.Queues, fmt.Sprintf("must not be greater than %d", maxQueues)))
		}
		if q.HandSize <= 0 {
			errs = append(errs, field.Invalid(qp.Child("handSize"), q.HandSize, "must be positive"))
		} else if q.HandSize > q.Queues {
			errs = append(errs, field.Invalid(qp.Child("handSize"), q.HandSize, fmt.Sprintf("should not be greater than queues (%d)", q.Queues)))
		}
		return errs
	case "":
		return field.ErrorList{field.Required(p.Child("type"), "")}
	default:
		return field.ErrorList{field.NotSupported(p.Child("type"), string(lr.Type), []string{"Queue", "Reject"})}
	}
	return nil
}
