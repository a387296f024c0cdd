package describers

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
)

// describeNetworking describes networking.k8s.io's Ingresses,
// IngressClasses and NetworkPolicies with kubectl's describers, and a
// custom resource of the same kind name in another group (Calico's
// NetworkPolicy) with the generic one, as kubectl does.
func describeNetworking(ctx context.Context, w *prefixWriter, c *client.Client, u *client.Unstructured, evs []api.Event, now time.Time) error {
	if group, _, _ := strings.Cut(u.GetAPIVersion(), "/"); group != "networking.k8s.io" {
		describeGeneric(w, u.Object, evs, now)
		return nil
	}
	switch u.GetKind() {
	case "Ingress":
		ing, err := decode[api.Ingress](u)
		if err != nil {
			return err
		}
		describeIngress(w, ing, func(b *api.IngressBackend) string {
			return ingressBackend(ctx, c, ing.Namespace, b)
		}, evs, now)
	case "IngressClass":
		ic, err := decode[api.IngressClass](u)
		if err != nil {
			return err
		}
		describeIngressClass(w, ic, evs, now)
	case "NetworkPolicy":
		np, err := decode[api.NetworkPolicy](u)
		if err != nil {
			return err
		}
		describeNetworkPolicy(w, np)
	}
	return nil
}

// ingressBackend is how kubectl's IngressDescriber shows a backend: a
// Service backend as "name:port (endpoints)", the endpoints those of the
// Service port the backend names, or the error that kept them from being
// read; a resource backend by its group, kind and name.
func ingressBackend(ctx context.Context, c *client.Client, ns string, b *api.IngressBackend) string {
	if s := b.Service; s != nil {
		port := s.Port.Name
		if s.Port.Number != 0 {
			port = strconv.Itoa(int(s.Port.Number))
		}
		sb := s.Name + ":" + port
		l, err := client.Resource[api.EndpointSlice](c).Namespace(ns).List(ctx,
			client.ListOptions{LabelSelector: api.LabelServiceName + "=" + s.Name})
		if err != nil {
			return fmt.Sprintf("%s (<error: %v>)", sb, err)
		}
		svc, err := client.Resource[api.Service](c).Namespace(ns).Get(ctx, s.Name)
		if err != nil {
			return fmt.Sprintf("%s (<error: %v>)", sb, err)
		}
		// The last of the Service's ports the backend names, by number
		// or by name.
		name := ""
		for _, sp := range svc.Spec.Ports {
			if s.Port.Number != 0 && s.Port.Number == sp.Port || s.Port.Name != "" && s.Port.Name == sp.Name {
				name = sp.Name
			}
		}
		return fmt.Sprintf("%s (%s)", sb, endpointsFor(l.Items, name))
	}
	if r := b.Resource; r != nil {
		group := "<none>"
		if r.APIGroup != nil {
			group = *r.APIGroup
		}
		return fmt.Sprintf("APIGroup: %s, Kind: %s, Name: %s", group, r.Kind, r.Name)
	}
	return ""
}

