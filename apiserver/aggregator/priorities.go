package aggregator

// priority orders groups and versions in discovery.
type priority struct{ group, version int32 }

// gv is a group/version.
type gv struct{ group, version string }

// priorities are kube-apiserver's APIService priorities of its built-in
// group/versions (cmd/kube-apiserver/app/aggregator.go and
// DefaultGenericAPIServicePriorities); a served group/version missing here
// gets no Local APIService, as in Kubernetes.
var priorities = map[gv]priority{
	{"", "v1"}:                             {18000, 1},
	{"apps", "v1"}:                         {17800, 15},
	{"events.k8s.io", "v1"}:                {17750, 15},
	{"authentication.k8s.io", "v1"}:        {17700, 15},
	{"authorization.k8s.io", "v1"}:         {17600, 15},
	{"autoscaling", "v1"}:                  {17500, 15},
	{"autoscaling", "v2"}:                  {17500, 30},
	{"batch", "v1"}:                        {17400, 15},
	{"certificates.k8s.io", "v1"}:          {17300, 15},
	{"networking.k8s.io", "v1"}:            {17200, 15},
	{"policy", "v1"}:                       {17100, 15},
	{"rbac.authorization.k8s.io", "v1"}:    {17000, 15},
	{"storage.k8s.io", "v1"}:               {16800, 15},
	{"apiextensions.k8s.io", "v1"}:         {16700, 15},
	{"admissionregistration.k8s.io", "v1"}: {16700, 15},
	{"scheduling.k8s.io", "v1"}:            {16600, 15},
	{"coordination.k8s.io", "v1"}:          {16500, 15},
	{"node.k8s.io", "v1"}:                  {16300, 15},
	{"discovery.k8s.io", "v1"}:             {16200, 15},
	{"resource.k8s.io", "v1"}:              {16200, 21},
	{"flowcontrol.apiserver.k8s.io", "v1"}: {16100, 21},
	{"storagemigration.k8s.io", "v1"}:      {15800, 15},
	{"storagemigration.k8s.io", "v1beta1"}: {15800, 9},
	// The aggregator's own group (kube-aggregator's apiserver.go).
	{"apiregistration.k8s.io", "v1"}: {18000, 15},
}
