package validation

import (
	"fmt"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/api/naming"
)

func isHeadlessService(s *api.Service) bool {
	return s.Spec.ClusterIP == api.ClusterIPNone || (len(s.Spec.ClusterIPs) > 0 && s.Spec.ClusterIPs[0] == api.ClusterIPNone)
}

func externallyAccessible(s *api.Service) bool {
	return s.Spec.Type == api.ServiceTypeLoadBalancer || s.Spec.Type == api.ServiceTypeNodePort ||
		(s.Spec.Type == api.ServiceTypeClusterIP && len(s.Spec.ExternalIPs) > 0)
}

func needsHealthCheck(s *api.Service) bool {
	return s.Spec.Type == api.ServiceTypeLoadBalancer && s.Spec.ExternalTrafficPolicy == api.ServiceExternalTrafficPolicyLocal
}

// ValidateService checks a service being created or updated. Its name is an
// RFC 1035 label (it becomes a DNS name and environment variable prefix).
func ValidateService(s *api.Service) field.ErrorList {
	errs := ValidateObjectMeta(&s.ObjectMeta, true, naming.NameIsDNS1035Label, field.NewPath("metadata"))
	specPath := field.NewPath("spec")
	spec := &s.Spec
	headless := isHeadlessService(s)

	if len(spec.Ports) == 0 && !headless && spec.Type != api.ServiceTypeExternalName {
		errs = append(errs, field.Required(specPath.Child("ports"), ""))
	}
	switch spec.Type {
	case api.ServiceTypeLoadBalancer, api.ServiceTypeNodePort:
		if headless {
			errs = append(errs, field.Invalid(specPath.Child("clusterIPs").Index(0), api.ClusterIPNone,
				fmt.Sprintf("may not be set to 'None' for %s services", spec.Type)))
		}
	case api.ServiceTypeExternalName:
		if spec.ClusterIP != "" || len(spec.ClusterIPs) > 0 {
			errs = append(errs, field.Forbidden(specPath.Child("clusterIPs"), "may not be set for ExternalName services"))
		}
		if len(spec.IPFamilies) > 0 {
			errs = append(errs, field.Forbidden(specPath.Child("ipFamilies"), "may not be set for ExternalName services"))
		}
		if spec.IPFamilyPolicy != nil {
			errs = append(errs, field.Forbidden(specPath.Child("ipFamilyPolicy"), "may not be set for ExternalName services"))
		}
		if cname := strings.TrimSuffix(spec.ExternalName, "."); cname != "" {
			errs = append(errs, validateDNS1123Subdomain(cname, specPath.Child("externalName"))...)
		} else {
			errs = append(errs, field.Required(specPath.Child("externalName"), ""))
		}
	}

	portsPath := specPath.Child("ports")
	names := map[string]bool{}
	for i := range spec.Ports {
		errs = append(errs, validateServicePort(&spec.Ports[i], len(spec.Ports) > 1, names, portsPath.Index(i))...)
	}
	if spec.Selector != nil {
		errs = append(errs, ValidateLabels(spec.Selector, specPath.Child("selector"))...)
	}
	switch spec.SessionAffinity {
	case "":
		errs = append(errs, field.Required(specPath.Child("sessionAffinity"), ""))
	case api.ServiceAffinityClientIP:
		errs = append(errs, validateClientIPAffinityConfig(spec.SessionAffinityConfig, specPath.Child("sessionAffinityConfig"))...)
	case api.ServiceAffinityNone:
		if spec.SessionAffinityConfig != nil {
			errs = append(errs, field.Forbidden(specPath.Child("sessionAffinityConfig"), "must not be set when session affinity is None"))
		}
	default:
		errs = append(errs, field.NotSupported(specPath.Child("sessionAffinity"), string(spec.SessionAffinity), []string{"ClientIP", "None"}))
	}
	errs = append(errs, validateClusterIPs(s)...)
	for i, ip := range spec.ExternalIPs {
		ipPath := specPath.Child("externalIPs").Index(i)
		if msgs := naming.IsValidIPForLegacyField(ip, false); len(msgs) != 0 {
			for _, msg := range msgs {
				errs = append(errs, field.Invalid(ipPath, ip, msg))
			}
		} else {
			errs = append(errs, validateNonSpecialIP(ip, ipPath)...)
		}
	}
	switch spec.Type {
	case api.ServiceTypeClusterIP, api.ServiceTypeNodePort, api.ServiceTypeLoadBalancer, api.ServiceTypeExternalName:
	case "":
		errs = append(errs, field.Required(specPath.Child("type"), ""))
	default:
		errs = append(errs, field.NotSupported(specPath.Child("type"), string(spec.Type),
			[]string{"ClusterIP", "ExternalName", "LoadBalancer", "NodePort"}))
	}
	nodePorts := map[string]bool{}
	ports := map[string]bool{}
	for i, port := range spec.Ports {
		pp := portsPath.Index(i)
		if port.NodePort != 0 {
			if spec.Type == api.ServiceTypeClusterIP {
				errs = append(errs, field.Forbidden(pp.Child("nodePort"), "may not be used when `type` is 'ClusterIP'"))
			}
			key := fmt.Sprintf("%s/%d", port.Protocol, port.NodePort)
			if nodePorts[key] {
				errs = append(errs, field.Duplicate(pp.Child("nodePort"), port.NodePort))
			}
			nodePorts[key] = true
		}
		key := fmt.Sprintf("%s/%d", port.Protocol, port.Port)
		if ports[key] {
			errs = append(errs, field.Duplicate(pp, rawText(fmt.Sprintf("core.ServicePort{Name:\"\", Protocol:%q, AppProtocol:(*string)(nil), Port:%d, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}, NodePort:0}", port.Protocol, port.Port))))
		}
		ports[key] = true
	}
	if len(spec.LoadBalancerSourceRanges) > 0 {
		rp := specPath.Child("LoadBalancerSourceRanges")
		if spec.Type != api.ServiceTypeLoadBalancer {
			errs = append(errs, field.Forbidden(rp, "may only be used when `type` is 'LoadBalancer'"))
		}
		for i, r := range spec.LoadBalancerSourceRanges {
			r = strings.TrimSpace(r)
			for _, msg := range naming.IsValidCIDRForLegacyField(r, false) {
				errs = append(errs, field.Invalid(rp.Index(i), r, msg))
			}
		}
	}
	if spec.AllocateLoadBalancerNodePorts != nil && spec.Type != api.ServiceTypeLoadBalancer {
		errs = append(errs, field.Forbidden(specPath.Child("allocateLoadBalancerNodePorts"), "may only be used when `type` is 'LoadBalancer'"))
	}
	errs = append(errs, validateTrafficPolicies(s)...)
	return errs
}

