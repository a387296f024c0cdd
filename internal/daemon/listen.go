package daemon

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// ListenFDsEnv lists the file descriptors of listening TCP sockets a daemon
// inherits from the process that started it ("3,4"), the way systemd's
// socket activation hands sockets over. Listen serves an address from the
// inherited socket bound to it instead of binding it again, so a test binds
// 127.0.0.1:0 itself, knows the port before the daemon starts, and no other
// process can take the port in between (nor between a SIGKILL and a
// restart of the daemon).
const ListenFDsEnv = "MINIK8S_LISTEN_FDS"

var inherited struct {
	once sync.Once
	mu   sync.Mutex
	ls   []net.Listener
	err  error
}

// loadInherited takes the sockets of ListenFDsEnv and removes the variable,
// so the daemon's own children (CNI plugins, shims) do not look for them.
func loadInherited() {
	v := os.Getenv(ListenFDsEnv)
	if v == "" {
		return
	}
	_ = os.Unsetenv(ListenFDsEnv)
	for _, s := range strings.Split(v, ",") {
		fd, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || fd < 3 {
			inherited.err = fmt.Errorf("$%s=%q: want file descriptors from 3 up", ListenFDsEnv, v)
			return
		}
		f := os.NewFile(uintptr(fd), "inherited-listener")
		l, err := net.FileListener(f)
		f.Close() // FileListener holds its own copy
		if err != nil {
			inherited.err = fmt.Errorf("$%s: file descriptor %d: %w", ListenFDsEnv, fd, err)
			return
		}
		inherited.ls = append(inherited.ls, l)
	}
}

// Listen listens on the TCP address addr ("127.0.0.1:10259"), or returns the
// inherited socket bound to that address (see ListenFDsEnv); for an address
// on every interface (":8080"), the inherited socket of that port, whatever
// its address.
func Listen(addr string) (net.Listener, error) {
	inherited.once.Do(loadInherited)
	if inherited.err != nil {
		return nil, inherited.err
	}
	inherited.mu.Lock()
	if want, err := net.ResolveTCPAddr("tcp", addr); err == nil && want.Port != 0 {
		for i, l := range inherited.ls {
			if got, ok := l.Addr().(*net.TCPAddr); ok && got.Port == want.Port && sameIP(got.IP, want.IP) {
				inherited.ls = append(inherited.ls[:i], inherited.ls[i+1:]...)
				inherited.mu.Unlock()
				return l, nil
			}
		}
	}
	inherited.mu.Unlock()
	return net.Listen("tcp", addr)
}

// sameIP says whether an inherited socket on got serves a request for want.
func sameIP(got, want net.IP) bool {
	if len(want) == 0 || want.IsUnspecified() {
		return true
	}
	return got.Equal(want)
}
