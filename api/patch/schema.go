package patch

import "strings"

// Schema tells the strategic merge patch how to treat a field. path is the
// field names from the document root with list indices left out (the
// containers of a Deployment are ["spec","template","spec","containers"]; a
// container's env is [..., "containers", "env"]). mergeKey is the
// patchMergeKey tag ("name"), strategy the patchStrategy tag: "merge",
// "replace", "retainKeys" or "merge,retainKeys"; both empty for a field
// without tags, whose lists are replaced and whose objects merge.
type Schema interface {
	Lookup(path []string) (mergeKey string, strategy string)
}

// fieldMeta is a parsed Schema answer.
type fieldMeta struct {
	mergeKey   string
	strategy   string // "merge", "replace" or ""
	retainKeys bool
}

func lookup(s Schema, path []string) fieldMeta {
	if s == nil {
		return fieldMeta{}
	}
	key, strategy := s.Lookup(path)
	m := fieldMeta{mergeKey: key}
	for _, part := range strings.Split(strategy, ",") {
		switch part = strings.TrimSpace(part); part {
		case "retainKeys":
			m.retainKeys = true
		case "":
		default:
			m.strategy = part
		}
	}
	return m
}

// Tags is a Schema given as a table from dotted field paths
// ("spec.template.spec.containers") to tags.
type Tags map[string]Tag

// Tag is one field's patchMergeKey and patchStrategy.
type Tag struct {
	MergeKey string
	Strategy string
}

var _ Schema = Tags(nil)

// Lookup implements Schema.
func (t Tags) Lookup(path []string) (string, string) {
	tag := t[strings.Join(path, ".")]
	return tag.MergeKey, tag.Strategy
}

// NoSchema knows no tags: every list is replaced, every object merged.
var NoSchema Schema = Tags(nil)

func (t Tags) with(prefix string, more Tags) Tags {
	for k, v := range more {
		t[prefix+k] = v
	}
	return t
}

