package containerd

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/containerd/containerd/v2/contrib/apparmor"
	"github.com/containerd/containerd/v2/contrib/seccomp"
	"github.com/containerd/containerd/v2/core/containers"
	hostapparmor "github.com/containerd/containerd/v2/pkg/apparmor"
	"github.com/containerd/containerd/v2/pkg/cap"
	"github.com/containerd/containerd/v2/pkg/oci"
	"github.com/minik8s/minik8s/kubelet/runtime"
)

// appArmorDefaultProfile is the name containerd's CRI plugin loads its
// default AppArmor profile under.
const appArmorDefaultProfile = "cri-containerd.apparmor.d"

// securityOpts turns a container's runtime.Security into spec options the
// way containerd's CRI plugin builds a container's spec (buildLinuxSpec,
// platformSpecOpts, containerSpecOpts): the spec's default seccomp,
// AppArmor and rlimits are cleared, privileges and masked paths set from
// the security context, capabilities changed from the default set, then
// the user (the image's USER when the pod sets none, names resolved in the
// image's /etc/passwd), the groups, AppArmor and seccomp. imageUser is the
// image's USER; the options run after oci.WithImageConfig.
func securityOpts(sec runtime.Security, imageUser string) ([]oci.SpecOpts, error) {
	opts := []oci.SpecOpts{
		withoutDefaultSecurity,
		// no_new_privs only when asked for below.
		oci.WithNewPrivileges,
		oci.WithMaskedPaths(sec.MaskedPaths),
		oci.WithReadonlyPaths(sec.ReadonlyPaths),
	}
	capOpts, err := capabilityOpts(sec)
	if err != nil {
		return nil, err
	}
	opts = append(opts, capOpts...)
	if sec.Privileged {
		// Every capability, no masked or read-only paths, writable /sys and
		// cgroupfs, no seccomp or AppArmor; and every host device.
		opts = append(opts, oci.WithPrivileged, oci.WithHostDevices, oci.WithAllDevicesAllowed)
	}
	// Ambient capabilities are cleared, as Docker does: what a non-root
	// user with added capabilities gets is not defined by Kubernetes.
	opts = append(opts, withoutAmbientCaps)
	if sec.NoNewPrivs {
		opts = append(opts, oci.WithNoNewPrivileges)
	}
	if sec.ReadOnlyRootfs {
		opts = append(opts, oci.WithRootFSReadonly())
	}

	user, err := userString(sec, imageUser)
	if err != nil {
		return nil, err
	}
	if user != "" {
		opts = append(opts, oci.WithUser(user))
	}
	if !sec.StrictSupplementalGroups {
		// Merge: the groups the image's /etc/group lists the user in.
		opts = append(opts, withImageGroups(groupLookupUser(sec, imageUser)))
	}
	opts = append(opts, withSupplementalGroups(sec.SupplementalGroups))

	aa, err := appArmorOpt(sec.AppArmor, sec.Privileged)
	if err != nil {
		return nil, err
	}
	if aa != nil {
		opts = append(opts, aa)
	}
	sc, err := seccompOpt(sec.Seccomp, sec.Privileged)
	if err != nil {
		return nil, err
	}
	if sc != nil {
		opts = append(opts, sc)
	}
	return opts, nil
}

// userString is the user the container runs as, containerd's
// GenerateUserString: a name or uid, with ":gid" when runAsGroup is set;
// the image's USER when the pod sets no user.
func userString(sec runtime.Security, imageUser string) (string, error) {
	user := ""
	if sec.RunAsUser != nil {
		user = strconv.FormatInt(*sec.RunAsUser, 10)
	}
	if sec.RunAsUsername != "" {
		user = sec.RunAsUsername
	}
	if sec.RunAsGroup != nil {
		if user == "" {
			return "", fmt.Errorf("user group %q is specified without user", strconv.FormatInt(*sec.RunAsGroup, 10))
		}
		user += ":" + strconv.FormatInt(*sec.RunAsGroup, 10)
	}
	if user == "" {
		user = imageUser
	}
	return user, nil
}

// groupLookupUser is the user whose /etc/group memberships are merged:
// the pod's user, else the image's (without its group), else root.
func groupLookupUser(sec runtime.Security, imageUser string) string {
	switch {
	case sec.RunAsUsername != "":
		return sec.RunAsUsername
	case sec.RunAsUser != nil:
		return strconv.FormatInt(*sec.RunAsUser, 10)
	case imageUser != "":
		u, _, _ := strings.Cut(imageUser, ":")
		return u
	}
	return "0"
}

// withImageGroups adds the groups the image's /etc/group lists user in to
// the gids already set (the primary group).
func withImageGroups(user string) oci.SpecOpts {
	return func(ctx context.Context, client oci.Client, c *containers.Container, s *oci.Spec) error {
		before := s.Process.User.AdditionalGids
		if err := oci.WithAdditionalGIDs(user)(ctx, client, c, s); err != nil {
			return err
		}
		s.Process.User.AdditionalGids = mergeGids(s.Process.User.AdditionalGids, before)
		return nil
	}
}

func withSupplementalGroups(groups []int64) oci.SpecOpts {
	return func(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
		gids := make([]uint32, 0, len(groups))
		for _, g := range groups {
			gids = append(gids, uint32(g))
		}
		s.Process.User.AdditionalGids = mergeGids(s.Process.User.AdditionalGids, gids)
		return nil
	}
}

// mergeGids is the sorted union of a and b.
func mergeGids(a, b []uint32) []uint32 {
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}

