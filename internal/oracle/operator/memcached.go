package operator

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the API group and version of Memcached objects.
var GroupVersion = schema.GroupVersion{Group: "cache.example.com", Version: "v1alpha1"}

// AddToScheme registers Memcached and MemcachedList, as kubebuilder's
// generated zz_generated files and SchemeBuilder do.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Memcached{}, &MemcachedList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// MemcachedSpec is the desired state: how many memcached servers, from
// which image, on which port. The CRD's schema defaults image and port.
type MemcachedSpec struct {
	Size  int32  `json:"size"`
	Image string `json:"image,omitempty"`
	Port  int32  `json:"port,omitempty"`
}

// MemcachedStatus is what the operator observed. replicas and selector
// back the scale subresource.
type MemcachedStatus struct {
	Replicas           int32              `json:"replicas,omitempty"`
	Selector           string             `json:"selector,omitempty"`
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
}

// Memcached is the custom resource.
type Memcached struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              MemcachedSpec   `json:"spec,omitempty"`
	Status            MemcachedStatus `json:"status,omitempty"`
}

// MemcachedList is a list of Memcached.
type MemcachedList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Memcached `json:"items"`
}

// DeepCopyInto copies m into out (what controller-gen would generate).
func (m *Memcached) DeepCopyInto(out *Memcached) {
	*out = *m
	out.TypeMeta = m.TypeMeta
	m.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec = m.Spec
	out.Status = m.Status
	if m.Status.Conditions != nil {
		out.Status.Conditions = make([]metav1.Condition, len(m.Status.Conditions))
		for i := range m.Status.Conditions {
			m.Status.Conditions[i].DeepCopyInto(&out.Status.Conditions[i])
		}
	}
}

// DeepCopy returns a copy of m.
func (m *Memcached) DeepCopy() *Memcached {
	if m == nil {
		return nil
	}
	out := new(Memcached)
	m.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (m *Memcached) DeepCopyObject() runtime.Object { return m.DeepCopy() }

// DeepCopyObject implements runtime.Object.
func (l *MemcachedList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := &MemcachedList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]Memcached, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}