func validateServicePort(sp *api.ServicePort, requireName bool, names map[string]bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if requireName && sp.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else if sp.Name != "" {
		errs = append(errs, validateDNS1123Label(sp.Name, p.Child("name"))...)
		if names[sp.Name] {
			errs = append(errs, field.Duplicate(p.Child("name"), sp.Name))
		}
		names[sp.Name] = true
	}
	for _, msg := range naming.IsValidPortNum(int(sp.Port)) {
		errs = append(errs, field.Invalid(p.Child("port"), sp.Port, msg))
	}
	errs = append(errs, validateProtocol(sp.Protocol, p.Child("protocol"))...)
	errs = append(errs, ValidatePortNumOrName(sp.TargetPort, p.Child("targetPort"))...)
	if sp.AppProtocol != nil {
		errs = append(errs, validateQualifiedName(*sp.AppProtocol, p.Child("appProtocol"))...)
	}
	if sp.NodePort != 0 {
		for _, msg := range naming.IsValidPortNum(int(sp.NodePort)) {
			errs = append(errs, field.Invalid(p.Child("nodePort"), sp.NodePort, msg))
		}
	}
	return errs
}

func validateClientIPAffinityConfig(c *api.SessionAffinityConfig, p *field.Path) field.ErrorList {
	const when = "when session affinity type is ClientIP"
	switch {
	case c == nil:
		return field.ErrorList{field.Required(p, when)}
	case c.ClientIP == nil:
		return field.ErrorList{field.Required(p.Child("clientIP"), when)}
	case c.ClientIP.TimeoutSeconds == nil:
		return field.ErrorList{field.Required(p.Child("clientIP", "timeoutSeconds"), when)}
	}
	if t := *c.ClientIP.TimeoutSeconds; t <= 0 || t > api.MaxClientIPServiceAffinitySeconds {
		return field.ErrorList{field.Invalid(p.Child("clientIP", "timeoutSeconds"), t,
			fmt.Sprintf("must be greater than 0 and less than %d", api.MaxClientIPServiceAffinitySeconds))}
	}
	return nil
}

