package staticpods

import (
	"bytes"
	"log/slog"
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// watchMask are the directory events that may change the pods (kube's
// file_linux.go watches the same).
const watchMask = unix.IN_CREATE | unix.IN_MODIFY | unix.IN_CLOSE_WRITE | unix.IN_MOVED_TO | unix.IN_MOVED_FROM |
	unix.IN_DELETE | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ATTRIB

// watcher is an inotify watch of one directory that calls changed on every
// event about a file that is not hidden. A directory that is missing or
// goes away is watched again by the next watch call (the source's re-list).
type watcher struct {
	log     *slog.Logger
	changed func()
	f       *os.File

	mu  sync.Mutex
	dir string
	wd  int // -1: not watching
}

func newWatcher(log *slog.Logger, changed func()) *watcher {
	w := &watcher{log: log, changed: changed, wd: -1}
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		log.Warn("inotify is not available: static pods are read every period only", "err", err)
		return w
	}
	// Non-blocking: reads go through the runtime's poller and Close ends
	// them.
	w.f = os.NewFile(uintptr(fd), "inotify")
	go w.read()
	return w
}

// watch makes dir the watched directory (no-op when it already is).
func (w *watcher) watch(dir string) {
	if w.f == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.dir == dir && w.wd >= 0 {
		return
	}
	if w.wd >= 0 {
		unix.InotifyRmWatch(int(w.f.Fd()), uint32(w.wd))
		w.wd = -1
	}
	w.dir = dir
	wd, err := unix.InotifyAddWatch(int(w.f.Fd()), dir, watchMask)
	if err != nil {
		// Missing for now: the periodic list tries again.
		return
	}
	w.wd = wd
}

func (w *watcher) read() {
	buf := make([]byte, 64*(unix.SizeofInotifyEvent+unix.NAME_MAX+1))
	for {
		n, err := w.f.Read(buf)
		if err != nil {
			return
		}
		notify := false
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
			name = bytes.TrimRight(name, "\x00")
			off += unix.SizeofInotifyEvent + int(ev.Len)
			if ev.Mask&(unix.IN_IGNORED|unix.IN_DELETE_SELF|unix.IN_MOVE_SELF) != 0 {
				w.mu.Lock()
				if int(ev.Wd) == w.wd {
					w.wd = -1
				}
				w.mu.Unlock()
				notify = true
				continue
			}
			if len(name) > 0 && name[0] == '.' {
				continue
			}
			notify = true
		}
		if notify {
			w.changed()
		}
	}
}

func (w *watcher) close() {
	if w.f != nil {
		w.f.Close()
	}
}
