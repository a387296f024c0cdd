package integration

import (
	"fmt"
	"sort"
	"testing"
	"time"
)

// BenchmarkWebhookOverhead measures what admission webhooks add to a write:
// configmap creates, one at a time, over HTTPS as benchUser (TLS, client
// certificate, RBAC), in a namespace no webhook selects, one a local
// validating webhook selects, and one a mutating and a validating webhook
// select (the webhook an HTTPS server in this process, its own CA). It
// reports the p50 and p99 latency of a create in ms.
func BenchmarkWebhookOverhead(b *testing.B) {
	e := benchServer(b)
	hook := startTestWebhook(b, "")
	c := newClient(b, e.s)
	for _, ns := range []struct{ name, hooks string }{{"bench-none", ""}, {"bench-v", "v"}, {"bench-mv", "mv"}} {
		c.must(201, "POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": ns.name,
			"labels": map[string]string{"hooks": ns.hooks}}})
	}
	selector := func(values ...string) map[string]any {
		return map[string]any{"matchExpressions": []any{map[string]any{"key": "hooks", "operator": "In", "values": values}}}
	}
	v := webhookConfig("ValidatingWebhookConfiguration", "bench-validate", hook.srv.URL+"/allow", hook.ca.pem, "", nil)
	v["webhooks"].([]any)[0].(map[string]any)["namespaceSelector"] = selector("v", "mv")
	m := webhookConfig("MutatingWebhookConfiguration", "bench-mutate", hook.srv.URL+"/mutate", hook.ca.pem, "", nil)
	m["webhooks"].([]any)[0].(map[string]any)["namespaceSelector"] = selector("mv")
	c.must(201, "POST", vwcPath, v)
	c.must(201, "POST", mwcPath, m)
	time.Sleep(200 * time.Millisecond) // the watch caches see them

	n := 0
	for _, row := range []struct{ name, ns string }{{"no-webhook", "bench-none"}, {"validating", "bench-v"}, {"mutating+validating", "bench-mv"}} {
		b.Run(row.name, func(b *testing.B) {
			url := e.secureURL + "/api/v1/namespaces/" + row.ns + "/configmaps"
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				n++
				body := []byte(fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c-%d"},"data":{"k":"v"}}`, n))
				start := time.Now()
				if err := post(e.hc, url, body); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
			b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
			b.ReportMetric(ms(lat[len(lat)*99/100]), "p99-ms")
		})
	}
	// The webhooks were called: the mutating one on every create in bench-mv.
	if hook.count("/mutate") == 0 || hook.count("/allow") == 0 {
		b.Errorf("webhook calls: mutate %d, allow %d", hook.count("/mutate"), hook.count("/allow"))
	}
}
