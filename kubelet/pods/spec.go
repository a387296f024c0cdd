package pods

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/storagevolume"
	"github.com/minik8s/minik8s/kubelet/poddns"
	"github.com/minik8s/minik8s/kubelet/runtime"
	"github.com/minik8s/minik8s/kubelet/subpath"
	"github.com/minik8s/minik8s/kubelet/volume"
)

// containerHash fingerprints the parts of a container spec whose change
// means the container must be recreated. Its resources are not among
// them: a resize applies them in place (or restarts the container as its
// resizePolicy says), as kube's hash leaves them out.
func containerHash(c *api.Container) string {
	b, _ := json.Marshal(struct {
		Image, WorkingDir string
		Command, Args     []string
		Env               []api.EnvVar
		Mounts            []api.VolumeMount
	}{c.Image, c.WorkingDir, c.Command, c.Args, c.Env, c.VolumeMounts})
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:8])
}

// podDir is the kubelet's directory for a pod.
func (m *Manager) podDir(uid string) string {
	return filepath.Join(m.opts.RootDir, "pods", uid)
}

// LogDir is the pod's log directory by the cross-team convention.
func LogDir(logsDir string, pod *api.Pod) string {
	return filepath.Join(logsDir, fmt.Sprintf("%s_%s_%s", pod.Namespace, pod.Name, pod.UID))
}

// LogPath is the log file of a container instance.
func LogPath(logsDir string, pod *api.Pod, container string, restartCount int) string {
	return filepath.Join(LogDir(logsDir, pod), container, fmt.Sprintf("%d.log", restartCount))
}

// hostname is the pod's hostname (spec.hostname, else its name cut to 63
// characters); "" when spec.hostname is invalid, which validation refuses.
func hostname(pod *api.Pod) string {
	h, _, _ := poddns.HostnameAndDomain(pod, "")
	return h
}

// writeEtcFiles writes the pod's /etc/hosts (when it has an IP or is on
// the host network) and /etc/resolv.conf, and records the events kube's
// kubelet records while forming its DNS configuration.
func (m *Manager) writeEtcFiles(pod *api.Pod, podIP string) error {
	dir := m.podDir(string(pod.UID))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	host, domain, err := poddns.HostnameAndDomain(pod, m.opts.ClusterDomain)
	if err != nil {
		return err
	}
	var ips []string
	if podIP != "" {
		ips = []string{podIP}
	}
	hostsPath := filepath.Join(dir, "etc-hosts")
	if len(ips) > 0 || pod.Spec.HostNetwork {
		hosts, err := poddns.HostsFile(pod, ips, host, domain, poddns.EtcHostsPath)
		if err != nil {
			return err
		}
		if err := os.WriteFile(hostsPath, hosts, 0o644); err != nil {
			return err
		}
	} else if err := os.Remove(hostsPath); err != nil && !os.IsNotExist(err) {
		return err
	}
	dnsCfg, warnings, err := poddns.Configurer{ClusterDNS: m.opts.ClusterDNS, ClusterDomain: m.opts.ClusterDomain, ResolvConf: m.opts.ResolvConf}.PodDNS(pod)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		if w.OnNode {
			node := &api.Node{ObjectMeta: api.ObjectMeta{Name: m.opts.NodeName, UID: api.UID(m.opts.NodeName)}}
			if m.nodes != nil {
				if n, err := m.nodes.Lister().Get(m.opts.NodeName); err == nil {
					node = n
				}
			}
			m.rec.Event(node, api.EventTypeWarning, w.Reason, w.Message)
		} else {
			m.rec.Event(pod, api.EventTypeWarning, w.Reason, w.Message)
		}
	}
	return os.WriteFile(filepath.Join(dir, "resolv.conf"), []byte(dnsCfg.ResolvConf()), 0o644)
}

// volumeError is a volume that could not be set up; its message is the
// kubelet's FailedMount event message.
type volumeError struct {
	volume string
	err    error
}

func (e *volumeError) Error() string {
	return fmt.Sprintf("MountVolume.SetUp failed for volume %q : %v", e.volume, e.err)
}

func (e *volumeError) Unwrap() error { return e.err }