// ingressAddress is the load balancer's addresses, each IP or else host
// name once, sorted and joined by commas (kubectl's wide form, never cut).
func ingressAddress(s api.IngressLoadBalancerStatus) string {
	var out []string
	for _, in := range s.Ingress {
		a := in.IP
		if a == "" {
			a = in.Hostname
		}
		if a != "" && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

// describeIngress is kubectl's IngressDescriber. backend describes a
// backend of the Ingress (it reads the cluster).
func describeIngress(w *prefixWriter, ing *api.Ingress, backend func(*api.IngressBackend) string, evs []api.Event, now time.Time) {
	w.write(level0, "Name:\t%s\n", ing.Name)
	w.labels("Labels", ing.Labels)
	w.write(level0, "Namespace:\t%s\n", ing.Namespace)
	w.write(level0, "Address:\t%s\n", ingressAddress(ing.Status.LoadBalancer))
	class := "<none>"
	if ing.Spec.IngressClassName != nil {
		class = *ing.Spec.IngressClassName
	}
	w.write(level0, "Ingress Class:\t%s\n", class)
	def := "<default>"
	if ing.Spec.DefaultBackend != nil {
		def = backend(ing.Spec.DefaultBackend)
	}
	w.write(level0, "Default backend:\t%s\n", def)
	if len(ing.Spec.TLS) > 0 {
		w.write(level0, "TLS:\n")
		for _, t := range ing.Spec.TLS {
			hosts := strings.Join(t.Hosts, ",")
			if t.SecretName == "" {
				w.write(level1, "SNI routes %s\n", hosts)
			} else {
				w.write(level1, "%s terminates %s\n", t.SecretName, hosts)
			}
		}
	}
	w.write(level0, "Rules:\n  Host\tPath\tBackends\n")
	w.write(level1, "----\t----\t--------\n")
	shown := 0
	for _, r := range ing.Spec.Rules {
		// A rule without http paths is left out, as kubectl does.
		if r.HTTP == nil {
			continue
		}
		shown++
		host := r.Host
		if host == "" {
			host = "*"
		}
		w.write(level1, "%s\t\n", host)
		for i := range r.HTTP.Paths {
			p := &r.HTTP.Paths[i]
			w.write(level2, "\t%s \t%s\n", p.Path, backend(&p.Backend))
		}
	}
	if shown == 0 {
		w.write(level1, "*\t*\t%s\n", def)
	}
	w.annotations("Annotations", ing.Annotations)
	w.events(evs, now)
}

// describeIngressClass is kubectl's IngressClassDescriber: the parameters'
// group, kind and name (not their scope or namespace).
func describeIngressClass(w *prefixWriter, ic *api.IngressClass, evs []api.Event, now time.Time) {
	w.write(level0, "Name:\t%s\n", ic.Name)
	w.labels("Labels", ic.Labels)
	w.annotations("Annotations", ic.Annotations)
	w.write(level0, "Controller:\t%s\n", ic.Spec.Controller)
	if p := ic.Spec.Parameters; p != nil {
		w.write(level0, "Parameters:\n")
		if p.APIGroup != nil {
			w.write(level1, "APIGroup:\t%s\n", *p.APIGroup)
		}
		w.write(level1, "Kind:\t%s\n", p.Kind)
		w.write(level1, "Name:\t%s\n", p.Name)
	}
	w.events(evs, now)
}

// describeNetworkPolicy is kubectl's NetworkPolicyDescriber: the selected
// pods, then what each direction the policy covers allows, rule by rule.
// kubectl shows no events for a NetworkPolicy.
func describeNetworkPolicy(w *prefixWriter, np *api.NetworkPolicy) {
	w.write(level0, "Name:\t%s\n", np.Name)
	w.write(level0, "Namespace:\t%s\n", np.Namespace)
	// kubectl prints the timestamp with Go's time.Time String, in local time.
	w.write(level0, "Created on:\t%s\n", np.CreationTimestamp.Local().String())
	w.labels("Labels", np.Labels)
	w.annotations("Annotations", np.Annotations)
	spec := &np.Spec
	w.write(level0, "Spec:\n")
	w.write(level1, "PodSelector: ")
	if len(spec.PodSelector.MatchLabels) == 0 && len(spec.PodSelector.MatchExpressions) == 0 {
		w.write(level2, "<none> (Allowing the specific traffic to all pods in this namespace)\n")
	} else {
		w.write(level2, "%s\n", selectorString(&spec.PodSelector))
	}
	ingress := slices.Contains(spec.PolicyTypes, "Ingress")
	egress := slices.Contains(spec.PolicyTypes, "Egress")
	const indent = "    "
	if ingress {
		w.write(level1, "Allowing ingress traffic:\n")
		rules := make([]policyRule, len(spec.Ingress))
		for i, r := range spec.Ingress {
			rules[i] = policyRule{r.Ports, r.From}
		}
		w.policyRules(rules, indent, "ingress", "From", "source")
	} else {
		w.write(level1, "Not affecting ingress traffic\n")
	}
	if egress {
		w.write(level1, "Allowing egress traffic:\n")
		rules := make([]policyRule, len(spec.Egress))
		for i, r := range spec.Egress {
			rules[i] = policyRule{r.Ports, r.To}
		}
		w.policyRules(rules, indent, "egress", "To", "destination")
	} else {
		w.write(level1, "Not affecting egress traffic\n")
	}
	types := make([]string, len(spec.PolicyTypes))
	for i, t := range spec.PolicyTypes {
		types[i] = string(t)
	}
	pt := strings.Join(types, ", ")
	if pt == "" {
		pt = "<none>"
	}
	w.write(level1, "Policy Types: %s\n", pt)
}

// policyRule is an ingress or egress rule: its ports and its peers.
type policyRule struct {
	ports []api.NetworkPolicyPort
	peers []api.NetworkPolicyPeer
}

// policyRules writes a direction's rules as kubectl does, a dashed line
// between rules. peer is "From" or "To", peerWord the side an empty peer
// list leaves open.
func (w *prefixWriter) policyRules(rules []policyRule, indent, direction, peer, peerWord string) {
	if len(rules) == 0 {
		w.write(level0, "%s<none> (Selected pods are isolated for %s connectivity)\n", indent, direction)
		return
	}
	for i, r := range rules {
		if len(r.ports) == 0 {
			w.write(level0, "%sTo Port: <any> (traffic allowed to all ports)\n", indent)
		}
		for _, p := range r.ports {
			proto := api.ProtocolTCP
			if p.Protocol != nil {
				proto = *p.Protocol
			}
			port := "<nil>"
			if p.Port != nil {
				port = p.Port.String()
			}
			if p.EndPort == nil {
				w.write(level0, "%sTo Port: %s/%s\n", indent, port, proto)
			} else {
				w.write(level0, "%sTo Port Range: %s-%d/%s\n", indent, port, *p.EndPort, proto)
			}
		}
		if len(r.peers) == 0 {
			w.write(level0, "%s%s: <any> (traffic not restricted by %s)\n", indent, peer, peerWord)
		}
		for _, p := range r.peers {
			w.write(level0, "%s%s:\n", indent, peer)
			switch {
			case p.PodSelector != nil && p.NamespaceSelector != nil:
				w.write(level1, "%sNamespaceSelector: %s\n", indent, selectorString(p.NamespaceSelector))
				w.write(level1, "%sPodSelector: %s\n", indent, selectorString(p.PodSelector))
			case p.PodSelector != nil:
				w.write(level1, "%sPodSelector: %s\n", indent, selectorString(p.PodSelector))
			case p.NamespaceSelector != nil:
				w.write(level1, "%sNamespaceSelector: %s\n", indent, selectorString(p.NamespaceSelector))
			case p.IPBlock != nil:
				w.write(level1, "%sIPBlock:\n", indent)
				w.write(level2, "%sCIDR: %s\n", indent, p.IPBlock.CIDR)
				w.write(level2, "%sExcept: %s\n", indent, strings.Join(p.IPBlock.Except, ", "))
			}
		}
		if i != len(rules)-1 {
			w.write(level0, "%s----------\n", indent)
		}
	}
}
