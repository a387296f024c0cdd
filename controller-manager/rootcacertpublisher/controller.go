package rootcacertpublisher

import (
	"context"
	"fmt"
	"log/slog"
	"maps"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/controller-manager/controller"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/informer"
)

// Kube's names and wording for the published ConfigMap.
const (
	ConfigMapName         = "kube-root-ca.crt"
	DataKey               = "ca.crt"
	DescriptionAnnotation = "kubernetes.io/description"
	Description           = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. " +
		"No other usage is guaranteed across distributions of Kubernetes clusters."
)

// Publisher keeps kube-root-ca.crt in every namespace.
type Publisher struct {
	client     *client.Client
	rootCA     []byte
	namespaces *informer.Informer[api.Namespace]
	configMaps *informer.Informer[api.ConfigMap]
	*controller.Loop[string]
	log *slog.Logger
}

var _ controller.Interface = (*Publisher)(nil)

// New is the "root-ca-cert-publisher" constructor; it needs the cluster CA
// (ctx.RootCA).
func New(ctx *controller.Context) (controller.Interface, error) {
	if len(ctx.RootCA) == 0 {
		// A plain-http apiserver (tests, local setups) has no CA to trust.
		ctx.Logger.Warn("no cluster CA to publish (no --root-ca-file and no certificate-authority data in the kubeconfig): not publishing kube-root-ca.crt")
		return idle{}, nil
	}
	p := NewPublisher(ctx.Client, ctx.RootCA,
		informer.Shared[api.Namespace](ctx.Factory, "", client.ListOptions{}),
		informer.Shared[api.ConfigMap](ctx.Factory, "", client.ListOptions{FieldSelector: "metadata.name=" + ConfigMapName}), ctx.Logger)
	return controller.WithSyncMetrics(p, ctx.Metrics, "root-ca-cert-publisher")
}

// NewPublisher wires the publisher: a namespace added or updated to
// Active, or its kube-root-ca.crt updated or deleted, queues the namespace.
func NewPublisher(c *client.Client, rootCA []byte, namespaces *informer.Informer[api.Namespace], cms *informer.Informer[api.ConfigMap], log *slog.Logger) *Publisher {
	p := &Publisher{client: c, rootCA: rootCA, namespaces: namespaces, configMaps: cms, log: log}
	p.Loop = controller.NewLoop(controller.LoopConfig[string]{Queue: "root_ca_cert_publisher", Sync: p.sync, Log: log})
	controller.Watch(p.Loop, namespaces, informer.Handler[api.Namespace]{
		OnAdd: func(ns *api.Namespace, _ bool) { p.Add(ns.Name) },
		OnUpdate: func(_, ns *api.Namespace) {
			if ns.Status.Phase == api.NamespaceActive {
				p.Add(ns.Name)
			}
		},
	})
	onCM := func(cm *api.ConfigMap) {
		if cm.Name == ConfigMapName {
			p.Add(cm.Namespace)
		}
	}
	controller.Watch(p.Loop, cms, informer.Handler[api.ConfigMap]{
		OnUpdate: func(_, cm *api.ConfigMap) { onCM(cm) },
		OnDelete: func(cm *api.ConfigMap, _ bool) { onCM(cm) },
	})
	return p
}

// sync creates kube-root-ca.crt in namespace ns, or restores its data and
// description, as kube's syncNamespace.
func (p *Publisher) sync(ctx context.Context, ns string) error {
	cms := client.Resource[api.ConfigMap](p.client).Namespace(ns)
	want := map[string]string{DataKey: string(p.rootCA)}
	cm, err := p.configMaps.Lister().Namespace(ns).Get(ConfigMapName)
	switch {
	case apierrors.IsNotFound(err):
		if n, err := p.namespaces.Lister().Get(ns); err != nil || n.DeletionTimestamp != nil {
			return nil // gone or going: a create would fail anyway
		}
		_, err = cms.Create(ctx, &api.ConfigMap{
			ObjectMeta: api.ObjectMeta{Name: ConfigMapName, Annotations: map[string]string{DescriptionAnnotation: Description}},
			Data:       want,
		})
		if err == nil {
			p.log.Info("published the root CA", "namespace", ns)
		}
		if apierrors.IsNotFound(err) || controller.NamespaceTerminating(err) {
			return nil
		}
		return err
	case err != nil:
		return err
	}
	if maps.Equal(cm.Data, want) && cm.Annotations[DescriptionAnnotation] != "" {
		return nil
	}
	cm = api.DeepCopy(cm)
	cm.Data = want
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Annotations[DescriptionAnnotation] = Description
	if _, err := cms.Update(ctx, cm); err != nil {
		return fmt.Errorf("restore %s/%s: %w", ns, ConfigMapName, err)
	}
	p.log.Info("restored the root CA", "namespace", ns)
	return nil
}

// idle is the publisher without a CA: it runs and does nothing.
type idle struct{}

func (idle) Run(ctx context.Context, _ int) error {
	<-ctx.Done()
	return nil
}
