package network

import (
	"context"
	"fmt"
	"net"
	goruntime "runtime"
	"strconv"
	"time"

	"github.com/vishvananda/netns"
)

// DialInNetNS connects to localhost:port inside the network namespace at
// path (127.0.0.1, then [::1]), as containerd's CRI port forward does. The
// socket is made on a locked OS thread switched into the namespace, and it
// stays there after the thread goes back; a thread that cannot go back is
// discarded. id names the sandbox in the error.
func DialInNetNS(ctx context.Context, path, id string, port uint16) (net.Conn, error) {
	type result struct {
		c   net.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		goruntime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			goruntime.UnlockOSThread()
			ch <- result{err: fmt.Errorf("current netns: %w", err)}
			return
		}
		defer orig.Close()
		target, err := netns.GetFromPath(path)
		if err != nil {
			goruntime.UnlockOSThread()
			ch <- result{err: fmt.Errorf("failed to execute portforward in network namespace %q: %w", path, err)}
			return
		}
		defer target.Close()
		if err := netns.Set(target); err != nil {
			if serr := netns.Set(orig); serr == nil {
				goruntime.UnlockOSThread()
			}
			ch <- result{err: fmt.Errorf("failed to execute portforward in network namespace %q: %w", path, err)}
			return
		}
		d := net.Dialer{Timeout: 10 * time.Second}
		p := strconv.Itoa(int(port))
		c, err4 := d.DialContext(ctx, "tcp4", net.JoinHostPort("127.0.0.1", p))
		var err6 error
		if err4 != nil {
			c, err6 = d.DialContext(ctx, "tcp6", net.JoinHostPort("::1", p))
		}
		if serr := netns.Set(orig); serr != nil {
			// Leave the thread locked: it dies with this goroutine.
			if c != nil {
				_ = c.Close()
			}
			ch <- result{err: fmt.Errorf("restore netns: %w", serr)}
			return
		}
		goruntime.UnlockOSThread()
		if err6 != nil {
			ch <- result{err: fmt.Errorf("failed to execute portforward in network namespace %q: failed to connect to localhost:%d inside namespace %q, IPv4: %v IPv6 %v ",
				path, port, id, err4, err6)}
			return
		}
		ch <- result{c: c}
	}()
	r := <-ch
	return r.c, r.err
}
