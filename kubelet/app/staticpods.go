package app

import (
	"context"
	"log/slog"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/kubelet/pods"
	"github.com/minik8s/minik8s/kubelet/staticpods"
)

// staticPodsRunner reads --pod-manifest-path (staticPodPath) once, hands
// its pods to the pod manager before it starts, and returns what keeps
// them in line with the path (nil without one). A refused manifest is a
// Warning event FailedStaticPodManifest on the Node, once per file and
// error (kube's kubelet only logs it: the reason is minik8s').
func staticPodsRunner(path, nodeName string, mgr *pods.Manager, rec events.Recorder, log *slog.Logger) func(context.Context) error {
	if path == "" {
		return nil
	}
	nodeRef := &api.Node{TypeMeta: api.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: api.ObjectMeta{Name: nodeName, UID: api.UID(nodeName)}}
	src := staticpods.New(staticpods.Options{Path: path, NodeName: nodeName, Logger: log,
		Report: func(file string, err error) {
			rec.Eventf(nodeRef, api.EventTypeWarning, "FailedStaticPodManifest", "Could not process manifest file %s: %v", file, err)
		}})
	mgr.SetStaticPods(src.List())
	return func(ctx context.Context) error { return src.Run(ctx, mgr.SetStaticPods) }
}
