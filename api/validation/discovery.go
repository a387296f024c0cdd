package validation

import (
	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/api/naming"
)

// Limits of an endpoint slice.
const (
	maxSliceEndpoints = 1000
	maxSliceAddresses = 100
	maxSlicePorts     = 20000
)

// ValidateEndpointSlice checks an endpoint slice: a supported address type,
// addresses of that type, valid hostnames, unique named ports.
func ValidateEndpointSlice(s *api.EndpointSlice) field.ErrorList {
	errs := ValidateObjectMeta(&s.ObjectMeta, true, naming.NameIsDNSSubdomain, field.NewPath("metadata"))
	switch s.AddressType {
	case api.AddressTypeIPv4, api.AddressTypeIPv6, api.AddressTypeFQDN:
	case "":
		errs = append(errs, field.Required(field.NewPath("addressType"), ""))
	default:
		errs = append(errs, field.NotSupported(field.NewPath("addressType"), string(s.AddressType), []string{"FQDN", "IPv4", "IPv6"}))
	}
	ep := field.NewPath("endpoints")
	if len(s.Endpoints) > maxSliceEndpoints {
		errs = append(errs, field.TooMany(ep, len(s.Endpoints), maxSliceEndpoints))
	} else {
		for i, e := range s.Endpoints {
			ap := ep.Index(i).Child("addresses")
			if len(e.Addresses) == 0 {
				errs = append(errs, field.Required(ap, "must contain at least 1 address"))
			} else if len(e.Addresses) > maxSliceAddresses {
				errs = append(errs, field.TooMany(ap, len(e.Addresses), maxSliceAddresses))
			}
			for j, a := range e.Addresses {
				errs = append(errs, validateSliceAddress(s.AddressType, a, ap.Index(j))...)
			}
			if e.Hostname != nil {
				errs = append(errs, validateDNS1123Label(*e.Hostname, ep.Index(i).Child("hostname"))...)
			}
			if e.NodeName != nil {
				for _, msg := range naming.NameIsDNSSubdomain(*e.NodeName, false) {
					errs = append(errs, field.Invalid(ep.Index(i).Child("nodeName"), *e.NodeName, msg))
				}
			}
		}
	}
	pp := field.NewPath("ports")
	if len(s.Ports) > maxSlicePorts {
		return append(errs, field.TooMany(pp, len(s.Ports), maxSlicePorts))
	}
	names := map[string]bool{}
	for i, port := range s.Ports {
		ip := pp.Index(i)
		name := ""
		if port.Name != nil {
			name = *port.Name
		}
		if name != "" {
			errs = append(errs, validateDNS1123Label(name, ip.Child("name"))...)
		}
		if names[name] {
			errs = append(errs, field.Duplicate(ip.Child("name"), name))
		}
		names[name] = true
		if port.Protocol == nil {
			errs = append(errs, field.Required(ip.Child("protocol"), ""))
		} else {
			errs = append(errs, validateProtocol(*port.Protocol, ip.Child("protocol"))...)
		}
		if port.Port != nil {
			for _, msg := range naming.IsInRange(int(*port.Port), 0, 65535) {
				errs = append(errs, field.Invalid(ip.Child("port"), *port.Port, msg))
			}
		}
		if port.AppProtocol != nil {
			errs = append(errs, validateQualifiedName(*port.AppProtocol, ip.Child("appProtocol"))...)
		}
	}
	return errs
}

func validateSliceAddress(t api.AddressType, a string, p *field.Path) field.ErrorList {
	switch t {
	case api.AddressTypeIPv4, api.AddressTypeIPv6:
		if msgs := naming.IsValidIPForLegacyField(a, false); len(msgs) != 0 {
			var errs field.ErrorList
			for _, msg := range msgs {
				errs = append(errs, field.Invalid(p, a, msg))
			}
			return errs
		}
		if t == api.AddressTypeIPv4 && isIPv6(a) {
			return field.ErrorList{field.Invalid(p, a, "must be a valid IPv4 address")}
		}
		if t == api.AddressTypeIPv6 && !isIPv6(a) {
			return field.ErrorList{field.Invalid(p, a, "must be a valid IPv6 address")}
		}
		return validateNonSpecialIP(a, p)
	case api.AddressTypeFQDN:
		return naming.IsFullyQualifiedDomainName(p, a)
	}
	return nil
}

// ValidateEndpointSliceUpdate checks an endpoint slice update; the address
// type is immutable.
func ValidateEndpointSliceUpdate(s, old *api.EndpointSlice) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&s.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	errs = append(errs, validateImmutable(string(s.AddressType), string(old.AddressType), field.NewPath("addressType"))...)
	return append(errs, ValidateEndpointSlice(s)...)
}