// setUpVolumes materializes the pod's volumes and returns their host paths
// by volume name. The claims of persistentVolumeClaim and generic
// ephemeral volumes are resolved
// first: one that cannot be (missing, unbound) is a *mountWaitError once
// the other volumes are set up, as kube's volume manager mounts what it
// can while it waits. A volume that fails to set up is a *volumeError
// (a *pvSetUpError for a claim's volume).
func (m *Manager) setUpVolumes(ctx context.Context, pod *api.Pod) (map[string]string, error) {
	claims, waitErr := m.resolveClaims(ctx, pod)
	used := usedVolumes(pod)
	paths := map[string]string{}
	dir := filepath.Join(m.podDir(string(pod.UID)), "volumes")
	for _, v := range pod.Spec.Volumes {
		if claim, _ := storagevolume.PodVolumeClaimName(pod, &v); claim != "" {
			cv, ok := claims[v.Name]
			if !ok || !used[v.Name] {
				continue
			}
			p, err := m.setUpClaimedVolume(ctx, pod, v.Name, cv)
			if err != nil {
				return nil, err
			}
			paths[v.Name] = p
			continue
		}
		p, err := m.setUpVolume(ctx, pod, v, dir)
		if err != nil {
			return nil, &volumeError{volume: v.Name, err: err}
		}
		paths[v.Name] = p
	}
	if waitErr != nil {
		return nil, waitErr
	}
	return paths, nil
}

// setUpVolume materializes one volume under dir and returns its host path.
func (m *Manager) setUpVolume(ctx context.Context, pod *api.Pod, v api.Volume, dir string) (string, error) {
	switch {
	case v.EmptyDir != nil:
		return m.setUpEmptyDir(pod, v.EmptyDir, filepath.Join(dir, emptyDirPlugin, v.Name), v.Name)
	case v.HostPath != nil:
		return setUpHostPath(v.HostPath)
	case v.ConfigMap != nil:
		return m.writeVolume(pod, filepath.Join(dir, "kubernetes.io~configmap", v.Name), func(g volume.Getter) (map[string]volume.FileProjection, error) {
			return volume.ConfigMapPayload(ctx, g, pod, v.ConfigMap)
		})
	case v.Secret != nil:
		return m.writeVolume(pod, filepath.Join(dir, "kubernetes.io~secret", v.Name), func(g volume.Getter) (map[string]volume.FileProjection, error) {
			return volume.SecretPayload(ctx, g, pod, v.Secret)
		})
	case v.DownwardAPI != nil:
		return m.writeVolume(pod, filepath.Join(dir, "kubernetes.io~downward-api", v.Name), func(volume.Getter) (map[string]volume.FileProjection, error) {
			return volume.DownwardAPIPayload(pod, v.DownwardAPI.Items, mode(v.DownwardAPI.DefaultMode, api.DownwardAPIVolumeSourceDefaultMode), m.nodeAllocatable())
		})
	case v.Projected != nil:
		return m.writeVolume(pod, filepath.Join(dir, "kubernetes.io~projected", v.Name), func(g volume.Getter) (map[string]volume.FileProjection, error) {
			return volume.ProjectedPayload(ctx, g, pod, v.Name, v.Projected)
		})
	case len(v.Image) > 0:
		return m.setUpImageVolume(ctx, pod, v.Name, v.Image, filepath.Join(dir, imageVolumePlugin, v.Name))
	default:
		return "", fmt.Errorf("only emptyDir, hostPath, configMap, secret, downwardAPI, projected, image and persistentVolumeClaim volumes are supported")
	}
}

// writeVolume publishes the payload of an API-backed volume into dir
// atomically (an unchanged payload writes nothing), group-owned by the
// pod's fsGroup, and returns dir.
func (m *Manager) writeVolume(pod *api.Pod, dir string, payload func(volume.Getter) (map[string]volume.FileProjection, error)) (string, error) {
	files, err := payload(volumeGetter{m})
	if err != nil {
		return "", err
	}
	w := volume.NewAtomicWriter(dir)
	w.FSGroup = fsGroup(pod)
	if _, err := w.Write(files); err != nil {
		return "", err
	}
	return dir, nil
}

// fsGroup is the pod's securityContext.fsGroup, or nil.
func fsGroup(pod *api.Pod) *int64 {
	if pod.Spec.SecurityContext == nil {
		return nil
	}
	return pod.Spec.SecurityContext.FSGroup
}

