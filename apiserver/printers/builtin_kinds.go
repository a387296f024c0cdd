package printers

import (
	"fmt"
	"slices"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"

	"github.com/minik8s/minik8s/api"
)

// The printers of the kinds served for issue 25 (Ingresses to
// ComponentStatuses), as pkg/printers/internalversion/printers.go of
// Kubernetes v1.37.2 prints them: same columns, same cells. The apiserver
// prints with kube's Wide option, so every cell is written.

// loadBalancerWidth is where kube cuts an Ingress's addresses short.
const loadBalancerWidth = 16

var ingressPrinter = printer([]api.TableColumnDefinition{
	nameColumn,
	col("Class", "string", "The name of the IngressClass resource that should be used for additional configuration"),
	col("Hosts", "string", "Hosts that incoming requests are matched against before the ingress rule"),
	col("Address", "string", "Address is a list containing ingress points for the load-balancer"),
	col("Ports", "string", "Ports of TLS configurations that open"),
	ageColumn,
}, func(o *api.Ingress, now time.Time) api.TableRow {
	class := "<none>"
	if o.Spec.IngressClassName != nil {
		class = *o.Spec.IngressClassName
	}
	var hosts []string
	more := false
	for _, r := range o.Spec.Rules {
		if len(hosts) == 3 {
			more = true
		}
		if !more && r.Host != "" {
			hosts = append(hosts, r.Host)
		}
	}
	hostCell := "*"
	if len(hosts) > 0 {
		hostCell = strings.Join(hosts, ",")
		if more {
			hostCell = fmt.Sprintf("%s + %d more...", hostCell, len(o.Spec.Rules)-3)
		}
	}
	var addrs []string
	for _, in := range o.Status.LoadBalancer.Ingress {
		a := in.IP
		if a == "" {
			a = in.Hostname
		}
		if a != "" && !slices.Contains(addrs, a) {
			addrs = append(addrs, a)
		}
	}
	slices.Sort(addrs)
	ports := "80"
	if len(o.Spec.TLS) > 0 {
		ports = "80, 443"
	}
	// The server prints wide: the addresses are not cut short.
	return cells(o.Name, class, hostCell, strings.Join(addrs, ","), ports, age(&o.ObjectMeta, now))
})

// defaultIngressClassAnnotation marks the IngressClass of Ingresses that
// name none.
const defaultIngressClassAnnotation = "ingressclass.kubernetes.io/is-default-class"

var ingressClassPrinter = printer([]api.TableColumnDefinition{
	nameColumn,
	col("Controller", "string", "Controller that is responsible for handling this class"),
	col("Parameters", "string", "A reference to a resource with additional parameters"),
	ageColumn,
}, func(o *api.IngressClass, now time.Time) api.TableRow {
	name := o.Name
	if o.Annotations[defaultIngressClassAnnotation] == "true" {
		name += " (default)"
	}
	params := "<none>"
	if p := o.Spec.Parameters; p != nil {
		params = p.Kind
		if p.APIGroup != nil {
			params += "." + *p.APIGroup
		}
		params += "/" + p.Name
	}
	return cells(name, o.Spec.Controller, params, age(&o.ObjectMeta, now))
})

var networkPolicyPrinter = printer([]api.TableColumnDefinition{
	nameColumn, col("Pod-Selector", "string", networkingv1.NetworkPolicySpec{}.SwaggerDoc()["podSelector"]), ageColumn,
}, func(o *api.NetworkPolicy, now time.Time) api.TableRow {
	return cells(o.Name, formatSelector(&o.Spec.PodSelector), age(&o.ObjectMeta, now))
})

var priorityClassPrinter = printer([]api.TableColumnDefinition{
	nameColumn,
	col("Value", "integer", schedulingv1.PriorityClass{}.SwaggerDoc()["value"]),
	col("Global-Default", "boolean", schedulingv1.PriorityClass{}.SwaggerDoc()["globalDefault"]),
	ageColumn,
	// kube declares it without a priority and prints it only wide.
	col("PreemptionPolicy", "string", schedulingv1.PriorityClass{}.SwaggerDoc()["preemptionPolicy"]),
}, func(o *api.PriorityClass, now time.Time) api.TableRow {
	var policy string
	if o.PreemptionPolicy != nil {
		policy = string(*o.PreemptionPolicy)
	}
	return cells(o.Name, int64(o.Value), o.GlobalDefault, age(&o.ObjectMeta, now), policy)
})

// kube describes the column with ObjectMeta's (absent) "handler" doc: empty.
var runtimeClassPrinter = printer([]api.TableColumnDefinition{
	nameColumn, col("Handler", "string", metaDoc["handler"]), ageColumn,
}, func(o *api.RuntimeClass, now time.Time) api.TableRow {
	return cells(o.Name, o.Handler, age(&o.ObjectMeta, now))
})

