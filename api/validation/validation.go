package validation

import (
	"fmt"
	"reflect"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/api/naming"
)

// Validate checks an object being created. Kinds without rules of their own
// get the metadata checks of their resource table entry; an object of an
// unknown type is an internal error.
func Validate(obj api.Object) field.ErrorList {
	switch o := obj.(type) {
	case *api.Pod:
		return ValidatePod(o)
	case *api.Node:
		return ValidateNode(o)
	case *api.Service:
		return ValidateService(o)
	case *api.Namespace:
		return ValidateNamespace(o)
	case *api.ConfigMap:
		return ValidateConfigMap(o)
	case *api.Secret:
		return ValidateSecret(o)
	case *api.Event:
		return ValidateEvent(o)
	case *api.Endpoints:
		return ValidateEndpoints(o)
	case *api.EndpointSlice:
		return ValidateEndpointSlice(o)
	case *api.Deployment:
		return ValidateDeployment(o)
	case *api.ReplicaSet:
		return ValidateReplicaSet(o)
	case *api.Job:
		return ValidateJob(o)
	case *api.Lease:
		return ValidateLease(o)
	case *api.Binding:
		return ValidateBinding(o)
	case *api.Scale:
		return ValidateScale(o)
	case *api.Role:
		return ValidateRole(o)
	case *api.ClusterRole:
		return ValidateClusterRole(o)
	case *api.RoleBinding:
		return ValidateRoleBinding(o)
	case *api.ClusterRoleBinding:
		return ValidateClusterRoleBinding(o)
	case *api.CertificateSigningRequest:
		return ValidateCertificateSigningRequest(o)
	case *api.APIService:
		return ValidateAPIService(o)
	case *api.ClusterTrustBundle:
		return validateClusterTrustBundle(o, nil)
	case *api.PodCertificateRequest:
		return ValidatePodCertificateRequest(o)
	case *api.IPAddress:
		return validateIPAddress(o)
	}
	if r, ok := resourceOf(obj); ok {
		errs := ValidateObjectMeta(obj.GetObjectMeta(), r.Namespaced, naming.NameIsDNSSubdomain, field.NewPath("metadata"))
		spec, _ := validateServed(obj, nil)
		return append(errs, spec...)
	}
	return field.ErrorList{field.InternalError(field.NewPath(""), fmt.Errorf("no validation for %T", obj))}
}

// ValidateUpdate checks an update of old to obj (same type) by a client of
// the main resource.
func ValidateUpdate(obj, old api.Object) field.ErrorList {
	if reflect.TypeOf(obj) != reflect.TypeOf(old) {
		return field.ErrorList{field.InternalError(field.NewPath(""), fmt.Errorf("cannot update a %T with a %T", old, obj))}
	}
	switch o := obj.(type) {
	case *api.Pod:
		return ValidatePodUpdate(o, old.(*api.Pod))
	case *api.Node:
		return ValidateNodeUpdate(o, old.(*api.Node))
	case *api.Service:
		return ValidateServiceUpdate(o, old.(*api.Service))
	case *api.Namespace:
		return ValidateNamespaceUpdate(o, old.(*api.Namespace))
	case *api.ConfigMap:
		return ValidateConfigMapUpdate(o, old.(*api.ConfigMap))
	case *api.Secret:
		return ValidateSecretUpdate(o, old.(*api.Secret))
	case *api.Event:
		return ValidateEventUpdate(o, old.(*api.Event))
	case *api.Endpoints:
		return ValidateEndpointsUpdate(o, old.(*api.Endpoints))
	case *api.EndpointSlice:
		return ValidateEndpointSliceUpdate(o, old.(*api.EndpointSlice))
	case *api.Deployment:
		return ValidateDeploymentUpdate(o, old.(*api.Deployment))
	case *api.ReplicaSet:
		return ValidateReplicaSetUpdate(o, old.(*api.ReplicaSet))
	case *api.Job:
		return ValidateJobUpdate(o, old.(*api.Job))
	case *api.Lease:
		return ValidateLeaseUpdate(o, old.(*api.Lease))
	case *api.Role:
		return ValidateRoleUpdate(o, old.(*api.Role))
	case *api.ClusterRole:
		return ValidateClusterRoleUpdate(o, old.(*api.ClusterRole))
	case *api.RoleBinding:
		return ValidateRoleBindingUpdate(o, old.(*api.RoleBinding))
	case *api.ClusterRoleBinding:
		return ValidateClusterRoleBindingUpdate(o, old.(*api.ClusterRoleBinding))
	case *api.CertificateSigningRequest:
		return ValidateCertificateSigningRequestUpdate(o, old.(*api.CertificateSigningRequest))
	case *api.APIService:
		return ValidateAPIServiceUpdate(o, old.(*api.APIService))
	case *api.ClusterTrustBundle:
		return validateClusterTrustBundle(o, old.(*api.ClusterTrustBundle))
	case *api.PodCertificateRequest:
		return ValidatePodCertificateRequestUpdate(o, old.(*api.PodCertificateRequest))
	case *api.IPAddress:
		return validateIPAddressUpdate(o, old.(*api.IPAddress))
	}
	if _, ok := resourceOf(obj); ok {
		errs := ValidateObjectMetaUpdate(obj.GetObjectMeta(), old.GetObjectMeta(), field.NewPath("metadata"))
		spec, _ := validateServed(obj, old)
		return append(errs, spec...)
	}
	return field.ErrorList{field.InternalError(field.NewPath(""), fmt.Errorf("no validation for %T", obj))}
}

// ValidateStatusUpdate checks a write to the status subresource of old. The
// apiserver keeps the stored spec on such writes; these rules cover the
// status (and metadata). Kinds whose status has no rules of their own fall
// back to ValidateUpdate.
func ValidateStatusUpdate(obj, old api.Object) field.ErrorList {
	if reflect.TypeOf(obj) != reflect.TypeOf(old) {
		return field.ErrorList{field.InternalError(field.NewPath(""), fmt.Errorf("cannot update a %T with a %T", old, obj))}
	}
	switch o := obj.(type) {
	case *api.Pod:
		return ValidatePodStatusUpdate(o, old.(*api.Pod))
	case *api.Service:
		return ValidateServiceStatusUpdate(o, old.(*api.Service))
	case *api.Namespace:
		return ValidateNamespaceStatusUpdate(o, old.(*api.Namespace))
	case *api.Deployment:
		return ValidateDeploymentStatusUpdate(o, old.(*api.Deployment))
	case *api.ReplicaSet:
		return ValidateReplicaSetStatusUpdate(o, old.(*api.ReplicaSet))
	case *api.Job:
		return ValidateJobStatusUpdate(o, old.(*api.Job))
	case *api.CertificateSigningRequest:
		return ValidateCertificateSigningRequestStatusUpdate(o, old.(*api.CertificateSigningRequest))
	case *api.PodCertificateRequest:
		return ValidatePodCertificateRequestStatusUpdate(o, old.(*api.PodCertificateRequest), time.Now())
	}
	return ValidateUpdate(obj, old)
}

func resourceOf(obj api.Object) (api.ResourceInfo, bool) {
	t := reflect.TypeOf(obj)
	for _, r := range api.Resources {
		if reflect.TypeOf(r.New()) == t {
			return r, true
		}
	}
	return api.ResourceInfo{}, false
}
