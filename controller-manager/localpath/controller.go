package localpath

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/controller-manager/controller"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/internal/informer"
	"github.com/minik8s/minik8s/internal/storagevolume"
)

// ProvisionerName is the provisioner of the local-path StorageClass, as
// rancher names it.
const ProvisionerName = "rancher.io/local-path"

const (
	// annPVSelectedNode on a volume it made: the node the directory is on
	// (rancher's own annotation).
	annPVSelectedNode = "local.path.provisioner/selected-node"
	// annHelperFor on a helper pod: the work-queue key of the claim or
	// volume it works for, so the pod's progress requeues it.
	annHelperFor = "local.path.provisioner/helper-for"
	// nodeAffinityKey is the node label a volume's node affinity names.
	nodeAffinityKey = "kubernetes.io/hostname"
	// helperContainer is the helper pod's container, as rancher names it.
	helperContainer = "helper-pod"
	// cmdTimeout is how long a helper pod may take (rancher's
	// CmdTimeoutSeconds default).
	cmdTimeout = 120 * time.Second

	actionCreate = "create"
	actionDelete = "delete"

	claimPrefix  = "claim:"
	volumePrefix = "volume:"
)

// The helper pods' scripts: rancher's default setup and teardown.
var scripts = map[string]string{
	actionCreate: "set -eu\nmkdir -m 0777 -p \"$VOL_DIR\"\n",
	actionDelete: "set -eu\nrm -rf \"$VOL_DIR\"\n",
}

// Options configure the provisioner.
type Options struct {
	// Root is the directory on every node under which volumes are made.
	Root string
	// HelperImage is the image of the helper pods: it must be on every
	// node (IfNotPresent) and have sh, mkdir and rm.
	HelperImage string
	// Namespace is where the helper pods run.
	Namespace string
}

// Controller provisions and deletes local-path volumes.
type Controller struct {
	*controller.Loop[string]
	creds   *credentials
	claims  *informer.Informer[api.PersistentVolumeClaim]
	volumes *informer.Informer[api.PersistentVolume]
	classes *informer.Informer[api.StorageClass]
	nodes   *informer.Informer[api.Node]
	pods    *informer.Informer[api.Pod]
	rec     events.Recorder
	log     *slog.Logger
	opts    Options
	now     func() time.Time
}

var _ controller.Interface = (*Controller)(nil)

// New is the "local-path-provisioner" constructor. Its events come from
// rancher.io/local-path_HOST, as external-provisioner names its source.
func New(ctx *controller.Context) (controller.Interface, error) {
	host, _ := os.Hostname()
	o := ctx.Options
	c := NewController(ctx.Client, ctx.ClientConfig, ctx.Factory, ctx.Events.RecorderFor(ProvisionerName+"_"+host), ctx.Logger,
		Options{Root: o.LocalPathRoot, HelperImage: o.LocalPathHelperImage, Namespace: o.LocalPathNamespace})
	return controller.WithSyncMetrics(c, ctx.Metrics, "local_path_provisioner")
}

// NewController wires the provisioner over the shared informers of f
// (c's). Its writes act as its service account when base (c's
// configuration) is given, else as c.
func NewController(c *client.Client, base *client.Config, f *informer.Factory, rec events.Recorder, log *slog.Logger, opts Options) *Controller {
	ctl := &Controller{
		creds:   &credentials{base: base, manager: c, now: time.Now},
		claims:  informer.Shared[api.PersistentVolumeClaim](f, "", client.ListOptions{}),
		volumes: informer.Shared[api.PersistentVolume](f, "", client.ListOptions{}),
		classes: informer.Shared[api.StorageClass](f, "", client.ListOptions{}),
		nodes:   informer.Shared[api.Node](f, "", client.ListOptions{}),
		pods:    informer.Shared[api.Pod](f, "", client.ListOptions{}),
		rec:     rec, log: log, opts: opts, now: time.Now,
	}
	ctl.Loop = controller.NewLoop(controller.LoopConfig[string]{Queue: "local_path_provisioner", Sync: ctl.sync, Log: log,
		Started: "local-path provisioner started"})
	controller.Watch(ctl.Loop, ctl.claims, controller.OnChange(func(pvc *api.PersistentVolumeClaim) {
		if provisionerOf(pvc) == ProvisionerName {
			ctl.Add(claimPrefix + controller.Key(pvc))
		}
	}))
	controller.Watch(ctl.Loop, ctl.volumes, controller.OnChange(func(pv *api.PersistentVolume) {
		if pv.Annotations[storagevolume.AnnDynamicallyProvisioned] == ProvisionerName && pv.Status.Phase == api.VolumeReleased {
			ctl.Add(volumePrefix + pv.Name)
		}
	}))
	helper := func(p *api.Pod) {
		if k := p.Annotations[annHelperFor]; k != "" && p.Namespace == opts.Namespace {
			ctl.Add(k)
		}
	}
	controller.Watch(ctl.Loop, ctl.pods, informer.Handler[api.Pod]{
		OnAdd:    func(p *api.Pod, _ bool) { helper(p) },
		OnUpdate: func(_, p *api.Pod) { helper(p) },
		OnDelete: func(p *api.Pod, _ bool) { helper(p) },
	})
	ctl.WaitFor(ctl.classes, ctl.nodes)
	return ctl
}