var flowSchemaPrinter = withLess(printer([]api.TableColumnDefinition{
	nameColumn,
	col("PriorityLevel", "string", flowcontrolv1.PriorityLevelConfigurationReference{}.SwaggerDoc()["name"]),
	col("MatchingPrecedence", "string", flowcontrolv1.FlowSchemaSpec{}.SwaggerDoc()["matchingPrecedence"]),
	col("DistinguisherMethod", "string", flowcontrolv1.FlowSchemaSpec{}.SwaggerDoc()["distinguisherMethod"]),
	ageColumn,
	col("MissingPL", "string", "references a broken or non-existent PriorityLevelConfiguration"),
}, func(o *api.FlowSchema, now time.Time) api.TableRow {
	method := "<none>"
	if o.Spec.DistinguisherMethod != nil {
		method = string(o.Spec.DistinguisherMethod.Type)
	}
	missing := "?"
	for _, c := range o.Status.Conditions {
		if c.Type == "Dangling" {
			missing = string(c.Status)
			break
		}
	}
	return cells(o.Name, o.Spec.PriorityLevelConfiguration.Name, int64(o.Spec.MatchingPrecedence), method, age(&o.ObjectMeta, now), missing)
}), func(a, b *api.FlowSchema) bool {
	// kube's FlowSchemaSequence: by matching precedence, then name.
	if a.Spec.MatchingPrecedence != b.Spec.MatchingPrecedence {
		return a.Spec.MatchingPrecedence < b.Spec.MatchingPrecedence
	}
	return a.Name < b.Name
})

// withLess sets the order of p's list rows, for objects of kind T.
func withLess[T api.Object](p *Printer, less func(a, b T) bool) *Printer {
	p.Less = func(a, b api.Object) bool {
		ta, okA := a.(T)
		tb, okB := b.(T)
		return okA && okB && less(ta, tb)
	}
	return p
}

var priorityLevelConfigurationPrinter = printer([]api.TableColumnDefinition{
	nameColumn,
	col("Type", "string", flowcontrolv1.PriorityLevelConfigurationSpec{}.SwaggerDoc()["type"]),
	col("NominalConcurrencyShares", "string", flowcontrolv1.LimitedPriorityLevelConfiguration{}.SwaggerDoc()["nominalConcurrencyShares"]),
	col("Queues", "string", flowcontrolv1.QueuingConfiguration{}.SwaggerDoc()["queues"]),
	col("HandSize", "string", flowcontrolv1.QueuingConfiguration{}.SwaggerDoc()["handSize"]),
	col("QueueLengthLimit", "string", flowcontrolv1.QueuingConfiguration{}.SwaggerDoc()["queueLengthLimit"]),
	ageColumn,
}, func(o *api.PriorityLevelConfiguration, now time.Time) api.TableRow {
	var shares, queues, handSize, limit any = "<none>", "<none>", "<none>", "<none>"
	if l := o.Spec.Limited; l != nil {
		shares = int64(deref(l.NominalConcurrencyShares))
		if q := l.LimitResponse.Queuing; q != nil {
			queues, handSize, limit = int64(q.Queues), int64(q.HandSize), int64(q.QueueLengthLimit)
		}
	}
	return cells(o.Name, string(o.Spec.Type), shares, queues, handSize, limit, age(&o.ObjectMeta, now))
})

var mutatingAdmissionPolicyPrinter = printer([]api.TableColumnDefinition{
	nameColumn,
	col("Mutations", "integer", "Mutation indicates the number of mutations rules defined in this configuration"),
	col("ParamKind", "string", "ParamKind specifies the kind of resources used to parameterize this policy"),
	ageColumn,
}, func(o *api.MutatingAdmissionPolicy, now time.Time) api.TableRow {
	param := "<unset>"
	if pk := o.Spec.ParamKind; pk != nil {
		param = pk.APIVersion + "/" + pk.Kind
	}
	return cells(o.Name, int64(len(o.Spec.Mutations)), param, age(&o.ObjectMeta, now))
})

var mutatingAdmissionPolicyBindingPrinter = printer([]api.TableColumnDefinition{
	nameColumn,
	col("PolicyName", "string", "PolicyName indicates the policy definition which the policy binding binded to"),
	col("ParamRef", "string", "ParamRef indicates the param resource which sets the configuration param"),
	ageColumn,
}, func(o *api.MutatingAdmissionPolicyBinding, now time.Time) api.TableRow {
	param := "<unset>"
	if pr := o.Spec.ParamRef; pr != nil {
		switch {
		case pr.Name != "" && pr.Namespace != "":
			param = pr.Namespace + "/" + pr.Name
		case pr.Name != "":
			param = "*/" + pr.Name
		case pr.Selector != nil:
			param = goSelectorString(pr.Selector)
		}
	}
	return cells(o.Name, o.Spec.PolicyName, param, age(&o.ObjectMeta, now))
})

var clusterTrustBundlePrinter = printer([]api.TableColumnDefinition{
	nameColumn, col("SignerName", "string", certificatesv1.ClusterTrustBundleSpec{}.SwaggerDoc()["signerName"]),
}, func(o *api.ClusterTrustBundle, now time.Time) api.TableRow {
	return cells(o.Name, orNone(o.Spec.SignerName))
})

var componentStatusPrinter = printer([]api.TableColumnDefinition{
	nameColumn,
	col("Status", "string", "Status of the component conditions"),
	col("Message", "string", "Message of the component conditions"),
	col("Error", "string", "Error of the component conditions"),
}, func(o *api.ComponentStatus, now time.Time) api.TableRow {
	status, message, errText := "Unknown", "", ""
	for _, c := range o.Conditions {
		if c.Type == "Healthy" {
			status = "Unhealthy"
			if c.Status == api.ConditionTrue {
				status = "Healthy"
			}
			message, errText = c.Message, c.Error
			break
		}
	}
	return cells(o.Name, status, message, errText)
})
