package app

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// kube-apiserver's storagebackend DefaultHealthcheckTimeout and
// DefaultReadinessTimeout: how long the etcd probe of /livez (and
// /healthz) and of /readyz may take.
const (
	etcdHealthcheckTimeout = 2 * time.Second
	etcdReadycheckTimeout  = 2 * time.Second
)

// etcdCheck is kube-apiserver's etcd health check (newETCD3Check): a read
// of PREFIX/health, which needs a leader and a quorum, bounded by timeout.
// At most one probe runs per timeout/2; a check asked in between gets the
// error of the last probe sent (nil when it succeeded), so a storm of
// probes does not reach etcd.
type etcdCheck struct {
	// probe reads the key (client.Get); tests replace it.
	probe   func(ctx context.Context) error
	timeout time.Duration
	closed  <-chan struct{}

	mu   sync.Mutex
	next time.Time // when the next probe may be sent
	last error     // the result of the last probe sent
	at   time.Time // when that probe was sent
}

func newEtcdCheck(c *clientv3.Client, prefix string, timeout time.Duration, closed <-chan struct{}) *etcdCheck {
	key := path.Join("/", prefix, "health")
	probe := func(ctx context.Context) error {
		_, err := c.Get(ctx, key)
		return err
	}
	return &etcdCheck{probe: probe, timeout: timeout, closed: closed,
		last: errors.New("etcd client connection not yet established")}
}

// Check probes etcd, or answers from the last probe when one was sent
// less than timeout/2 ago.
func (e *etcdCheck) Check(context.Context) error {
	select {
	case <-e.closed:
		return errors.New("server is shutting down")
	default:
	}
	now := time.Now()
	e.mu.Lock()
	if now.Before(e.next) {
		err := e.last
		e.mu.Unlock()
		return err
	}
	e.next = now.Add(e.timeout / 2)
	e.mu.Unlock()

	// Not the request's context: the result is shared with the checks
	// that come before the next probe.
	ctx, cancel := context.WithTimeout(context.Background(), e.timeout)
	defer cancel()
	var err error
	if gerr := e.probe(ctx); gerr != nil {
		err = fmt.Errorf("error getting data from etcd: %w", gerr)
	}
	e.mu.Lock()
	if !now.Before(e.at) {
		e.last, e.at = err, now
	}
	e.mu.Unlock()
	return err
}