// validateClusterIPs checks clusterIP/clusterIPs (kept in sync: the first
// clusterIPs entry is clusterIP), IP families and their policy.
func validateClusterIPs(s *api.Service) field.ErrorList {
	spec := &s.Spec
	if spec.Type == api.ServiceTypeExternalName {
		return nil
	}
	var errs field.ErrorList
	ipsPath := field.NewPath("spec", "clusterIPs")
	if spec.ClusterIP != "" {
		if len(spec.ClusterIPs) == 0 {
			errs = append(errs, field.Required(ipsPath, ""))
		} else if spec.ClusterIPs[0] != spec.ClusterIP {
			errs = append(errs, field.Invalid(ipsPath, goValue{spec.ClusterIPs}, "first value must match `clusterIP`"))
		}
	} else if len(spec.ClusterIPs) != 0 {
		errs = append(errs, field.Invalid(ipsPath, goValue{spec.ClusterIPs}, "must be empty when `clusterIP` is not specified"))
	}
	famPath := field.NewPath("spec", "ipFamilies")
	seen := map[api.IPFamily]bool{}
	for i, f := range spec.IPFamilies {
		if f != api.IPv4Protocol && f != api.IPv6Protocol {
			errs = append(errs, field.NotSupported(famPath.Index(i), string(f), []string{"IPv4", "IPv6"}))
		}
		if seen[f] {
			errs = append(errs, field.Duplicate(famPath.Index(i), string(f)))
		}
		seen[f] = true
	}
	if pol := spec.IPFamilyPolicy; pol != nil {
		switch *pol {
		case api.IPFamilyPolicySingleStack, api.IPFamilyPolicyPreferDualStack, api.IPFamilyPolicyRequireDualStack:
		default:
			errs = append(errs, field.NotSupported(field.NewPath("spec", "ipFamilyPolicy"), string(*pol),
				[]string{"PreferDualStack", "RequireDualStack", "SingleStack"}))
		}
	}
	invalid := false
	for i, ip := range spec.ClusterIPs {
		if i == 0 && ip == api.ClusterIPNone {
			if len(spec.ClusterIPs) > 1 {
				invalid = true
				errs = append(errs, field.Invalid(ipsPath, goValue{spec.ClusterIPs}, "'None' must be the first and only value"))
			}
			continue
		}
		for _, msg := range naming.IsValidIPForLegacyField(ip, false) {
			invalid = true
			errs = append(errs, field.Invalid(ipsPath.Index(i), ip, msg))
		}
	}
	if len(spec.ClusterIPs) > 2 {
		errs = append(errs, field.Invalid(ipsPath, goValue{spec.ClusterIPs}, "may only hold up to 2 values"))
	}
	if invalid {
		return errs
	}
	if len(spec.ClusterIPs) == 2 && isIPv6(spec.ClusterIPs[0]) == isIPv6(spec.ClusterIPs[1]) {
		errs = append(errs, field.Invalid(ipsPath, goValue{spec.ClusterIPs}, "may specify no more than one IP for each IP family"))
	}
	if !isHeadlessService(s) {
		for i, ip := range spec.ClusterIPs {
			if i >= len(spec.IPFamilies) {
				break
			}
			if spec.IPFamilies[i] == api.IPv4Protocol && isIPv6(ip) {
				errs = append(errs, field.Invalid(ipsPath.Index(i), ip, fmt.Sprintf("expected an IPv4 value as indicated by `ipFamilies[%v]`", i)))
			}
			if spec.IPFamilies[i] == api.IPv6Protocol && !isIPv6(ip) {
				errs = append(errs, field.Invalid(ipsPath.Index(i), ip, fmt.Sprintf("expected an IPv6 value as indicated by `ipFamilies[%v]`", i)))
			}
		}
	}
	return errs
}

func validateTrafficPolicies(s *api.Service) field.ErrorList {
	var errs field.ErrorList
	specPath := field.NewPath("spec")
	etp := s.Spec.ExternalTrafficPolicy
	if !externallyAccessible(s) {
		if etp != "" {
			errs = append(errs, field.Invalid(specPath.Child("externalTrafficPolicy"), string(etp), "may only be set for externally-accessible services"))
		}
	} else if etp == "" {
		errs = append(errs, field.Required(specPath.Child("externalTrafficPolicy"), ""))
	} else if etp != api.ServiceExternalTrafficPolicyCluster && etp != api.ServiceExternalTrafficPolicyLocal {
		errs = append(errs, field.NotSupported(specPath.Child("externalTrafficPolicy"), string(etp), []string{"Cluster", "Local"}))
	}
	// Kubernetes' registry allocates healthCheckNodePort before validating
	// and so requires it; minik8s leaves allocation to the apiserver after
	// validation, so only a given value is checked.
	if hc := s.Spec.HealthCheckNodePort; hc != 0 {
		if !needsHealthCheck(s) {
			errs = append(errs, field.Invalid(specPath.Child("healthCheckNodePort"), hc, "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"))
		} else {
			for _, msg := range naming.IsValidPortNum(int(hc)) {
				errs = append(errs, field.Invalid(specPath.Child("healthCheckNodePort"), hc, msg))
			}
		}
	}
	switch t := s.Spec.Type; {
	case s.Spec.InternalTrafficPolicy == nil:
		if t == api.ServiceTypeNodePort || t == api.ServiceTypeLoadBalancer || t == api.ServiceTypeClusterIP {
			errs = append(errs, field.Required(specPath.Child("internalTrafficPolicy"), ""))
		}
	case *s.Spec.InternalTrafficPolicy != api.ServiceInternalTrafficPolicyCluster && *s.Spec.InternalTrafficPolicy != api.ServiceInternalTrafficPolicyLocal:
		errs = append(errs, field.NotSupported(specPath.Child("internalTrafficPolicy"), string(*s.Spec.InternalTrafficPolicy), []string{"Cluster", "Local"}))
	}
	if td := s.Spec.TrafficDistribution; td != nil && *td != "PreferClose" && *td != "PreferSameZone" && *td != "PreferSameNode" {
		errs = append(errs, field.NotSupported(specPath.Child("trafficDistribution"), *td, []string{"PreferClose", "PreferSameNode", "PreferSameZone"}))
	}
	return errs
}

