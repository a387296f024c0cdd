package pods

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/kubelet/runtime"
)

// effectiveSecurityContext merges the pod's securityContext into the
// container's as kube's DetermineEffectiveSecurityContext does: the pod
// gives runAsUser, runAsGroup, runAsNonRoot, seLinuxOptions and
// windowsOptions; each field the container sets wins. Seccomp and AppArmor
// profiles are merged apart (seccompProfile, appArmorProfile).
func effectiveSecurityContext(pod *api.Pod, c *api.Container) api.SecurityContext {
	var sc api.SecurityContext
	if p := pod.Spec.SecurityContext; p != nil {
		sc.SELinuxOptions = p.SELinuxOptions
		sc.WindowsOptions = p.WindowsOptions
		sc.RunAsUser = p.RunAsUser
		sc.RunAsGroup = p.RunAsGroup
		sc.RunAsNonRoot = p.RunAsNonRoot
	}
	cs := c.SecurityContext
	if cs == nil {
		return sc
	}
	if cs.SELinuxOptions != nil {
		sc.SELinuxOptions = cs.SELinuxOptions
	}
	if cs.WindowsOptions != nil {
		w := api.WindowsSecurityContextOptions{}
		if sc.WindowsOptions != nil {
			w = *sc.WindowsOptions
		}
		if cs.WindowsOptions.GMSACredentialSpecName != nil || cs.WindowsOptions.GMSACredentialSpec != nil {
			w.GMSACredentialSpecName, w.GMSACredentialSpec = cs.WindowsOptions.GMSACredentialSpecName, cs.WindowsOptions.GMSACredentialSpec
		}
		if cs.WindowsOptions.RunAsUserName != nil {
			w.RunAsUserName = cs.WindowsOptions.RunAsUserName
		}
		if cs.WindowsOptions.HostProcess != nil {
			w.HostProcess = cs.WindowsOptions.HostProcess
		}
		sc.WindowsOptions = &w
	}
	if cs.Capabilities != nil {
		sc.Capabilities = cs.Capabilities
	}
	if cs.Privileged != nil {
		sc.Privileged = cs.Privileged
	}
	if cs.RunAsUser != nil {
		sc.RunAsUser = cs.RunAsUser
	}
	if cs.RunAsGroup != nil {
		sc.RunAsGroup = cs.RunAsGroup
	}
	if cs.RunAsNonRoot != nil {
		sc.RunAsNonRoot = cs.RunAsNonRoot
	}
	if cs.ReadOnlyRootFilesystem != nil {
		sc.ReadOnlyRootFilesystem = cs.ReadOnlyRootFilesystem
	}
	if cs.AllowPrivilegeEscalation != nil {
		sc.AllowPrivilegeEscalation = cs.AllowPrivilegeEscalation
	}
	if cs.ProcMount != nil {
		sc.ProcMount = cs.ProcMount
	}
	return sc
}

// imageUser splits an image's USER as containerd's CRI image status does:
// a numeric user (the part before ":") is a uid, anything else a name;
// no USER is neither, which kube takes as root.
func imageUser(user string) (*int64, string) {
	if user == "" {
		return new(int64), ""
	}
	u, _, _ := strings.Cut(user, ":")
	if uid, err := strconv.ParseInt(u, 10, 64); err == nil {
		return &uid, ""
	}
	return nil, u
}

// containerSecurity is what kube's determineEffectiveSecurityContext hands
// the runtime for container c of pod, whose image runs as imgUser: the
// effective user (the image's uid or user name when the pod sets no
// runAsUser), fsGroup and supplementalGroups as extra groups, capabilities,
// privileged, read-only root, no_new_privs when allowPrivilegeEscalation is
// false, the seccomp and AppArmor profiles and the masked paths. It fails
// as kube's verifyRunAsNonRoot when runAsNonRoot cannot hold.
func (m *Manager) containerSecurity(pod *api.Pod, c *api.Container, imgUser string) (runtime.Security, error) {
	sc := effectiveSecurityContext(pod, c)
	uid, username := imageUser(imgUser)
	if err := verifyRunAsNonRoot(pod, c, &sc, uid, username); err != nil {
		return runtime.Security{}, err
	}
	sec := runtime.Security{
		RunAsUser:      sc.RunAsUser,
		RunAsGroup:     sc.RunAsGroup,
		Privileged:     sc.Privileged != nil && *sc.Privileged,
		ReadOnlyRootfs: sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem,
		NoNewPrivs:     sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation,
		Seccomp:        m.seccompProfile(pod, c),
		AppArmor:       appArmorProfile(pod, c),
	}
	if sec.RunAsUser == nil {
		sec.RunAsUser, sec.RunAsUsername = uid, username
	}
	if caps := sc.Capabilities; caps != nil {
		for _, a := range caps.Add {
			sec.AddCapabilities = append(sec.AddCapabilities, string(a))
		}
		for _, d := range caps.Drop {
			sec.DropCapabilities = append(sec.DropCapabilities, string(d))
		}
	}
	if p := pod.Spec.SecurityContext; p != nil {
		if p.FSGroup != nil {
			sec.SupplementalGroups = append(sec.SupplementalGroups, *p.FSGroup)
		}
		sec.SupplementalGroups = append(sec.SupplementalGroups, p.SupplementalGroups...)
		sec.StrictSupplementalGroups = p.SupplementalGroupsPolicy != nil && *p.SupplementalGroupsPolicy == api.SupplementalGroupsPolicyStrict
	}
	if sc.ProcMount == nil || *sc.ProcMount != api.UnmaskedProcMount {
		sec.MaskedPaths, sec.ReadonlyPaths = runtime.DefaultMaskedPaths(), runtime.DefaultReadonlyPaths()
	} else {
		sec.MaskedPaths, sec.ReadonlyPaths = []string{}, []string{}
	}
	return sec, nil
}