// provisionerOf is the provisioner a claim is annotated for.
func provisionerOf(pvc *api.PersistentVolumeClaim) string {
	if p, ok := pvc.Annotations[storagevolume.AnnStorageProvisioner]; ok {
		return p
	}
	return pvc.Annotations[storagevolume.AnnBetaStorageProvisioner]
}

func (c *Controller) sync(ctx context.Context, key string) error {
	if err := c.creds.refresh(ctx); err != nil {
		return err
	}
	switch {
	case strings.HasPrefix(key, claimPrefix):
		return c.syncClaim(ctx, key)
	case strings.HasPrefix(key, volumePrefix):
		return c.syncVolume(ctx, key)
	}
	return nil
}

// api is the client the provisioner writes (and reads live) with.
func (c *Controller) api() *client.Client { return c.creds.client() }

// volumeName is the name of the volume provisioned for a claim.
func volumeName(pvc *api.PersistentVolumeClaim) string { return "pvc-" + string(pvc.UID) }

// shouldProvision is external-provisioner's: an unbound claim annotated for
// this provisioner; with a WaitForFirstConsumer class only once the
// scheduler selected a node.
func (c *Controller) shouldProvision(pvc *api.PersistentVolumeClaim) (*api.StorageClass, bool, error) {
	if pvc.Spec.VolumeName != "" || provisionerOf(pvc) != ProvisionerName {
		return nil, false, nil
	}
	name := storagevolume.ClaimClass(pvc)
	class := controller.Cached(c.classes, name)
	if class == nil {
		return nil, false, fmt.Errorf("storageClass %q not found", name)
	}
	if m := class.VolumeBindingMode; m != nil && *m == api.VolumeBindingWaitForFirstConsumer && pvc.Annotations[storagevolume.AnnSelectedNode] == "" {
		return nil, false, nil
	}
	return class, true, nil
}