// validateNonSpecialIP rejects unspecified, loopback and link-local
// addresses, which make no sense as endpoints or external IPs.
func validateNonSpecialIP(ip string, p *field.Path) field.ErrorList {
	addr, ok := parseIP(ip)
	if !ok {
		return field.ErrorList{field.Invalid(p, ip, "must be a valid IP address")}
	}
	var errs field.ErrorList
	if addr.IsUnspecified() {
		errs = append(errs, field.Invalid(p, ip, fmt.Sprintf("may not be unspecified (%v)", ip)))
	}
	if addr.IsLoopback() {
		errs = append(errs, field.Invalid(p, ip, "may not be in the loopback range (127.0.0.0/8, ::1/128)"))
	}
	if addr.IsLinkLocalUnicast() {
		errs = append(errs, field.Invalid(p, ip, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"))
	}
	if addr.IsLinkLocalMulticast() {
		errs = append(errs, field.Invalid(p, ip, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"))
	}
	return errs
}

// ValidateServiceUpdate checks a service update: the rules of
// ValidateService, plus clusterIP (and the primary IP family) fixed once
// set, except when the service becomes or stops being ExternalName.
func ValidateServiceUpdate(s, old *api.Service) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&s.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	externalName := s.Spec.Type == api.ServiceTypeExternalName || old.Spec.Type == api.ServiceTypeExternalName
	if !externalName && !(isHeadlessService(s) && isHeadlessService(old)) {
		if old.Spec.ClusterIP != "" && s.Spec.ClusterIP != old.Spec.ClusterIP {
			errs = append(errs, field.Invalid(field.NewPath("spec", "clusterIP"), s.Spec.ClusterIP, fieldImmutableErrorMsg))
		} else if len(old.Spec.ClusterIPs) > 1 && len(s.Spec.ClusterIPs) > 1 && old.Spec.ClusterIPs[1] != s.Spec.ClusterIPs[1] {
			errs = append(errs, field.Invalid(field.NewPath("spec", "clusterIPs").Index(1), goValue{s.Spec.ClusterIPs}, "may not change once set"))
		}
		if len(old.Spec.IPFamilies) > 0 && len(s.Spec.IPFamilies) > 0 && old.Spec.IPFamilies[0] != s.Spec.IPFamilies[0] {
			errs = append(errs, field.Invalid(field.NewPath("spec", "ipFamilies").Index(0), string(s.Spec.IPFamilies[0]), "may not change once set"))
		}
	}
	if needsHealthCheck(old) && needsHealthCheck(s) && old.Spec.HealthCheckNodePort != 0 &&
		s.Spec.HealthCheckNodePort != old.Spec.HealthCheckNodePort {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "healthCheckNodePort"), fieldImmutableErrorMsg))
	}
	return append(errs, ValidateService(s)...)
}

// ValidateServiceStatusUpdate checks a write to services/status: load
// balancer ingress points are valid IPs or host names.
func ValidateServiceStatusUpdate(s, old *api.Service) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&s.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	ip := field.NewPath("status", "loadBalancer", "ingress")
	for i, ing := range s.Status.LoadBalancer.Ingress {
		p := ip.Index(i)
		if ing.IP != "" {
			for _, msg := range naming.IsValidIPForLegacyField(ing.IP, false) {
				errs = append(errs, field.Invalid(p.Child("ip"), ing.IP, msg))
			}
		}
		if ing.IPMode != nil && ing.IP == "" {
			errs = append(errs, field.Forbidden(p.Child("ipMode"), "may not be specified when `ip` is not set"))
		}
		if ing.Hostname != "" {
			errs = append(errs, validateDNS1123Subdomain(ing.Hostname, p.Child("hostname"))...)
			if _, ok := parseIP(ing.Hostname); ok {
				errs = append(errs, field.Invalid(p.Child("hostname"), ing.Hostname, "must be a DNS name, not an IP address"))
			}
		}
	}
	return errs
}