func mode(m *int32, def int32) int32 {
	if m != nil {
		return *m
	}
	return def
}

// volumeGetter reads what volumes name through the kubelet's client and
// token manager.
type volumeGetter struct{ m *Manager }

var _ volume.Getter = volumeGetter{}

func (g volumeGetter) ConfigMap(ctx context.Context, ns, name string) (*api.ConfigMap, error) {
	return client.Resource[api.ConfigMap](g.m.client).Namespace(ns).Get(ctx, name)
}

func (g volumeGetter) NodeAllocatable() api.ResourceList { return g.m.nodeAllocatable() }

func (g volumeGetter) Secret(ctx context.Context, ns, name string) (*api.Secret, error) {
	return client.Resource[api.Secret](g.m.client).Namespace(ns).Get(ctx, name)
}

// ServiceAccountToken asks for a token of the pod's service account bound
// to the pod, as kube's projected volume does: the projection's audience
// (none: the apiserver's audiences) and lifetime.
func (g volumeGetter) ServiceAccountToken(ctx context.Context, pod *api.Pod, src *api.ServiceAccountTokenProjection) (string, error) {
	exp := api.ServiceAccountTokenDefaultExpirationSeconds
	if src.ExpirationSeconds != nil {
		exp = *src.ExpirationSeconds
	}
	auds := []string{}
	if src.Audience != "" {
		auds = []string{src.Audience}
	}
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	tr, err := g.m.tokens.GetServiceAccountToken(ctx, pod.Namespace, sa, &api.TokenRequest{Spec: api.TokenRequestSpec{
		Audiences: auds, ExpirationSeconds: &exp,
		BoundObjectRef: &api.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
	}})
	if err != nil {
		return "", err
	}
	return tr.Status.Token, nil
}

// mounts returns the bind mounts of container c: its volume mounts plus
// the pod's /etc/resolv.conf and /etc/hosts (as kube's makeMounts: when
// the kubelet wrote one and c mounts nothing of its own there). The
// volumes the kubelet writes from the API (configMap, secret, downwardAPI, projected) are
// always mounted read-only (and image volumes, which are read-only anyway), as Kubernetes does since CVE-2017-1002102: a
// container that could rewrite their ..data link could make the kubelet
// read and remove host paths at the next refresh. env is the container's
// resolved environment, which subPathExpr expands from.
func (m *Manager) mounts(pod *api.Pod, c *api.Container, volumes map[string]string, env []string) ([]runtime.Mount, error) {
	mustRO := map[string]bool{}
	for _, v := range pod.Spec.Volumes {
		if v.ConfigMap != nil || v.Secret != nil || v.DownwardAPI != nil || v.Projected != nil || len(v.Image) > 0 {
			mustRO[v.Name] = true
		}
		// A claim the pod names readOnly is mounted read-only in every
		// container, as the volume's mounter says in kube.
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ReadOnly {
			mustRO[v.Name] = true
		}
	}
	dir := m.podDir(string(pod.UID))
	out := []runtime.Mount{{HostPath: filepath.Join(dir, "resolv.conf"), ContainerPath: "/etc/resolv.conf"}}
	hostsPath := filepath.Join(dir, "etc-hosts")
	var written []string // the hosts file is written once the pod has an IP
	if _, err := os.Stat(hostsPath); err == nil {
		written = []string{hostsPath}
	}
	if poddns.MountsHostsFile(pod, written, c) {
		out = append(out, runtime.Mount{HostPath: hostsPath, ContainerPath: poddns.EtcHostsPath})
	}
	for i, vm := range c.VolumeMounts {
		hp, ok := volumes[vm.Name]
		if !ok {
			return nil, fmt.Errorf("cannot find volume %q to mount into container %q", vm.Name, c.Name)
		}
		sub, err := subPathOf(vm, env)
		if err != nil {
			return nil, err
		}
		if sub != "" {
			if hp, err = m.subPathMount(dir, c.Name, i, vm.Name, hp, sub); err != nil {
				return nil, err
			}
		}
		out = append(out, runtime.Mount{HostPath: hp, ContainerPath: vm.MountPath, ReadOnly: vm.ReadOnly || mustRO[vm.Name]})
	}
	return out, nil
}