// syncClaim provisions the claim's volume: validate, run the create
// helper on the selected node, then create the PersistentVolume.
func (c *Controller) syncClaim(ctx context.Context, key string) error {
	pvc := controller.Cached(c.claims, strings.TrimPrefix(key, claimPrefix))
	if pvc == nil || pvc.DeletionTimestamp != nil {
		// Gone, or going (held by pvc-protection): nothing to provision.
		return c.cleanUpAfterClaim(ctx, key)
	}
	class, should, err := c.shouldProvision(pvc)
	if err != nil || !should {
		return err
	}
	pvName := volumeName(pvc)
	if exists, err := c.volumeExists(ctx, pvName); err != nil || exists {
		// Provisioned already (the PV controller binds it); the create
		// helper may still be there.
		if err == nil {
			err = c.deleteHelper(ctx, actionCreate, pvName)
		}
		return err
	}
	if class.Provisioner != ProvisionerName {
		return nil
	}
	if pvc.Spec.VolumeMode != nil && *pvc.Spec.VolumeMode == api.PersistentVolumeBlock {
		// external-provisioner's canProvision: final, no retry.
		c.rec.Event(pvc, api.EventTypeWarning, "ProvisioningFailed", ProvisionerName+" does not support block volume provisioning")
		return nil
	}
	var node *api.Node
	if name := pvc.Annotations[storagevolume.AnnSelectedNode]; name != "" {
		if node, err = c.node(ctx, name); apierrors.IsNotFound(err) {
			// The node is gone: the scheduler must choose again.
			c.rec.Event(pvc, api.EventTypeWarning, "ProvisioningFailed", err.Error())
			return c.reschedule(ctx, pvc)
		} else if err != nil {
			err = fmt.Errorf("failed to get target node: %v", err)
			c.rec.Event(pvc, api.EventTypeWarning, "ProvisioningFailed", err.Error())
			return err
		}
	}
	failed := func(err error) error {
		err = fmt.Errorf("failed to provision volume with StorageClass %q: %v", class.Name, err)
		c.rec.Event(pvc, api.EventTypeWarning, "ProvisioningFailed", err.Error())
		return err
	}
	if err := validate(pvc, node); err != nil {
		return failed(err)
	}
	path := filepath.Join(c.opts.Root, strings.Join([]string{pvName, pvc.Namespace, pvc.Name}, "_"))
	size := pvc.Spec.Resources.Requests[api.ResourceStorage]
	done, err := c.runHelper(ctx, key, actionCreate, pvName, path, node.Name, size.Value(), func() {
		c.rec.Event(pvc, api.EventTypeNormal, "Provisioning", fmt.Sprintf("External provisioner is provisioning volume for claim %q", pvc.Namespace+"/"+pvc.Name))
		c.log.Info("creating volume", "volume", pvName, "node", node.Name, "path", path)
	})
	if err != nil {
		return failed(fmt.Errorf("failed to create volume %s: %w", pvName, err))
	}
	if !done {
		return nil
	}
	pv := newVolume(pvc, class, node, pvName, path)
	if _, err := client.Resource[api.PersistentVolume](c.api()).Create(ctx, pv); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("error saving volume %s: %w", pvName, err)
	}
	c.rec.Event(pvc, api.EventTypeNormal, "ProvisioningSucceeded", "Successfully provisioned volume "+pvName)
	c.log.Info("volume provisioned", "volume", pvName, "claim", pvc.Namespace+"/"+pvc.Name, "node", node.Name)
	return c.deleteHelper(ctx, actionCreate, pvName)
}

// cleanUpAfterClaim undoes a provisioning whose claim was deleted before
// its volume was made (a volume made already is the PV controller's and
// syncVolume's to reclaim): the create helper is let finish, then a delete
// helper removes the directory it made, and both go.
func (c *Controller) cleanUpAfterClaim(ctx context.Context, key string) error {
	for _, p := range c.pods.Store().List() {
		if p.Namespace != c.opts.Namespace || p.Annotations[annHelperFor] != key || p.DeletionTimestamp != nil {
			continue
		}
		pvName, create := strings.CutPrefix(p.Name, helperName(actionCreate, ""))
		if !create {
			// The delete helper: done once it ended (a failure leaves the
			// directory, reported in the log).
			if pvName, ok := strings.CutPrefix(p.Name, helperName(actionDelete, "")); ok && isEnded(p) {
				if p.Status.Phase == api.PodFailed {
					c.log.Warn("removing the directory of a deleted claim failed", "claim", key, "volume", pvName)
				}
				return c.deleteHelper(ctx, actionDelete, pvName)
			}
			continue
		}
		if !isEnded(p) {
			return nil // its end requeues the key
		}
		if p.Status.Phase == api.PodSucceeded && len(p.Spec.Containers) == 1 {
			path := ""
			for _, e := range p.Spec.Containers[0].Env {
				if e.Name == "VOL_DIR" {
					path = e.Value
				}
			}
			if _, err := c.runHelper(ctx, key, actionDelete, pvName, path, p.Spec.NodeName, 0, func() {
				c.log.Info("claim deleted while provisioning: removing its directory", "claim", key, "volume", pvName, "path", path)
			}); err != nil {
				return err
			}
		}
		return c.deleteHelper(ctx, actionCreate, pvName)
	}
	return nil
}

func isEnded(p *api.Pod) bool {
	return p.Status.Phase == api.PodSucceeded || p.Status.Phase == api.PodFailed
}

