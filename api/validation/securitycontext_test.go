package validation

import (
	"testing"

	"github.com/minik8s/minik8s/api"
)

// TestValidateSecurityContextFields checks the securityContext fields
// PodSecurity reads with kube-apiserver v1.37's messages (the same answers
// TestPodSecurityAsKube compares with the real kube-apiserver).
func TestValidateSecurityContextFields(t *testing.T) {
	t.Parallel()
	c0 := "spec.containers[0].securityContext"
	psc := "spec.securityContext"
	procMount := func(v api.ProcMountType) func(*api.Pod) {
		return func(p *api.Pod) { p.Spec.Containers[0].SecurityContext = &api.SecurityContext{ProcMount: &v} }
	}
	podAppArmor := func(ap api.AppArmorProfile) func(*api.Pod) {
		return func(p *api.Pod) { p.Spec.SecurityContext.AppArmorProfile = &ap }
	}
	runAsUserName := func(n string) func(*api.Pod) {
		return func(p *api.Pod) {
			p.Spec.Containers[0].SecurityContext = &api.SecurityContext{WindowsOptions: &api.WindowsSecurityContextOptions{RunAsUserName: &n}}
		}
	}
	tests := []struct {
		name   string
		mutate func(*api.Pod)
		want   []string
	}{
		{"every field valid", func(p *api.Pod) {
			p.Spec.HostUsers = ptr(false)
			p.Spec.SecurityContext.SELinuxOptions = &api.SELinuxOptions{Level: "s0:c1"}
			p.Spec.SecurityContext.SupplementalGroupsPolicy = ptr(api.SupplementalGroupsPolicyStrict)
			p.Spec.SecurityContext.SELinuxChangePolicy = ptr(api.SELinuxChangePolicyMountOption)
			p.Spec.SecurityContext.AppArmorProfile = &api.AppArmorProfile{Type: api.AppArmorProfileTypeLocalhost, LocalhostProfile: ptr("k8s-default")}
			p.Spec.Containers[0].SecurityContext = &api.SecurityContext{ProcMount: ptr(api.UnmaskedProcMount),
				AppArmorProfile: &api.AppArmorProfile{Type: api.AppArmorProfileTypeRuntimeDefault},
				WindowsOptions:  &api.WindowsSecurityContextOptions{RunAsUserName: ptr(`CORP\alice`), GMSACredentialSpecName: ptr("spec")}}
		}, nil},
		{"procMount unknown", procMount("Masked"), []string{c0 + `.procMount: Unsupported value: "Masked": supported values: "Default", "Unmasked"`}},
		{"procMount Unmasked in the host's user namespace", procMount(api.UnmaskedProcMount),
			[]string{c0 + ".procMount: Invalid value: \"Unmasked\": `hostUsers` must be false to use `Unmasked`"}},
		{"appArmor Localhost without profile", podAppArmor(api.AppArmorProfile{Type: api.AppArmorProfileTypeLocalhost}),
			[]string{psc + ".appArmorProfile.localhostProfile: Required value: must be set when AppArmor type is Localhost"}},
		{"appArmor Localhost padded", podAppArmor(api.AppArmorProfile{Type: api.AppArmorProfileTypeLocalhost, LocalhostProfile: ptr(" p")}),
			[]string{psc + `.appArmorProfile.localhostProfile: Invalid value: " p": must not be padded with whitespace`}},
		{"appArmor profile without Localhost", podAppArmor(api.AppArmorProfile{Type: api.AppArmorProfileTypeUnconfined, LocalhostProfile: ptr("p")}),
			[]string{psc + `.appArmorProfile.localhostProfile: Invalid value: "p": can only be set when AppArmor type is Localhost`}},
		{"appArmor type missing", podAppArmor(api.AppArmorProfile{}),
			[]string{psc + ".appArmorProfile.type: Required value: type is required when appArmorProfile is set"}},
		{"appArmor type unknown", podAppArmor(api.AppArmorProfile{Type: "Strict"}),
			[]string{psc + `.appArmorProfile.type: Unsupported value: "Strict": supported values: "Localhost", "RuntimeDefault", "Unconfined"`}},
		{"pod policies unknown", func(p *api.Pod) {
			p.Spec.SecurityContext.SupplementalGroupsPolicy = ptr(api.SupplementalGroupsPolicy("Loose"))
			p.Spec.SecurityContext.SELinuxChangePolicy = ptr(api.PodSELinuxChangePolicy("Sometimes"))
		}, []string{
			psc + `.supplementalGroupsPolicy: Unsupported value: "Loose": supported values: "Merge", "Strict"`,
			psc + `.seLinuxChangePolicy: Unsupported value: "Sometimes": supported values: "MountOption", "Recursive"`,
		}},
		{"gmsa", func(p *api.Pod) {
			p.Spec.SecurityContext.WindowsOptions = &api.WindowsSecurityContextOptions{GMSACredentialSpecName: ptr("Bad_Name"), GMSACredentialSpec: ptr("")}
		}, []string{
			psc + `.windowsOptions.gmsaCredentialSpecName: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain...`,
			psc + `.windowsOptions.gmsaCredentialSpec: Invalid value: "": gmsaCredentialSpec cannot be an empty string`,
		}},
		{"runAsUserName two backslashes", runAsUserName(`a\b\c`),
			[]string{c0 + `.windowsOptions.runAsUserName: Invalid value: "a\\b\\c": runAsUserName cannot contain more than one backslash`}},
		{"runAsUserName only dots", runAsUserName("..."),
			[]string{c0 + `.windowsOptions.runAsUserName: Invalid value: "...": runAsUserName's User cannot contain only periods or spaces`}},
		{"runAsUserName bad domain and user", runAsUserName(`-bad_domain-name.x\us:er`), []string{
			c0 + `.windowsOptions.runAsUserName: Invalid value: "-bad_domain-name.x\\us:er": runAsUserName's Domain doesn't match the NetBios nor the DNS format`,
			c0 + `.windowsOptions.runAsUserName: Invalid value: "-bad_domain-name.x\\us:er": runAsUserName's User cannot contain the following characters: "/\:;|=,+*?<>@[]`,
		}},
		{"hostProcess", func(p *api.Pod) {
			p.Spec.SecurityContext.WindowsOptions = &api.WindowsSecurityContextOptions{HostProcess: ptr(true)}
			ic := api.Container{Name: "init", Image: "busybox", ImagePullPolicy: api.PullIfNotPresent,
				TerminationMessagePolicy: api.TerminationMessageReadFile,
				SecurityContext:          &api.SecurityContext{WindowsOptions: &api.WindowsSecurityContextOptions{HostProcess: ptr(false)}}}
			p.Spec.InitContainers = []api.Container{ic}
		}, []string{
			`spec.initContainers[0].securityContext.windowsOptions.hostProcess: Invalid value: false: pod hostProcess value must be identical if both are specified, was true`,
			`spec: Invalid value: "": If pod contains any hostProcess containers then all containers must be HostProcess containers`,
			`spec.hostNetwork: Invalid value: false: hostNetwork must be true if pod contains any hostProcess containers`,
		}},
		{"windows pod", func(p *api.Pod) {
			p.Spec.OS = &api.PodOS{Name: "windows"}
			p.Spec.HostIPC = true
			p.Spec.SecurityContext.FSGroup = ptr(int64(1))
			p.Spec.Containers[0].SecurityContext = &api.SecurityContext{Privileged: ptr(false)}
		}, []string{
			psc + `.fsGroup: Forbidden: cannot be set for a windows pod`,
			`spec.hostIPC: Forbidden: cannot be set for a windows pod`,
			c0 + `.privileged: Forbidden: cannot be set for a windows pod`,
		}},
		{"linux pod with windows options", func(p *api.Pod) {
			p.Spec.OS = &api.PodOS{Name: "linux"}
			p.Spec.Containers[0].SecurityContext = &api.SecurityContext{WindowsOptions: &api.WindowsSecurityContextOptions{}}
		}, []string{c0 + `.windowsOptions: Forbidden: windows options cannot be set for a linux pod`}},
		{"in-tree volume kept as written", func(p *api.Pod) {
			p.Spec.Volumes = append(p.Spec.Volumes, api.Volume{Name: "disk", VolumeSource: api.VolumeSource{GCEPersistentDisk: []byte(`{"pdName":"d"}`)}})
		}, nil},
		{"two in-tree volume types", func(p *api.Pod) {
			p.Spec.Volumes = append(p.Spec.Volumes, api.Volume{Name: "disk", VolumeSource: api.VolumeSource{
				AzureDisk: []byte(`{}`), ScaleIO: []byte(`{}`)}})
		}, []string{`spec.volumes[1].scaleIO: Forbidden: may not specify more than 1 volume type`}},
	}
	for _, tc := range tests {
		p := validPod()
		if p.Spec.SecurityContext == nil {
			p.Spec.SecurityContext = &api.PodSecurityContext{}
		}
		tc.mutate(p)
		checkErrs(t, tc.name, Validate(p), tc.want)
	}
}
