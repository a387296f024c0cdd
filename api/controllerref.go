package api

// GetControllerOf returns the owner reference of meta that has
// controller=true, or nil. Validation allows at most one.
func GetControllerOf(meta *ObjectMeta) *OwnerReference {
	for i := range meta.OwnerReferences {
		if r := &meta.OwnerReferences[i]; r.Controller != nil && *r.Controller {
			return r
		}
	}
	return nil
}

// IsControlledBy reports whether the object with uid is meta's controller.
func IsControlledBy(meta *ObjectMeta, uid UID) bool {
	ref := GetControllerOf(meta)
	return ref != nil && ref.UID == uid
}