// verifyRunAsNonRoot is kube's check of runAsNonRoot, with its messages:
// the container's user must be known not to be root.
func verifyRunAsNonRoot(pod *api.Pod, c *api.Container, sc *api.SecurityContext, uid *int64, username string) error {
	if sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		return nil
	}
	if sc.RunAsUser != nil {
		if *sc.RunAsUser == 0 {
			return fmt.Errorf("container's runAsUser breaks non-root policy (pod: %q, container: %s)", podDesc(pod), c.Name)
		}
		return nil
	}
	switch {
	case uid == nil && username != "":
		return fmt.Errorf("container has runAsNonRoot and image has non-numeric user (%s), cannot verify user is non-root (pod: %q, container: %s)", username, podDesc(pod), c.Name)
	case uid != nil && *uid == 0:
		return fmt.Errorf("container has runAsNonRoot and image will run as root (pod: %q, container: %s)", podDesc(pod), c.Name)
	case uid != nil && (*uid < 0 || *uid > math.MaxInt32):
		return fmt.Errorf("container has runAsNonRoot and image has an invalid user id (%d). (Must be 1-(%d)): must be between 0 and 2147483647, inclusive (pod: %q, container: %s)",
			*uid, math.MaxInt32, podDesc(pod), c.Name)
	}
	return nil
}

// seccompProfile is kube's getSeccompProfile: the container's profile,
// else the pod's, else Unconfined (the kubelet's --seccomp-default is
// off); a Localhost profile is a file under the kubelet's
// <root-dir>/seccomp.
func (m *Manager) seccompProfile(pod *api.Pod, c *api.Container) runtime.SecurityProfile {
	var p *api.SeccompProfile
	if c.SecurityContext != nil && c.SecurityContext.SeccompProfile != nil {
		p = c.SecurityContext.SeccompProfile
	} else if pod.Spec.SecurityContext != nil && pod.Spec.SecurityContext.SeccompProfile != nil {
		p = pod.Spec.SecurityContext.SeccompProfile
	}
	if p == nil {
		return runtime.SecurityProfile{Type: runtime.ProfileUnconfined}
	}
	switch p.Type {
	case string(runtime.ProfileRuntimeDefault):
		return runtime.SecurityProfile{Type: runtime.ProfileRuntimeDefault}
	case string(runtime.ProfileLocalhost):
		ref := ""
		if p.LocalhostProfile != nil {
			ref = filepath.Join(m.opts.RootDir, "seccomp", *p.LocalhostProfile)
		}
		return runtime.SecurityProfile{Type: runtime.ProfileLocalhost, LocalhostRef: ref}
	}
	return runtime.SecurityProfile{Type: runtime.ProfileUnconfined}
}

// appArmorProfile is kube's getAppArmorProfile: the container's profile,
// else the pod's; none leaves the runtime's default.
func appArmorProfile(pod *api.Pod, c *api.Container) runtime.SecurityProfile {
	var p *api.AppArmorProfile
	if c.SecurityContext != nil && c.SecurityContext.AppArmorProfile != nil {
		p = c.SecurityContext.AppArmorProfile
	} else if pod.Spec.SecurityContext != nil && pod.Spec.SecurityContext.AppArmorProfile != nil {
		p = pod.Spec.SecurityContext.AppArmorProfile
	}
	if p == nil {
		return runtime.SecurityProfile{}
	}
	switch p.Type {
	case api.AppArmorProfileTypeRuntimeDefault:
		return runtime.SecurityProfile{Type: runtime.ProfileRuntimeDefault}
	case api.AppArmorProfileTypeLocalhost:
		ref := ""
		if p.LocalhostProfile != nil {
			ref = *p.LocalhostProfile
		}
		return runtime.SecurityProfile{Type: runtime.ProfileLocalhost, LocalhostRef: ref}
	}
	return runtime.SecurityProfile{Type: runtime.ProfileUnconfined}
}