// validate is rancher's check of what it can provision on a node's disk.
func validate(pvc *api.PersistentVolumeClaim, node *api.Node) error {
	if pvc.Spec.Selector != nil {
		return errors.New("claim.Spec.Selector is not supported")
	}
	for _, m := range pvc.Spec.AccessModes {
		if m != api.ReadWriteOnce && m != api.ReadWriteOncePod {
			return errors.New("NodePath only supports ReadWriteOnce and ReadWriteOncePod (1.22+) access modes")
		}
	}
	if node == nil {
		return errors.New("configuration error, no node was specified")
	}
	return nil
}

// newVolume is the PersistentVolume of a provisioned claim, as rancher
// makes it and external-provisioner completes it.
func newVolume(pvc *api.PersistentVolumeClaim, class *api.StorageClass, node *api.Node, name, path string) *api.PersistentVolume {
	reclaim := api.PersistentVolumeReclaimDelete
	if class.ReclaimPolicy != nil {
		reclaim = *class.ReclaimPolicy
	}
	fs := api.PersistentVolumeFilesystem
	dirOrCreate := api.HostPathDirectoryOrCreate
	value, ok := node.Labels[nodeAffinityKey]
	if !ok {
		value = node.Name
	}
	return &api.PersistentVolume{
		ObjectMeta: api.ObjectMeta{Name: name, Annotations: map[string]string{
			annPVSelectedNode:                       node.Name,
			storagevolume.AnnDynamicallyProvisioned: class.Provisioner,
		}},
		Spec: api.PersistentVolumeSpec{
			PersistentVolumeReclaimPolicy: reclaim,
			AccessModes:                   pvc.Spec.AccessModes,
			VolumeMode:                    &fs,
			Capacity:                      api.ResourceList{api.ResourceStorage: pvc.Spec.Resources.Requests[api.ResourceStorage]},
			PersistentVolumeSource:        api.PersistentVolumeSource{HostPath: &api.HostPathVolumeSource{Path: path, Type: &dirOrCreate}},
			NodeAffinity: &api.VolumeNodeAffinity{Required: &api.NodeSelector{NodeSelectorTerms: []api.NodeSelectorTerm{{
				MatchExpressions: []api.NodeSelectorRequirement{{Key: nodeAffinityKey, Operator: api.NodeSelectorOpIn, Values: []string{value}}},
			}}}},
			ClaimRef:         storagevolume.ClaimRef(pvc),
			StorageClassName: storagevolume.ClaimClass(pvc),
			MountOptions:     class.MountOptions,
		},
	}
}

// reschedule removes the claim's selected node, so that the scheduler
// chooses another (external-provisioner's rescheduleProvisioning).
func (c *Controller) reschedule(ctx context.Context, pvc *api.PersistentVolumeClaim) error {
	patch := []byte(`{"metadata":{"annotations":{"` + storagevolume.AnnSelectedNode + `":null}}}`)
	_, err := client.Resource[api.PersistentVolumeClaim](c.api()).Namespace(pvc.Namespace).Patch(ctx, pvc.Name, client.MergePatchType, patch)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete annotation 'annSelectedNode' for PersistentVolumeClaim %q: %v", pvc.Namespace+"/"+pvc.Name, err)
	}
	return nil
}

// shouldDelete is external-provisioner's: a volume of this provisioner,
// Released, with reclaim policy Delete, not being deleted.
func shouldDelete(pv *api.PersistentVolume) bool {
	return pv.DeletionTimestamp == nil && pv.Status.Phase == api.VolumeReleased &&
		pv.Spec.PersistentVolumeReclaimPolicy == api.PersistentVolumeReclaimDelete &&
		pv.Annotations[storagevolume.AnnDynamicallyProvisioned] == ProvisionerName
}

