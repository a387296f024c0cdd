package volume

import (
	"context"
	"errors"
	"fmt"
	"path"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
)

// Getter fetches what the volumes name. The kubelet implements it with
// its API client and token manager; tests with fixed objects.
type Getter interface {
	ConfigMap(ctx context.Context, namespace, name string) (*api.ConfigMap, error)
	Secret(ctx context.Context, namespace, name string) (*api.Secret, error)
	// ServiceAccountToken returns a token of the pod's service account
	// for the projection (audience, lifetime), bound to the pod.
	ServiceAccountToken(ctx context.Context, pod *api.Pod, src *api.ServiceAccountTokenProjection) (string, error)
	// NodeAllocatable is what the node offers pods: the downward API's
	// value of a limit a container does not set.
	NodeAllocatable() api.ResourceList
	TrustBundles
	PodCertificates
}

// ConfigMapPayload is kube's configMap MakePayload: every key (data and
// binaryData) or the items' keys, with their modes. An absent optional
// config map is an empty payload.
func ConfigMapPayload(ctx context.Context, g Getter, pod *api.Pod, src *api.ConfigMapVolumeSource) (map[string]FileProjection, error) {
	optional := src.Optional != nil && *src.Optional
	cm, err := configMap(ctx, g, pod.Namespace, src.Name, optional)
	if err != nil {
		return nil, err
	}
	return keysPayload(configMapData(cm), src.Items, mode(src.DefaultMode, api.ConfigMapVolumeSourceDefaultMode), optional,
		"configmap references non-existent config key: %v")
}

// SecretPayload is kube's secret MakePayload.
func SecretPayload(ctx context.Context, g Getter, pod *api.Pod, src *api.SecretVolumeSource) (map[string]FileProjection, error) {
	optional := src.Optional != nil && *src.Optional
	s, err := secret(ctx, g, pod.Namespace, src.SecretName, optional)
	if err != nil {
		return nil, err
	}
	return keysPayload(secretData(s), src.Items, mode(src.DefaultMode, api.SecretVolumeSourceDefaultMode), optional,
		"references non-existent secret key: %v")
}

// ProjectedPayload is kube's projected volume collectData: the sources in
// order, each file at its path; every source's failure is reported.
// volume is the volume's name, which identifies its pod certificates.
func ProjectedPayload(ctx context.Context, g Getter, pod *api.Pod, volume string, src *api.ProjectedVolumeSource) (map[string]FileProjection, error) {
	def := mode(src.DefaultMode, api.ProjectedVolumeSourceDefaultMode)
	out := map[string]FileProjection{}
	var errs []error
	add := func(p map[string]FileProjection) {
		for k, v := range p {
			out[k] = v
		}
	}
	// With an fsGroup or a user common to all containers, tokens, trust
	// anchors and keys are the owner's alone (then group-readable by
	// fsGroup).
	ownerMode, user := def, fsUser(pod)
	if user != nil || (pod.Spec.SecurityContext != nil && pod.Spec.SecurityContext.FSGroup != nil) {
		ownerMode = 0o600
	}
	for i, s := range src.Sources {
		switch {
		case s.Secret != nil:
			optional := s.Secret.Optional != nil && *s.Secret.Optional
			sec, err := secret(ctx, g, pod.Namespace, s.Secret.Name, optional)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			p, err := keysPayload(secretData(sec), s.Secret.Items, def, optional, "references non-existent secret key: %v")
			if err != nil {
				errs = append(errs, err)
				continue
			}
			add(p)
		case s.ConfigMap != nil:
			optional := s.ConfigMap.Optional != nil && *s.ConfigMap.Optional
			cm, err := configMap(ctx, g, pod.Namespace, s.ConfigMap.Name, optional)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			p, err := keysPayload(configMapData(cm), s.ConfigMap.Items, def, optional, "configmap references non-existent config key: %v")
			if err != nil {
				errs = append(errs, err)
				continue
			}
			add(p)
		case s.DownwardAPI != nil:
			p, err := DownwardAPIPayload(pod, s.DownwardAPI.Items, def, g.NodeAllocatable())
			if err != nil {
				errs = append(errs, err)
				continue
			}
			add(p)
		case s.ServiceAccountToken != nil:
			tok, err := g.ServiceAccountToken(ctx, pod, s.ServiceAccountToken)
			if err != nil {
				errs = append(errs, fmt.Errorf("failed to fetch token: %w", err))
				continue
			}
			out[s.ServiceAccountToken.Path] = FileProjection{Data: []byte(tok), Mode: ownerMode, FsUser: user}
		case s.ClusterTrustBundle != nil:
			anchors, err := TrustAnchors(ctx, g, s.ClusterTrustBundle)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			out[s.ClusterTrustBundle.Path] = FileProjection{Data: anchors, Mode: ownerMode, FsUser: user}
		case s.PodCertificate != nil:
			key, chain, err := g.PodCertificate(ctx, pod, volume, i, s.PodCertificate)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			add(podCertificatePayload(key, chain, s.PodCertificate, ownerMode, user))
		}
	}
	if len(errs) > 0 {
		return nil, aggregate(errs)
	}
	return out, nil
}