// subPathOf is the mount's subPath, subPathExpr expanded from env, checked
// as kube's makeMounts checks it: relative and without "..".
func subPathOf(vm api.VolumeMount, env []string) (string, error) {
	sub := vm.SubPath
	if vm.SubPathExpr != "" {
		var err error
		if sub, err = expandSubPathExpr(vm.SubPathExpr, env); err != nil {
			return "", err
		}
	}
	if sub == "" {
		return "", nil
	}
	if filepath.IsAbs(sub) {
		return "", fmt.Errorf("error SubPath `%s` must not be an absolute path", sub)
	}
	if slices.Contains(strings.Split(filepath.ToSlash(sub), "/"), "..") {
		return "", fmt.Errorf("unable to provision SubPath `%s`: must not contain '..'", sub)
	}
	return sub, nil
}

// expandSubPathExpr expands $(VAR) from the container's environment as
// kube's ExpandContainerVolumeMounts does: a variable that is unset or
// empty is an error, not a path that silently means the whole volume.
func expandSubPathExpr(expr string, env []string) (string, error) {
	vars := envMap(env)
	var missing []string
	out := expandWith(expr, func(name string) (string, bool) {
		v := vars[name]
		if v == "" && !slices.Contains(missing, name) {
			missing = append(missing, name)
		}
		return v, true
	})
	if len(missing) > 0 {
		slices.Sort(missing)
		return "", fmt.Errorf("missing value for %s", strings.Join(missing, ", "))
	}
	return out, nil
}

// subPathMount makes the mount source of a subPath of the volume at
// volumePath: the subdirectory is created if missing, then bind-mounted
// through an fd opened without following links onto a kubelet-owned
// target (kubelet/subpath), so a link the pod's containers plant in the
// volume cannot turn the mount into a host path. The errors say no more
// than kube's do: the details would describe the host's file system.
func (m *Manager) subPathMount(podDir, container string, index int, volumeName, volumePath, sub string) (string, error) {
	path := filepath.Join(volumePath, sub)
	if _, err := os.Stat(path); os.IsNotExist(err) {
		st, err := os.Stat(volumePath)
		if err != nil {
			return "", err
		}
		// The subdirectory gets the volume's mode (an emptyDir's 0777).
		if err := subpath.SafeMakeDir(sub, volumePath, st.Mode()); err != nil && !errors.Is(err, os.ErrExist) {
			m.log.Warn("create subPath directory", "container", container, "volumeMount", volumeName, "err", err)
			return "", fmt.Errorf("failed to create subPath directory for volumeMount %q of container %q", volumeName, container)
		}
	}
	target, err := subpath.Prepare(subpath.Subpath{VolumeMountIndex: index, Path: path, VolumeName: volumeName,
		VolumePath: volumePath, PodDir: podDir, ContainerName: container})
	if err != nil {
		m.log.Warn("prepare subPath", "container", container, "volumeMount", volumeName, "err", err)
		return "", fmt.Errorf("failed to prepare subPath for volumeMount %q of container %q", volumeName, container)
	}
	return target, nil
}

