package registry

import "github.com/minik8s/minik8s/api"

// generationRule is how a kind's metadata.generation goes. kube-apiserver
// sets it only where a kind's strategy does: most kinds with a spec
// (workloads, policies, admission configuration) start at 1 and count
// each change of the spec, every custom resource and CRD too, while
// ConfigMaps, Secrets, Services, ServiceAccounts, RBAC objects, Leases,
// Namespaces, Nodes and the others are written without one.
type generationRule int

const (
	// noGeneration: never set (0, so absent from the JSON).
	noGeneration generationRule = iota
	// countedGeneration: 1 at creation, one more for each change of the
	// spec (everything but metadata and status).
	countedGeneration
	// updateCountedGeneration: none at creation, one more for each change
	// of the spec (kube's CSIDriver strategy).
	updateCountedGeneration
)

// generationRules are the built-in resources, by group/resource, whose
// kube-apiserver strategy keeps a generation; a built-in resource not
// here has none.
var generationRules = map[string]generationRule{
	"/pods":                                    countedGeneration,
	"/podtemplates":                            countedGeneration,
	"/replicationcontrollers":                  countedGeneration,
	"apps/deployments":                         countedGeneration,
	"apps/replicasets":                         countedGeneration,
	"apps/statefulsets":                        countedGeneration,
	"apps/daemonsets":                          countedGeneration,
	"batch/jobs":                               countedGeneration,
	"batch/cronjobs":                           countedGeneration,
	"autoscaling/horizontalpodautoscalers":     countedGeneration,
	"policy/poddisruptionbudgets":              countedGeneration,
	"networking.k8s.io/ingresses":              countedGeneration,
	"networking.k8s.io/ingressclasses":         countedGeneration,
	"networking.k8s.io/networkpolicies":        countedGeneration,
	"discovery.k8s.io/endpointslices":          countedGeneration,
	"scheduling.k8s.io/priorityclasses":        countedGeneration,
	"flowcontrol.apiserver.k8s.io/flowschemas": countedGeneration,
	"flowcontrol.apiserver.k8s.io/prioritylevelconfigurations":       countedGeneration,
	"resource.k8s.io/resourceslices":                                 countedGeneration,
	"resource.k8s.io/deviceclasses":                                  countedGeneration,
	"resource.k8s.io/devicetaintrules":                               countedGeneration,
	"admissionregistration.k8s.io/validatingadmissionpolicies":       countedGeneration,
	"admissionregistration.k8s.io/validatingadmissionpolicybindings": countedGeneration,
	"admissionregistration.k8s.io/mutatingadmissionpolicies":         countedGeneration,
	"admissionregistration.k8s.io/mutatingadmissionpolicybindings":   countedGeneration,
	"admissionregistration.k8s.io/mutatingwebhookconfigurations":     countedGeneration,
	"admissionregistration.k8s.io/validatingwebhookconfigurations":   countedGeneration,
	"apiextensions.k8s.io/customresourcedefinitions":                 countedGeneration,
	"storage.k8s.io/csidrivers":                                      updateCountedGeneration,
}

// generationRuleFor is ri's rule; a resource that is not built in is a
// custom resource, whose generation is counted.
func generationRuleFor(ri api.ResourceInfo) generationRule {
	if _, builtin := api.LookupResource(ri.Group, ri.Resource); !builtin {
		return countedGeneration
	}
	return generationRules[ri.Group+"/"+ri.Resource]
}

// atCreate is a new object's generation.
func (r generationRule) atCreate() int64 {
	if r == countedGeneration {
		return 1
	}
	return 0
}

// counts says whether a change of the spec makes a new generation.
func (r generationRule) counts() bool { return r != noGeneration }