// aggregate words several errors as kube's utilerrors.NewAggregate: one
// alone is itself, more are "[a, b]".
func aggregate(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	msg := "["
	for i, e := range errs {
		if i > 0 {
			msg += ", "
		}
		msg += e.Error()
	}
	return errors.New(msg + "]")
}

func configMap(ctx context.Context, g Getter, ns, name string, optional bool) (*api.ConfigMap, error) {
	cm, err := g.ConfigMap(ctx, ns, name)
	switch {
	case err == nil:
		return cm, nil
	case apierrors.IsNotFound(err) && optional:
		return &api.ConfigMap{}, nil
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("configmap %q not found", name)
	}
	return nil, fmt.Errorf("get configmap %q: %w", name, err)
}

func secret(ctx context.Context, g Getter, ns, name string, optional bool) (*api.Secret, error) {
	s, err := g.Secret(ctx, ns, name)
	switch {
	case err == nil:
		return s, nil
	case apierrors.IsNotFound(err) && optional:
		return &api.Secret{}, nil
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("secret %q not found", name)
	}
	return nil, fmt.Errorf("get secret %q: %w", name, err)
}

func configMapData(cm *api.ConfigMap) map[string][]byte {
	data := map[string][]byte{}
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	for k, v := range cm.BinaryData {
		data[k] = v
	}
	return data
}

func secretData(s *api.Secret) map[string][]byte {
	data := map[string][]byte{}
	for k, v := range s.Data {
		data[k] = v
	}
	for k, v := range s.StringData {
		data[k] = []byte(v)
	}
	return data
}

// keysPayload maps keys to files: all keys at their own name, or the
// items (a missing key fails unless optional).
func keysPayload(data map[string][]byte, items []api.KeyToPath, def int32, optional bool, missing string) (map[string]FileProjection, error) {
	out := map[string]FileProjection{}
	if len(items) == 0 {
		for k, v := range data {
			out[k] = FileProjection{Data: v, Mode: def}
		}
		return out, nil
	}
	for _, it := range items {
		v, ok := data[it.Key]
		if !ok {
			if optional {
				continue
			}
			return nil, fmt.Errorf(missing, it.Key)
		}
		out[path.Clean(it.Path)] = FileProjection{Data: v, Mode: mode(it.Mode, def)}
	}
	return out, nil
}

func mode(m *int32, def int32) int32 {
	if m != nil {
		return *m
	}
	return def
}

// fsUser is kube's FsUserFrom: the runAsUser every init and app container
// of the pod runs as, or nil when one sets none or they differ.
func fsUser(pod *api.Pod) *int64 {
	var user *int64
	cs := append(append([]api.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...)
	for i := range cs {
		var u *int64
		if sc := pod.Spec.SecurityContext; sc != nil && sc.RunAsUser != nil {
			u = sc.RunAsUser
		}
		if sc := cs[i].SecurityContext; sc != nil && sc.RunAsUser != nil {
			u = sc.RunAsUser
		}
		if u == nil || (user != nil && *user != *u) {
			return nil
		}
		user = u
	}
	return user
}
