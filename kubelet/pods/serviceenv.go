package pods

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/minik8s/minik8s/api"
)

// serviceEnv is kube's getServiceEnvVarMap: the Docker-link style
// variables of the "kubernetes" Service of the default namespace (always:
// KUBERNETES_SERVICE_HOST/PORT are how in-cluster clients find the
// apiserver) and, unless enableServiceLinks is false, of every Service of
// the pod's namespace with a cluster IP.
func (m *Manager) serviceEnv(pod *api.Pod) map[string]string {
	out := map[string]string{}
	if m.services == nil {
		return out
	}
	chosen := map[string]*api.Service{}
	for _, svc := range m.services.Store().List() {
		if !chooseService(svc, pod) {
			continue
		}
		// A "kubernetes" Service of the pod's own namespace wins over
		// default's, as in kube.
		if _, ok := chosen[svc.Name]; ok && svc.Namespace != pod.Namespace {
			continue
		}
		chosen[svc.Name] = svc
	}
	for _, svc := range chosen {
		serviceVars(svc, out)
	}
	return out
}

// chooseService: a Service with a cluster IP whose variables pod gets.
func chooseService(svc *api.Service, pod *api.Pod) bool {
	if ip := svc.Spec.ClusterIP; ip == "" || ip == api.ClusterIPNone || len(svc.Spec.Ports) == 0 {
		return false
	}
	if svc.Namespace == api.NamespaceDefault && svc.Name == "kubernetes" {
		return true
	}
	return svc.Namespace == pod.Namespace && (pod.Spec.EnableServiceLinks == nil || *pod.Spec.EnableServiceLinks)
}

// serviceVars is kube's envvars.FromServices for one Service.
func serviceVars(svc *api.Service, out map[string]string) {
	prefix := strings.ToUpper(strings.ReplaceAll(svc.Name, "-", "_"))
	ip := svc.Spec.ClusterIP
	out[prefix+"_SERVICE_HOST"] = ip
	out[prefix+"_SERVICE_PORT"] = strconv.Itoa(int(svc.Spec.Ports[0].Port))
	for _, sp := range svc.Spec.Ports {
		if sp.Name != "" {
			out[prefix+"_SERVICE_PORT_"+strings.ToUpper(strings.ReplaceAll(sp.Name, "-", "_"))] = strconv.Itoa(int(sp.Port))
		}
	}
	for i, sp := range svc.Spec.Ports {
		proto := strings.ToLower(string(sp.Protocol))
		if proto == "" {
			proto = "tcp"
		}
		url := fmt.Sprintf("%s://%s", proto, net.JoinHostPort(ip, strconv.Itoa(int(sp.Port))))
		if i == 0 {
			out[prefix+"_PORT"] = url
		}
		pp := fmt.Sprintf("%s_PORT_%d_%s", prefix, sp.Port, strings.ToUpper(proto))
		out[pp] = url
		out[pp+"_PROTO"] = proto
		out[pp+"_PORT"] = strconv.Itoa(int(sp.Port))
		out[pp+"_ADDR"] = ip
	}
}
