package podautoscaler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"

	corev1 "k8s.io/api/core/v1"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/labels"
	"github.com/minik8s/minik8s/internal/client"
)

// MetricsSource lists the PodMetrics of the pods a selector picks.
type MetricsSource interface {
	PodMetrics(ctx context.Context, namespace string, selector labels.Selector) ([]metricsv1beta1.PodMetrics, error)
}

// APIMetrics reads metrics.k8s.io/v1beta1 through the apiserver.
type APIMetrics struct{ Client *client.Client }

var _ MetricsSource = APIMetrics{}

// PodMetrics implements MetricsSource.
func (m APIMetrics) PodMetrics(ctx context.Context, namespace string, selector labels.Selector) ([]metricsv1beta1.PodMetrics, error) {
	q := url.Values{}
	if s := selector.String(); s != "" {
		q.Set("labelSelector", s)
	}
	b, err := m.Client.Do(ctx, client.Request{Path: "/apis/metrics.k8s.io/v1beta1/namespaces/" + namespace + "/pods", Query: q})
	if err != nil {
		return nil, err
	}
	var list metricsv1beta1.PodMetricsList
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, err
	}
	return list.Items, nil
}

// resourceMetrics is kube's resource metrics client GetResourceMetric: the
// usage of res of each pod (of container only, when given) in
// milli-units; a pod lacking the resource for a container is left out.
func resourceMetrics(ctx context.Context, src MetricsSource, res api.ResourceName, namespace string, selector labels.Selector, container string) (map[string]podMetric, time.Time, error) {
	items, err := src.PodMetrics(ctx, namespace, selector)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("unable to fetch metrics from resource metrics API: %w", err)
	}
	if len(items) == 0 {
		return nil, time.Time{}, errors.New("no metrics returned from resource metrics API")
	}
	out := map[string]podMetric{}
	for _, m := range items {
		var sum int64
		found, missing := false, false
		for _, c := range m.Containers {
			if container != "" && c.Name != container {
				continue
			}
			q, ok := c.Usage[corev1.ResourceName(res)]
			if !ok {
				missing = true
				break
			}
			sum += q.MilliValue()
			found = true
		}
		if missing || !found {
			continue
		}
		out[m.Name] = podMetric{value: sum, timestamp: m.Timestamp.Time, window: m.Window.Duration}
	}
	if len(out) == 0 {
		return nil, time.Time{}, fmt.Errorf("no metrics returned from resource metrics API")
	}
	return out, items[0].Timestamp.Time, nil
}
