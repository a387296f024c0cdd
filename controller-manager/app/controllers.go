package app

import (
	"github.com/minik8s/minik8s/controller-manager/controller"
	"github.com/minik8s/minik8s/controller-manager/cronjob"
	"github.com/minik8s/minik8s/controller-manager/daemonset"
	"github.com/minik8s/minik8s/controller-manager/deployment"
	"github.com/minik8s/minik8s/controller-manager/disruption"
	"github.com/minik8s/minik8s/controller-manager/endpoints"
	"github.com/minik8s/minik8s/controller-manager/endpointslice"
	"github.com/minik8s/minik8s/controller-manager/endpointslicemirroring"
	"github.com/minik8s/minik8s/controller-manager/garbagecollector"
	"github.com/minik8s/minik8s/controller-manager/job"
	"github.com/minik8s/minik8s/controller-manager/localpath"
	"github.com/minik8s/minik8s/controller-manager/namespace"
	"github.com/minik8s/minik8s/controller-manager/nodeipam"
	"github.com/minik8s/minik8s/controller-manager/nodelifecycle"
	"github.com/minik8s/minik8s/controller-manager/podautoscaler"
	"github.com/minik8s/minik8s/controller-manager/podgc"
	"github.com/minik8s/minik8s/controller-manager/replicaset"
	"github.com/minik8s/minik8s/controller-manager/replicationcontroller"
	"github.com/minik8s/minik8s/controller-manager/resourcequota"
	"github.com/minik8s/minik8s/controller-manager/rootcacertpublisher"
	"github.com/minik8s/minik8s/controller-manager/serviceaccount"
	"github.com/minik8s/minik8s/controller-manager/servicelb"
	"github.com/minik8s/minik8s/controller-manager/statefulset"
	"github.com/minik8s/minik8s/controller-manager/ttlafterfinished"
	"github.com/minik8s/minik8s/controller-manager/volume/ephemeral"
	"github.com/minik8s/minik8s/controller-manager/volume/persistentvolume"
	"github.com/minik8s/minik8s/controller-manager/volume/pvcprotection"
	"github.com/minik8s/minik8s/controller-manager/volume/pvprotection"
	"github.com/minik8s/minik8s/controller-manager/volume/vacprotection"
)

// constructors maps kube-controller-manager's controller names to their
// constructors. Every controller here is on by default.
var constructors = map[string]controller.Constructor{
	"cronjob":                  cronjob.New,
	"daemonset":                daemonset.New,
	"deployment":               deployment.New,
	"disruption":               disruption.New,
	"endpoints":                endpoints.New,
	"endpointslice":            endpointslice.New,
	"endpointslicemirroring":   endpointslicemirroring.New,
	"ephemeral-volume":         ephemeral.New,
	"garbagecollector":         garbagecollector.New,
	"horizontalpodautoscaling": podautoscaler.New,
	"job":                      job.New,
	"local-path-provisioner":   localpath.New,
	"namespace":                namespace.New,
	"nodeipam":                 nodeipam.New,
	"nodelifecycle":            nodelifecycle.New,
	"persistentvolume-binder":  persistentvolume.New,
	"podgc":                    podgc.New,
	"pv-protection":            pvprotection.New,
	"pvc-protection":           pvcprotection.New,
	"replicaset":               replicaset.New,
	"replicationcontroller":    replicationcontroller.New,
	"resourcequota":            resourcequota.New,
	"root-ca-cert-publisher":   rootcacertpublisher.New,
	"serviceaccount":           serviceaccount.New,
	servicelb.Name:             servicelb.New,
	"statefulset":              statefulset.New,
	"ttl-after-finished":       ttlafterfinished.New,
	vacprotection.Name:         vacprotection.New,
}
