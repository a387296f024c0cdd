package clientintegration

import (
	"fmt"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/app"
	"github.com/minik8s/minik8s/internal/client"
)

// TestAPIServerStopEndsWatches checks that stopping the apiserver ends the
// open watches at once, so clients reconnect (to the restarted server) and
// the stop does not wait for the watches to time out: both a watch served
// from the watch cache and one from a resourceVersion older than the cache
// keeps (served by an etcd watch of its own).
func TestAPIServerStopEndsWatches(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		fallback bool
	}{{"cache", false}, {"etcd-fallback", true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := startRestartable(t, func(o *app.Options) { o.WatchCacheEvents = 8 })
			c := newClientFor(t, r.URL())
			ctx := testContext(t)
			cms := client.Resource[api.ConfigMap](c).Namespace("default")
			opts := client.ListOptions{}
			if tc.fallback {
				for i := range 12 {
					cm, err := cms.Create(ctx, newConfigMap("", fmt.Sprintf("cm-%d", i), nil))
					if err != nil {
						t.Fatal(err)
					}
					if i == 0 {
						opts.ResourceVersion = cm.ResourceVersion
					}
				}
			}
			w, err := cms.Watch(ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			if tc.fallback {
				// The watch replays the 11 later creates from etcd.
				for i := 1; i < 12; i++ {
					select {
					case ev := <-w.ResultChan():
						if ev.Type != api.Added || ev.Object.Name != fmt.Sprintf("cm-%d", i) {
							t.Fatalf("event %d = %s %v", i, ev.Type, ev.Object)
						}
					case <-time.After(5 * time.Second):
						t.Fatalf("no event %d", i)
					}
				}
			}
			start := time.Now()
			r.stop()
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("stop with one open watch took %v", d)
			}
			select {
			case _, ok := <-w.ResultChan():
				if ok {
					t.Error("got an event instead of the end of the watch")
				}
			case <-time.After(time.Second):
				t.Error("the watch is still open after the server stopped")
			}
		})
	}
}
