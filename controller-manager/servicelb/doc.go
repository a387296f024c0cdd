// Package servicelb is the service-lb-controller: minik8s' built-in load
// balancer for Services of type LoadBalancer, as k3s' ServiceLB gives one
// on machines without a cloud. The addresses of the cluster's Ready nodes
// (ExternalIP where a node has one, else InternalIP; nodes labelled
// node.kubernetes.io/exclude-from-external-load-balancers left out) are
// written into status.loadBalancer.ingress with ipMode VIP, and the
// service proxy on every node takes traffic to its own address and the
// Service's port to the Service (kube-proxy's load balancer rules), so
// the Service answers on every node's address. Services naming a
// loadBalancerClass belong to that class' implementation and are left
// alone; a Service that stops being of type LoadBalancer has its
// load balancer status cleared. Events are kube's service controller's
// (EnsuringLoadBalancer, EnsuredLoadBalancer, DeletedLoadBalancer).
package servicelb