// syncVolume deletes a released volume: its directory by a helper pod on
// its node, then the PersistentVolume.
func (c *Controller) syncVolume(ctx context.Context, key string) error {
	pv := controller.Cached(c.volumes, strings.TrimPrefix(key, volumePrefix))
	if pv == nil || !shouldDelete(pv) {
		return nil
	}
	failed := func(err error) error {
		err = fmt.Errorf("failed to delete volume %s: %w", pv.Name, err)
		c.rec.Event(pv, api.EventTypeWarning, "VolumeFailedDelete", err.Error())
		return err
	}
	path, nodeName, err := pathAndNode(pv)
	if err != nil {
		return failed(err)
	}
	if _, err := c.node(ctx, nodeName); apierrors.IsNotFound(err) {
		c.log.Info("node does not exist, skipping cleanup of volume", "node", nodeName, "volume", pv.Name)
	} else if err != nil {
		return failed(err)
	} else {
		size := pv.Spec.Capacity[api.ResourceStorage]
		done, err := c.runHelper(ctx, key, actionDelete, pv.Name, path, nodeName, size.Value(), func() {
			c.log.Info("deleting volume", "volume", pv.Name, "node", nodeName, "path", path)
		})
		if err != nil {
			return failed(err)
		}
		if !done {
			return nil
		}
	}
	uid := pv.UID
	err = client.Resource[api.PersistentVolume](c.api()).Delete(ctx, pv.Name, &api.DeleteOptions{Preconditions: &api.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete persistentvolume %s: %w", pv.Name, err)
	}
	c.log.Info("volume deleted", "volume", pv.Name)
	return c.deleteHelper(ctx, actionDelete, pv.Name)
}

// pathAndNode is where a volume's directory is: its hostPath (or local
// path) on the single node its node affinity names.
func pathAndNode(pv *api.PersistentVolume) (string, string, error) {
	var path string
	switch src := pv.Spec.PersistentVolumeSource; {
	case src.HostPath != nil && src.Local == nil:
		path = src.HostPath.Path
	case src.Local != nil && src.HostPath == nil:
		path = src.Local.Path
	default:
		return "", "", errors.New("no path set")
	}
	if pv.Spec.NodeAffinity == nil {
		return "", "", errors.New("no NodeAffinity set")
	}
	if pv.Spec.NodeAffinity.Required == nil {
		return "", "", errors.New("no NodeAffinity.Required set")
	}
	for _, term := range pv.Spec.NodeAffinity.Required.NodeSelectorTerms {
		for _, e := range term.MatchExpressions {
			if e.Operator != api.NodeSelectorOpIn {
				continue
			}
			if len(e.Values) != 1 {
				return "", "", errors.New("multiple values for the node affinity")
			}
			return path, e.Values[0], nil
		}
	}
	return "", "", errors.New("cannot find affinited node")
}

// node is the named Node from the cache, else from the apiserver (a
// NotFound error when it does not exist).
func (c *Controller) node(ctx context.Context, name string) (*api.Node, error) {
	if n := controller.Cached(c.nodes, name); n != nil {
		return n, nil
	}
	return client.Resource[api.Node](c.api()).Get(ctx, name)
}

// volumeExists looks the volume up in the cache, then (the cache may be
// behind a volume created a moment ago) in the apiserver.
func (c *Controller) volumeExists(ctx context.Context, name string) (bool, error) {
	if controller.Cached(c.volumes, name) != nil {
		return true, nil
	}
	_, err := client.Resource[api.PersistentVolume](c.api()).Get(ctx, name)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

func helperName(action, pvName string) string { return "helper-pod-" + action + "-" + pvName }

// runHelper drives the helper pod of action for a volume: it creates the
// pod (calling started first) when there is none, and reports done once
// the pod succeeded. A pod that failed or outlived cmdTimeout is deleted
// and reported as an error; until then the key is checked again at the
// timeout (the pod's own updates requeue it sooner).
func (c *Controller) runHelper(ctx context.Context, key, action, pvName, path, node string, size int64, started func()) (bool, error) {
	name := helperName(action, pvName)
	pods := client.Resource[api.Pod](c.api()).Namespace(c.opts.Namespace)
	pod := controller.Cached(c.pods, c.opts.Namespace+"/"+name)
	if pod == nil {
		p, err := pods.Get(ctx, name)
		if err != nil && !apierrors.IsNotFound(err) {
			return false, err
		}
		pod = p
	}
	if pod == nil {
		hp, err := c.helperPod(key, action, name, path, node, size)
		if err != nil {
			return false, err
		}
		started()
		if _, err := pods.Create(ctx, hp); err != nil && !apierrors.IsAlreadyExists(err) {
			return false, err
		}
		c.Queue.AddAfter(key, cmdTimeout)
		return false, nil
	}
	if pod.DeletionTimestamp != nil {
		return false, nil // its deletion requeues the key
	}
	switch pod.Status.Phase {
	case api.PodSucceeded:
		return true, nil
	case api.PodFailed:
		_ = c.deleteHelper(ctx, action, pvName)
		return false, fmt.Errorf("helper pod %s/%s failed%s", pod.Namespace, pod.Name, exitOf(pod))
	}
	age := c.now().Sub(pod.CreationTimestamp.Time)
	if age >= cmdTimeout {
		_ = c.deleteHelper(ctx, action, pvName)
		return false, fmt.Errorf("%s process timeout after %d seconds", action, int(cmdTimeout.Seconds()))
	}
	c.Queue.AddAfter(key, cmdTimeout-age)
	return false, nil
}

// exitOf describes how the helper container ended.
func exitOf(p *api.Pod) string {
	for _, cs := range p.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil {
			s := fmt.Sprintf(": exit code %d", t.ExitCode)
			if t.Message != "" {
				s += ": " + strings.TrimSpace(t.Message)
			}
			return s
		}
	}
	return ""
}

// deleteHelper removes the helper pod of action, if any.
func (c *Controller) deleteHelper(ctx context.Context, action, pvName string) error {
	name := helperName(action, pvName)
	if controller.Cached(c.pods, c.opts.Namespace+"/"+name) == nil && action == actionCreate {
		// The cache may lag a pod created a moment ago; the delete below
		// is cheap, but most syncs of a provisioned claim have none.
		if _, err := client.Resource[api.Pod](c.api()).Namespace(c.opts.Namespace).Get(ctx, name); apierrors.IsNotFound(err) {
			return nil
		}
	}
	zero := int64(0)
	err := client.Resource[api.Pod](c.api()).Namespace(c.opts.Namespace).Delete(ctx, name, &api.DeleteOptions{GracePeriodSeconds: &zero})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("unable to delete the helper pod: %w", err)
	}
	return nil
}