var (
	mergeBy = func(key string) Tag { return Tag{MergeKey: key, Strategy: "merge"} }

	objectMetaTags = Tags{
		"finalizers":      {Strategy: "merge"},
		"ownerReferences": mergeBy("uid"),
	}

	containerTags = Tags{
		"env":           mergeBy("name"),
		"ports":         mergeBy("containerPort"),
		"volumeDevices": mergeBy("devicePath"),
		"volumeMounts":  mergeBy("mountPath"),
	}

	podSpecTags = func() Tags {
		t := Tags{
			"containers":                mergeBy("name"),
			"initContainers":            mergeBy("name"),
			"ephemeralContainers":       mergeBy("name"),
			"evictionResponders":        mergeBy("name"),
			"hostAliases":               mergeBy("ip"),
			"imagePullSecrets":          mergeBy("name"),
			"resourceClaims":            {MergeKey: "name", Strategy: "merge,retainKeys"},
			"schedulingGates":           mergeBy("name"),
			"topologySpreadConstraints": mergeBy("topologyKey"),
			"volumes":                   {MergeKey: "name", Strategy: "merge,retainKeys"},
		}
		for _, c := range []string{"containers", "initContainers", "ephemeralContainers"} {
			t.with(c+".", containerTags)
		}
		return t.with("volumes.ephemeral.volumeClaimTemplate.metadata.", objectMetaTags)
	}()

	podStatusTags = func() Tags {
		t := Tags{
			"conditions":                           mergeBy("type"),
			"hostIPs":                              mergeBy("ip"),
			"podIPs":                               mergeBy("ip"),
			"nodeAllocatableResourceClaimStatuses": mergeBy("resourceClaimName"),
			"nodeAllocatableResourceClaimStatuses.mapping":  mergeBy("name"),
			"nodeAllocatableResourceClaimStatuses.overhead": mergeBy("name"),
			"resourceClaimStatuses":                         {MergeKey: "name", Strategy: "merge,retainKeys"},
			"volumeHealth.healthConditions":                 mergeBy("status"),
		}
		for _, s := range []string{"containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses"} {
			t[s+".allocatedResourcesStatus"] = mergeBy("name")
			t[s+".volumeMounts"] = mergeBy("mountPath")
		}
		return t
	}()

	podTemplateTags = Tags{}.with("metadata.", objectMetaTags).with("spec.", podSpecTags)

	conditionsTags = Tags{"status.conditions": mergeBy("type")}

	kindTags = map[string]Tags{
		"Pod":           Tags{}.with("spec.", podSpecTags).with("status.", podStatusTags),
		"Deployment":    Tags{"spec.strategy": {Strategy: "retainKeys"}}.with("spec.template.", podTemplateTags).with("", conditionsTags),
		"ReplicaSet":    Tags{}.with("spec.template.", podTemplateTags).with("", conditionsTags),
		"Job":           Tags{"spec.scheduling.resourceClaims": mergeBy("name")}.with("spec.template.", podTemplateTags).with("", conditionsTags),
		"Node":          Tags{"spec.podCIDRs": {Strategy: "merge"}, "status.addresses": mergeBy("type")}.with("", conditionsTags),
		"Service":       Tags{"spec.ports": mergeBy("port")}.with("", conditionsTags),
		"Namespace":     Tags{}.with("", conditionsTags),
		"Endpoints":     {},
		"EndpointSlice": {},
		"ConfigMap":     {},
		"Secret":        {},
		"Event":         {},
		"Lease":         {},
		// The kinds served for the real kube-scheduler and controller-manager.
		"StatefulSet":                      Tags{}.with("spec.template.", podTemplateTags).with("", conditionsTags),
		"DaemonSet":                        Tags{}.with("spec.template.", podTemplateTags).with("", conditionsTags),
		"ReplicationController":            Tags{}.with("spec.template.", podTemplateTags).with("", conditionsTags),
		"CronJob":                          Tags{"spec.jobTemplate.spec.scheduling.resourceClaims": mergeBy("name")}.with("spec.jobTemplate.spec.template.", podTemplateTags),
		"PodDisruptionBudget":              Tags{"spec.selector": {Strategy: "replace"}}.with("", conditionsTags),
		"HorizontalPodAutoscaler":          Tags{}.with("", conditionsTags),
		"APIService":                       Tags{}.with("", conditionsTags),
		"PersistentVolumeClaim":            Tags{}.with("", conditionsTags),
		"ServiceAccount":                   Tags{"secrets": mergeBy("name")},
		"CSINode":                          Tags{"spec.drivers": mergeBy("name"), "status.storageHealth": mergeBy("name")},
		"ResourceClaim":                    Tags{"status.reservedFor": mergeBy("uid")},
		"DeviceTaintRule":                  Tags{}.with("", conditionsTags),
		"ServiceCIDR":                      Tags{}.with("", conditionsTags),
		"PodCertificateRequest":            Tags{}.with("", conditionsTags),
		"StorageVersionMigration":          Tags{}.with("", conditionsTags),
		"ValidatingAdmissionPolicy":        Tags{"spec.matchConditions": mergeBy("name"), "spec.variables": mergeBy("name")},
		"ValidatingAdmissionPolicyBinding": {},
		"MutatingWebhookConfiguration":     Tags{"webhooks": mergeBy("name"), "webhooks.matchConditions": mergeBy("name")},
		"ValidatingWebhookConfiguration":   Tags{"webhooks": mergeBy("name"), "webhooks.matchConditions": mergeBy("name")},
		"PodTemplate":                      Tags{}.with("template.", podTemplateTags),
		"LimitRange":                       {},
		"Ingress":                          {},
		"IngressClass":                     {},
		"NetworkPolicy":                    {},
		"PriorityClass":                    {},
		"RuntimeClass":                     {},
		"FlowSchema":                       Tags{}.with("", conditionsTags),
		"PriorityLevelConfiguration":       Tags{}.with("", conditionsTags),
		"MutatingAdmissionPolicy":          Tags{"spec.matchConditions": mergeBy("name")},
		"MutatingAdmissionPolicyBinding":   {},
		"ClusterTrustBundle":               {},
		"ComponentStatus":                  Tags{"conditions": mergeBy("type")},
	}
)

func init() {
	for _, t := range kindTags {
		t.with("metadata.", objectMetaTags)
	}
}

// KubernetesSchema returns the patch tags of a kind minik8s serves ("Pod",
// "Deployment", "ReplicaSet", "Job", "Node", "Service", "Endpoints",
// "EndpointSlice", "Namespace", "ConfigMap", "Secret", "Event", "Lease"),
// the same as the patchMergeKey/patchStrategy tags of k8s.io/api v0.37.
// Node spec.taints and Endpoints subsets carry no tags in Kubernetes and are
// replaced whole. Any other kind gets the object-metadata tags only
// (finalizers and ownerReferences merge). The result must not be modified.
func KubernetesSchema(kind string) Schema {
	if t, ok := kindTags[kind]; ok {
		return t
	}
	return metadataOnly
}

var metadataOnly = Tags{}.with("metadata.", objectMetaTags)
