package admission

import "github.com/minik8s/minik8s/api/apierrors"

// NewForbidden is kube-apiserver's admission.NewForbidden: a 403 for the
// object being admitted, `<resource> "<name>" is forbidden: <err>`, the name
// taken from the request or, on create, from the object. An error that is
// already a Forbidden is returned as is.
func NewForbidden(a *Attributes, err error) error {
	if apierrors.IsForbidden(err) {
		return err
	}
	name := a.Name
	if name == "" {
		if a.Object != nil {
			name = a.Object.GetObjectMeta().Name
		} else if a.OldObject != nil {
			name = a.OldObject.GetObjectMeta().Name
		}
	}
	return apierrors.NewForbidden(apierrors.GroupResource{Group: a.Resource.Group, Resource: a.Resource.Resource}, name, err)
}