// env resolves the container's environment: envFrom, then env with
// valueFrom (fieldRef, resourceFieldRef, configMapKeyRef, secretKeyRef) and
// $(VAR) references to earlier variables.
func (m *Manager) env(ctx context.Context, pod *api.Pod, c *api.Container, podIP string) ([]string, error) {
	vals := map[string]string{}
	var order []string
	set := func(k, v string) {
		if _, ok := vals[k]; !ok {
			order = append(order, k)
		}
		vals[k] = v
	}
	for _, ef := range c.EnvFrom {
		switch {
		case ef.ConfigMapRef != nil:
			cm, err := client.Resource[api.ConfigMap](m.client).Namespace(pod.Namespace).Get(ctx, ef.ConfigMapRef.Name)
			if err != nil {
				if ef.ConfigMapRef.Optional != nil && *ef.ConfigMapRef.Optional {
					continue
				}
				return nil, fmt.Errorf("configmap %q not found", ef.ConfigMapRef.Name)
			}
			for _, k := range slices.Sorted(maps.Keys(cm.Data)) {
				set(ef.Prefix+k, cm.Data[k])
			}
		case ef.SecretRef != nil:
			s, err := client.Resource[api.Secret](m.client).Namespace(pod.Namespace).Get(ctx, ef.SecretRef.Name)
			if err != nil {
				if ef.SecretRef.Optional != nil && *ef.SecretRef.Optional {
					continue
				}
				return nil, fmt.Errorf("secret %q not found", ef.SecretRef.Name)
			}
			for k, v := range s.Data {
				set(ef.Prefix+k, string(v))
			}
		}
	}
	svcEnv := m.serviceEnv(pod)
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			// $(VAR) sees the variables so far, then the services'.
			lookup := vals
			if strings.Contains(e.Value, "$(") {
				lookup = maps.Clone(svcEnv)
				maps.Copy(lookup, vals)
			}
			set(e.Name, expand(e.Value, lookup))
			continue
		}
		v, err := m.valueFrom(ctx, pod, c, e.ValueFrom, podIP)
		if err != nil {
			return nil, fmt.Errorf("env %s: %w", e.Name, err)
		}
		set(e.Name, v)
	}
	// The services' variables come last, where the pod set none itself.
	for _, k := range slices.Sorted(maps.Keys(svcEnv)) {
		if _, ok := vals[k]; !ok {
			set(k, svcEnv[k])
		}
	}
	out := make([]string, 0, len(order))
	for _, k := range order {
		out = append(out, k+"="+vals[k])
	}
	return out, nil
}

func (m *Manager) valueFrom(ctx context.Context, pod *api.Pod, c *api.Container, src *api.EnvVarSource, podIP string) (string, error) {
	switch {
	case src.FieldRef != nil:
		hostIP := ""
		if p := src.FieldRef.FieldPath; p == "status.hostIP" || p == "status.hostIPs" {
			hostIP = m.hostIP()
		}
		return volume.FieldValue(pod, src.FieldRef.FieldPath, podIP, hostIP)
	case src.ResourceFieldRef != nil:
		target := c
		if n := src.ResourceFieldRef.ContainerName; n != "" {
			for i := range pod.Spec.Containers {
				if pod.Spec.Containers[i].Name == n {
					target = &pod.Spec.Containers[i]
				}
			}
		}
		return volume.ResourceValue(src.ResourceFieldRef, target, m.nodeAllocatable())
	case src.ConfigMapKeyRef != nil:
		r := src.ConfigMapKeyRef
		cm, err := client.Resource[api.ConfigMap](m.client).Namespace(pod.Namespace).Get(ctx, r.Name)
		if err == nil {
			if v, ok := cm.Data[r.Key]; ok {
				return v, nil
			}
		}
		if r.Optional != nil && *r.Optional {
			return "", nil
		}
		return "", fmt.Errorf("couldn't find key %s in ConfigMap %s/%s", r.Key, pod.Namespace, r.Name)
	case src.SecretKeyRef != nil:
		r := src.SecretKeyRef
		s, err := client.Resource[api.Secret](m.client).Namespace(pod.Namespace).Get(ctx, r.Name)
		if err == nil {
			if v, ok := s.Data[r.Key]; ok {
				return string(v), nil
			}
		}
		if r.Optional != nil && *r.Optional {
			return "", nil
		}
		return "", fmt.Errorf("couldn't find key %s in Secret %s/%s", r.Key, pod.Namespace, r.Name)
	}
	return "", nil
}

// expand replaces $(VAR) with known variables; $$ escapes, unknown
// references are kept verbatim (kube's expansion rules).
func expand(s string, vars map[string]string) string {
	return expandWith(s, func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	})
}

// expandWith is expand with a lookup; a reference lookup does not know
// is kept verbatim.
func expandWith(s string, lookup func(string) (string, bool)) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			name := s[i+2 : i+2+end]
			if v, ok := lookup(name); ok {
				b.WriteString(v)
			} else {
				b.WriteString(s[i : i+3+end])
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

// envMap indexes NAME=value pairs by name.
func envMap(env []string) map[string]string {
	vars := make(map[string]string, len(env))
	for _, e := range env {
		k, v, _ := strings.Cut(e, "=")
		vars[k] = v
	}
	return vars
}

func expandAll(in []string, env []string) []string {
	if len(in) == 0 {
		return in
	}
	vars := envMap(env)
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = expand(s, vars)
	}
	return out
}
