package controller

import "github.com/minik8s/minik8s/api"

// PartialObject is any object reduced to its type and metadata, like kube's
// PartialObjectMetadata: decoding a list or watch into it skips spec and
// status, so controllers that handle objects of every resource (garbage
// collector, namespace deletion) use it with client.ResourceFor.
type PartialObject struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata"`
}
