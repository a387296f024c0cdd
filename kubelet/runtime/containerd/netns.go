package containerd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"

	"github.com/vishvananda/netns"
)

// netnsDir is where named network namespaces are bind-mounted (as
// iproute2's "ip netns" and containerd's CRI do).
const netnsDir = "/var/run/netns"

// newNetNS creates a persistent network namespace named name and returns
// its path. The work happens on a dedicated, locked OS thread; if that
// thread cannot return to its original namespace it is discarded.
func newNetNS(name string) (string, error) {
	type result struct {
		path string
		err  error
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
		ns, err := netns.NewNamed(name)
		if err == nil {
			ns.Close()
		}
		if serr := netns.Set(orig); serr != nil {
			// Leave the thread locked: it dies with this goroutine.
			ch <- result{err: errors.Join(err, fmt.Errorf("restore netns: %w", serr))}
			return
		}
		goruntime.UnlockOSThread()
		if err != nil {
			ch <- result{err: fmt.Errorf("create netns %s: %w", name, err)}
			return
		}
		ch <- result{path: filepath.Join(netnsDir, name)}
	}()
	r := <-ch
	return r.path, r.err
}

// removeNetNS unmounts and removes a namespace made by newNetNS.
func removeNetNS(path string) error {
	if path == "" || filepath.Dir(path) != netnsDir {
		return nil
	}
	if _, err := os.Stat(path); os.IsNotExist(err) {
		return nil
	}
	if err := netns.DeleteNamed(filepath.Base(path)); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("remove netns %s: %w", path, err)
	}
	return nil
}

func netnsExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