// capabilityOpts changes the default capability set: "ALL" in add gives
// every capability the kubelet holds, in drop none, and then the named
// ones are added or dropped (so add ALL, drop CHOWN is all but CHOWN).
func capabilityOpts(sec runtime.Security) ([]oci.SpecOpts, error) {
	if len(sec.AddCapabilities) == 0 && len(sec.DropCapabilities) == 0 {
		return nil, nil
	}
	var opts []oci.SpecOpts
	if slices.Contains(sec.AddCapabilities, "ALL") {
		all, err := cap.Current()
		if err != nil {
			return nil, fmt.Errorf("read the kubelet's capabilities: %w", err)
		}
		opts = append(opts, oci.WithCapabilities(all))
	}
	if slices.Contains(sec.DropCapabilities, "ALL") {
		opts = append(opts, oci.WithCapabilities(nil))
	}
	return append(opts, oci.WithAddedCapabilities(capNames(sec.AddCapabilities)),
		oci.WithDroppedCapabilities(capNames(sec.DropCapabilities))), nil
}

// capNames are kube's capability names ("net_raw") as the kernel's
// ("CAP_NET_RAW"), without "ALL".
func capNames(in []string) []string {
	var out []string
	for _, c := range in {
		if strings.ToUpper(c) == "ALL" {
			continue
		}
		out = append(out, "CAP_"+strings.ToUpper(c))
	}
	return out
}

// seccompOpt is containerd's GenerateSeccompSpecOpts: a privileged
// container and Unconfined get no filter, RuntimeDefault containerd's
// default profile, Localhost the profile file.
func seccompOpt(p runtime.SecurityProfile, privileged bool) (oci.SpecOpts, error) {
	if privileged {
		return nil, nil
	}
	if p.Type != runtime.ProfileLocalhost && p.LocalhostRef != "" {
		return nil, errors.New("seccomp config invalid LocalhostRef must only be set if ProfileType is Localhost")
	}
	switch p.Type {
	case "", runtime.ProfileUnconfined:
		return nil, nil
	case runtime.ProfileRuntimeDefault:
		return seccomp.WithDefaultProfile(), nil
	case runtime.ProfileLocalhost:
		return seccomp.WithProfile(p.LocalhostRef), nil
	}
	return nil, errors.New("seccomp unknown ProfileType")
}

// appArmorOpt is containerd's GenerateApparmorSpecOpts: on a host without
// AppArmor only Unconfined (or nothing) is accepted; with it, nothing
// asked means the runtime's default profile unless privileged.
func appArmorOpt(p runtime.SecurityProfile, privileged bool) (oci.SpecOpts, error) {
	if !hostapparmor.HostSupports() {
		if p.Type != "" && p.Type != runtime.ProfileUnconfined {
			return nil, errors.New("apparmor is not supported")
		}
		return nil, nil
	}
	if p.Type != runtime.ProfileLocalhost && p.LocalhostRef != "" {
		return nil, errors.New("apparmor config invalid LocalhostRef must only be set if ProfileType is Localhost")
	}
	switch p.Type {
	case runtime.ProfileUnconfined:
		return nil, nil
	case "", runtime.ProfileRuntimeDefault:
		if privileged {
			return nil, nil
		}
		return apparmor.WithDefaultProfile(appArmorDefaultProfile), nil
	case runtime.ProfileLocalhost:
		name := strings.TrimPrefix(p.LocalhostRef, "localhost/")
		if ok, err := appArmorProfileLoaded(name); err != nil {
			return nil, fmt.Errorf("failed to generate apparmor spec opts: %w", err)
		} else if !ok {
			return nil, fmt.Errorf("apparmor profile not found %s", name)
		}
		return apparmor.WithProfile(name), nil
	}
	return nil, errors.New("apparmor unknown ProfileType")
}

func appArmorProfileLoaded(name string) (bool, error) {
	if name == "" {
		return false, errors.New("nil apparmor profile is not supported")
	}
	b, err := os.ReadFile("/sys/kernel/security/apparmor/profiles")
	if err != nil {
		return false, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, name+" (") {
			return true, nil
		}
	}
	return false, nil
}

// withoutDefaultSecurity drops what the default spec sets that CRI leaves
// to the security context: AppArmor, seccomp and the rlimits.
func withoutDefaultSecurity(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
	s.Process.ApparmorProfile = ""
	s.Process.Rlimits = nil
	if s.Linux != nil {
		s.Linux.Seccomp = nil
	}
	return nil
}

// withSysctls sets sysctls in the container's namespaces (runc writes
// them under /proc/sys once it has joined them).
func withSysctls(sysctls map[string]string) oci.SpecOpts {
	return func(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
		if s.Linux.Sysctl == nil {
			s.Linux.Sysctl = map[string]string{}
		}
		maps.Copy(s.Linux.Sysctl, sysctls)
		return nil
	}
}

func withoutAmbientCaps(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
	if s.Process.Capabilities != nil {
		s.Process.Capabilities.Ambient = nil
	}
	return nil
}

// ImageUser implements runtime.Runtime: the USER of the stored image.
func (r *Runtime) ImageUser(ctx context.Context, ref string) (string, error) {
	ctx = r.nsctx(ctx)
	img, err := r.client.GetImage(ctx, ref)
	if err != nil {
		return "", fmt.Errorf("image %s: %w", ref, err)
	}
	spec, err := img.Spec(ctx)
	if err != nil {
		return "", fmt.Errorf("image config of %s: %w", ref, err)
	}
	return spec.Config.User, nil
}
