package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
)

// PodLogDir is where the logs of a pod's containers are kept:
// <pod-logs-dir>/<namespace>_<name>_<uid>.
func PodLogDir(podLogsDir, namespace, name string, uid api.UID) string {
	return filepath.Join(podLogsDir, namespace+"_"+name+"_"+string(uid))
}

// ContainerLogPath is the log file of one run of a container:
// <pod dir>/<container>/<restartCount>.log.
func ContainerLogPath(podLogsDir, namespace, name string, uid api.UID, container string, restartCount int) string {
	return logPath(filepath.Join(PodLogDir(podLogsDir, namespace, name, uid), container), restartCount)
}

// follower decides, while following, whether more output may come.
type follower struct {
	// done reports that the container will write no more (the pod is gone
	// or finished).
	done func() bool
	// switchFiles follows a restart to the next restartCount file.
	switchFiles bool
	poll        time.Duration
	flush       func()
	log         *slog.Logger
}

// streamLog writes the log file of run restart in dir to lw, from the
// start or the last TailLines lines; with Follow it keeps reading as the
// file grows and moves on to the next run's file, until ctx ends or the
// container is done.
func streamLog(ctx context.Context, dir string, restart int, opts LogOptions, lw *logWriter, fl follower) error {
	f, err := os.Open(logPath(dir, restart))
	if err != nil {
		return err
	}
	defer func() { f.Close() }()
	off, err := tailOffset(f, opts.TailLines)
	if err != nil {
		return err
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return err
	}
	br := bufio.NewReaderSize(f, 64<<10)
	var pending []byte // a line the runtime has not finished writing
	emit := func(line []byte) error {
		rec, err := parseCRILine(line)
		if err != nil {
			fl.log.Debug("skipping a malformed log line", "file", f.Name(), "err", err)
			return nil
		}
		return lw.write(rec)
	}
	for {
		chunk, rerr := br.ReadSlice('\n')
		if rerr == nil {
			line := chunk[:len(chunk)-1]
			if len(pending) > 0 {
				line = append(pending, line...)
				pending = nil
			}
			if err := emit(line); err != nil {
				return limitIsEnd(err)
			}
			continue
		}
		if errors.Is(rerr, bufio.ErrBufferFull) {
			pending = append(pending, chunk...)
			continue
		}
		if !errors.Is(rerr, io.EOF) {
			return rerr
		}
		pending = append(pending, chunk...)
		if !opts.Follow {
			if len(pending) > 0 {
				return limitIsEnd(emit(pending))
			}
			return nil
		}
		fl.flush()
		if fl.switchFiles {
			if runs, err := logFiles(dir); err == nil && len(runs) > 0 && runs[len(runs)-1] > restart {
				if len(pending) > 0 {
					if err := emit(pending); err != nil {
						return limitIsEnd(err)
					}
					pending = nil
				}
				next := runs[len(runs)-1]
				for _, r := range runs {
					if r > restart {
						next = r
						break
					}
				}
				nf, err := os.Open(logPath(dir, next))
				if err != nil {
					return err
				}
				f.Close()
				f, restart = nf, next
				br.Reset(f)
				continue
			}
		}
		if fl.done() {
			// One last read: the container may have written before it ended.
			if n, _ := br.Peek(1); len(n) > 0 {
				continue
			}
			if len(pending) > 0 {
				return limitIsEnd(emit(pending))
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(fl.poll):
		}
	}
}

func limitIsEnd(err error) error {
	if errors.Is(err, errLimitReached) {
		return nil
	}
	return err
}

// containerLogDir finds the log directory of a container of pod and the
// run to read (the newest, or the one before with previous).
func containerLogDir(podLogsDir string, pod *api.Pod, container string, previous bool) (string, int, error) {
	dir := filepath.Join(PodLogDir(podLogsDir, pod.Namespace, pod.Name, pod.UID), container)
	runs, err := logFiles(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", 0, err
	}
	if previous {
		if len(runs) < 2 {
			return "", 0, apierrors.NewBadRequest(fmt.Sprintf("previous terminated container %q in pod %q not found", container, pod.Name))
		}
		return dir, runs[len(runs)-2], nil
	}
	if len(runs) == 0 {
		reason := "ContainerCreating"
		for _, cs := range append(append([]api.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...) {
			if cs.Name == container && cs.State.Waiting != nil && cs.State.Waiting.Reason != "" {
				reason = cs.State.Waiting.Reason
			}
		}
		return "", 0, apierrors.NewBadRequest(fmt.Sprintf("container %q in pod %q is waiting to start: %s", container, pod.Name, reason))
	}
	return dir, runs[len(runs)-1], nil
}
