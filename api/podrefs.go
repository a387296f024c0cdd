package api

import "encoding/json"

// VisitPodSecretNames calls visit with the name of every Secret a pod
// references, in its namespace: image pull secrets, env and envFrom of every
// container, secret and projected volumes, and the secretRefs of the volume
// sources kept as raw JSON (csi, cephfs, rbd, iscsi). Names may repeat. It
// stops early, returning false, when visit returns false. The kubelet
// fetches these secrets; the Node authorizer lets a node read only them.
func VisitPodSecretNames(pod *Pod, visit func(name string) bool) bool {
	for _, s := range pod.Spec.ImagePullSecrets {
		if s.Name != "" && !visit(s.Name) {
			return false
		}
	}
	for _, c := range podContainers(pod) {
		for _, e := range c.EnvFrom {
			if e.SecretRef != nil && e.SecretRef.Name != "" && !visit(e.SecretRef.Name) {
				return false
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name != "" &&
				!visit(e.ValueFrom.SecretKeyRef.Name) {
				return false
			}
		}
	}
	for _, v := range pod.Spec.Volumes {
		src := &v.VolumeSource
		if src.Secret != nil && src.Secret.SecretName != "" && !visit(src.Secret.SecretName) {
			return false
		}
		if pr := src.Projected; pr != nil {
			for _, s := range pr.Sources {
				if s.Secret != nil && s.Secret.Name != "" && !visit(s.Secret.Name) {
					return false
				}
			}
		}
		for _, raw := range []struct {
			data json.RawMessage
			key  string
		}{{src.CSI, "nodePublishSecretRef"}, {src.CephFS, "secretRef"}, {src.RBD, "secretRef"}, {src.ISCSI, "secretRef"}} {
			if name := rawRefName(raw.data, raw.key); name != "" && !visit(name) {
				return false
			}
		}
	}
	return true
}

// VisitPodConfigMapNames calls visit with the name of every ConfigMap a pod
// references: env and envFrom of every container, configMap and projected
// volumes. It stops early, returning false, when visit returns false.
func VisitPodConfigMapNames(pod *Pod, visit func(name string) bool) bool {
	for _, c := range podContainers(pod) {
		for _, e := range c.EnvFrom {
			if e.ConfigMapRef != nil && e.ConfigMapRef.Name != "" && !visit(e.ConfigMapRef.Name) {
				return false
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil && e.ValueFrom.ConfigMapKeyRef.Name != "" &&
				!visit(e.ValueFrom.ConfigMapKeyRef.Name) {
				return false
			}
		}
	}
	for _, v := range pod.Spec.Volumes {
		if cm := v.ConfigMap; cm != nil && cm.Name != "" && !visit(cm.Name) {
			return false
		}
		if pr := v.Projected; pr != nil {
			for _, s := range pr.Sources {
				if s.ConfigMap != nil && s.ConfigMap.Name != "" && !visit(s.ConfigMap.Name) {
					return false
				}
			}
		}
	}
	return true
}

// podContainers are every container of the pod whose references count:
// init, regular and ephemeral ones, as Kubernetes' visitors walk them.
func podContainers(pod *Pod) []Container {
	if len(pod.Spec.InitContainers) == 0 && len(pod.Spec.EphemeralContainers) == 0 {
		return pod.Spec.Containers
	}
	out := append(append([]Container(nil), pod.Spec.InitContainers...), pod.Spec.Containers...)
	for _, e := range pod.Spec.EphemeralContainers {
		out = append(out, e.Container)
	}
	return out
}

// rawRefName reads {key: {"name": NAME}} from a volume source kept as raw JSON.
func rawRefName(raw json.RawMessage, key string) string {
	if len(raw) == 0 {
		return ""
	}
	var src map[string]json.RawMessage
	if json.Unmarshal(raw, &src) != nil || src[key] == nil {
		return ""
	}
	var ref struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(src[key], &ref) != nil {
		return ""
	}
	return ref.Name
}
