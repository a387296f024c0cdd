package realcomponents

import (
	"fmt"
	"net/http"
	"testing"
)

// TestServiceTypeChangeAsKube sends the same Services to the real
// kube-apiserver v1.37 and to minik8s' apiserver and changes their type
// the way the conformance specs 'should be able to change the type from
// ClusterIP to ExternalName' and '... from NodePort to ExternalName' do:
// the whole object read back, with only type and externalName changed.
// Both drop what the client left as it was and the new type does not use
// (clusterIP, clusterIPs, ipFamilies, ipFamilyPolicy, nodePorts) and store
// the same object; the ClusterIP and NodePort freed can be taken by a new
// Service at once. A client that also changes the ClusterIP is refused alike.
func TestServiceTypeChangeAsKube(t *testing.T) {
	t.Parallel()
	both := startBoth(t)
	const services = "/api/v1/namespaces/default/services"

	// service is a Service manifest; ports are the members of its one port.
	service := func(name, typ, clusterIP, ports, more string) string {
		return fmt.Sprintf(`{"apiVersion":"v1","kind":"Service","metadata":{"name":%q},
"spec":{"type":%q,"clusterIP":%q,"selector":{"app":%q},"ports":[{"name":"http","protocol":"TCP","port":80,"targetPort":80%s}]%s}}`,
			name, typ, clusterIP, name, ports, more)
	}
	// asRead is the manifest with what the servers filled in, as a client
	// reading it back and changing only type and externalName sends it.
	asRead := `,"clusterIPs":["%s"],"ipFamilies":["IPv4"],"ipFamilyPolicy":"SingleStack","sessionAffinity":"None","internalTrafficPolicy":"Cluster"`
	toExternal := `,"externalName":"externalsvc.default.svc.cluster.local"`

	t.Run("ClusterIP to ExternalName", func(t *testing.T) {
		both.sameAcceptance(t, http.StatusCreated, "POST", services, service("clusterip", "ClusterIP", "10.96.100.10", "", ""))
		both.sameAcceptance(t, http.StatusOK, "PUT", services+"/clusterip",
			service("clusterip", "ExternalName", "10.96.100.10", "", fmt.Sprintf(asRead, "10.96.100.10")+toExternal),
			services+"/clusterip")
		// The ClusterIP was released.
		both.sameAcceptance(t, http.StatusCreated, "POST", services, service("clusterip-again", "ClusterIP", "10.96.100.10", "", ""))
	})

	t.Run("NodePort to ExternalName", func(t *testing.T) {
		both.sameAcceptance(t, http.StatusCreated, "POST", services, service("nodeport", "NodePort", "10.96.100.20", `,"nodePort":30100`, ""))
		both.sameAcceptance(t, http.StatusOK, "PUT", services+"/nodeport",
			service("nodeport", "ExternalName", "10.96.100.20", `,"nodePort":30100`,
				fmt.Sprintf(asRead, "10.96.100.20")+`,"externalTrafficPolicy":"Cluster"`+toExternal),
			services+"/nodeport")
		// The ClusterIP and the NodePort were released.
		both.sameAcceptance(t, http.StatusCreated, "POST", services, service("nodeport-again", "NodePort", "10.96.100.20", `,"nodePort":30100`, ""))
	})

	t.Run("NodePort to ClusterIP", func(t *testing.T) {
		both.sameAcceptance(t, http.StatusCreated, "POST", services, service("np2", "NodePort", "10.96.100.30", `,"nodePort":30110`, ""))
		both.sameAcceptance(t, http.StatusOK, "PUT", services+"/np2",
			service("np2", "ClusterIP", "10.96.100.30", `,"nodePort":30110`, fmt.Sprintf(asRead, "10.96.100.30")+`,"externalTrafficPolicy":"Cluster"`),
			services+"/np2")
		both.sameAcceptance(t, http.StatusCreated, "POST", services, service("np2-again", "NodePort", "10.96.100.31", `,"nodePort":30110`, ""))
	})

	t.Run("ExternalName with a changed ClusterIP", func(t *testing.T) {
		both.sameAcceptance(t, http.StatusCreated, "POST", services, service("changed", "ClusterIP", "10.96.100.40", "", ""))
		both.sameRefusal(t, "PUT", services+"/changed",
			service("changed", "ExternalName", "10.96.100.41", "", fmt.Sprintf(asRead, "10.96.100.41")+toExternal))
	})
}