// helperPod is rancher's helper pod: pinned to the node (node-critical,
// tolerating disk pressure, as rancher's template), the volume's
// parent directory mounted from the host at the same path, the script of
// action run by sh with VOL_DIR, VOL_MODE and VOL_SIZE_BYTES set.
func (c *Controller) helperPod(key, action, name, path, node string, size int64) (*api.Pod, error) {
	if path == "" || node == "" {
		return nil, errors.New("invalid empty name or path or node")
	}
	if !filepath.IsAbs(path) {
		return nil, fmt.Errorf("volume path %s is not absolute", path)
	}
	path = filepath.Clean(path)
	parent, dir := filepath.Split(path)
	parent = strings.TrimSuffix(parent, string(filepath.Separator))
	if parent == "" || dir == "" {
		return nil, fmt.Errorf("invalid path %v for %v: cannot find parent dir or volume dir or parent dir is relative", action, path)
	}
	dirOrCreate := api.HostPathDirectoryOrCreate
	no := false
	return &api.Pod{
		ObjectMeta: api.ObjectMeta{Name: name, Namespace: c.opts.Namespace, Annotations: map[string]string{annHelperFor: key}},
		Spec: api.PodSpec{
			NodeName:                     node,
			PriorityClassName:            "system-node-critical",
			RestartPolicy:                api.RestartPolicyNever,
			AutomountServiceAccountToken: &no,
			Tolerations:                  []api.Toleration{{Key: api.TaintNodeDiskPressure, Operator: api.TolerationOpExists, Effect: api.TaintEffectNoSchedule}},
			Volumes: []api.Volume{{Name: "data", VolumeSource: api.VolumeSource{
				HostPath: &api.HostPathVolumeSource{Path: parent, Type: &dirOrCreate}}}},
			Containers: []api.Container{{
				Name:            helperContainer,
				Image:           c.opts.HelperImage,
				ImagePullPolicy: api.PullIfNotPresent,
				Command:         []string{"sh", "-c", scripts[action]},
				Env: []api.EnvVar{
					{Name: "VOL_DIR", Value: filepath.Join(parent, dir)},
					{Name: "VOL_MODE", Value: string(api.PersistentVolumeFilesystem)},
					{Name: "VOL_SIZE_BYTES", Value: strconv.FormatInt(size, 10)},
				},
				VolumeMounts: []api.VolumeMount{{Name: "data", MountPath: parent}},
			}},
		},
	}, nil
}
