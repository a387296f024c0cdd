package app

import (
	"github.com/minik8s/minik8s/controller-manager/controller"
	"github.com/minik8s/minik8s/controller-manager/nodeipam"
	"github.com/minik8s/minik8s/controller-manager/nodelifecycle"
	"github.com/minik8s/minik8s/controller-manager/replicaset"
)

// constructors maps kube-controller-manager's controller names to their
// constructors. Every controller here is on by default.
var constructors = map[string]controller.Constructor{
	"nodeipam":      nodeipam.New,
	"nodelifecycle": nodelifecycle.New,
	"replicaset":    replicaset.New,
}
