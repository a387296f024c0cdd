package printers

import (
	"bytes"
	"encoding/json"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"sigs.k8s.io/yaml"
)

// typedKinds are the kinds kubectl's generators (create KIND, run,
// expose) build as typed objects, by "apiVersion/kind": kubectl prints
// them with -o json in their Go types' field order, not sorted.
var typedKinds = map[string]func() any{
	"v1/ConfigMap":                      func() any { return new(corev1.ConfigMap) },
	"v1/Secret":                         func() any { return new(corev1.Secret) },
	"v1/Namespace":                      func() any { return new(corev1.Namespace) },
	"v1/ResourceQuota":                  func() any { return new(corev1.ResourceQuota) },
	"v1/Service":                        func() any { return new(corev1.Service) },
	"v1/ServiceAccount":                 func() any { return new(corev1.ServiceAccount) },
	"v1/Pod":                            func() any { return new(corev1.Pod) },
	"apps/v1/Deployment":                func() any { return new(appsv1.Deployment) },
	"batch/v1/Job":                      func() any { return new(batchv1.Job) },
	"batch/v1/CronJob":                  func() any { return new(batchv1.CronJob) },
	"rbac.authorization.k8s.io/v1/Role": func() any { return new(rbacv1.Role) },
	"rbac.authorization.k8s.io/v1/RoleBinding":        func() any { return new(rbacv1.RoleBinding) },
	"rbac.authorization.k8s.io/v1/ClusterRole":        func() any { return new(rbacv1.ClusterRole) },
	"rbac.authorization.k8s.io/v1/ClusterRoleBinding": func() any { return new(rbacv1.ClusterRoleBinding) },
	"scheduling.k8s.io/v1/PriorityClass":              func() any { return new(schedulingv1.PriorityClass) },
	"policy/v1/PodDisruptionBudget":                   func() any { return new(policyv1.PodDisruptionBudget) },
	"networking.k8s.io/v1/Ingress":                    func() any { return new(networkingv1.Ingress) },
	"authentication.k8s.io/v1/TokenRequest":           func() any { return new(authenticationv1.TokenRequest) },
}

// PrintGenerated writes an object a generator built (or the server
// answered to its create) as kubectl prints it: for the kinds kubectl
// builds typed, through the kind's type (-o json in the type's field
// order, both formats with the zero-valued structs the type always
// writes, as "status: {}"), everything else as PrintObjects does.
// managedFields are left out.
func PrintGenerated(out *bytes.Buffer, format string, obj Obj) error {
	if format == "json" || format == "yaml" {
		if typed, ok := asTyped(obj); ok {
			if format == "json" {
				b, err := json.MarshalIndent(typed, "", "    ")
				if err == nil {
					out.Write(b)
					out.WriteByte('\n')
					return nil
				}
			} else if b, err := json.Marshal(typed); err == nil {
				if y, err := yaml.JSONToYAML(b); err == nil {
					out.Write(y)
					return nil
				}
			}
		}
	}
	return PrintObjects(out, format, []Obj{obj}, false)
}

// asTyped decodes obj into its kind's k8s.io/api type, if it has one
// here.
func asTyped(obj Obj) (any, bool) {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	newT, ok := typedKinds[apiVersion+"/"+kind]
	if !ok {
		return nil, false
	}
	b, err := json.Marshal(withoutManagedFields([]Obj{obj})[0])
	if err != nil {
		return nil, false
	}
	t := newT()
	if json.Unmarshal(b, t) != nil {
		return nil, false
	}
	return t, true
}
