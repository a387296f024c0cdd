package etcd_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/apiserver/etcd"
	"github.com/minik8s/minik8s/apiserver/etcd/etcdtest"
)

// idleRSSLimit is the budget of an idle embedded etcd and its client: the
// whole apiserver with its etcd should stay under 80 MB, so etcd gets most
// but not all of it.
const idleRSSLimit = 60 << 20

// TestIdleRSS measures the resident size of a fresh process that holds an
// embedded etcd with a few hundred keys, after it has settled. It runs the
// measurement in a child process (this test binary re-executed) so that
// other tests do not inflate the figure.
func TestIdleRSS(t *testing.T) {
	if testing.Short() {
		t.Skip("needs an embedded etcd (skipped with -short)")
	}
	if raceEnabled {
		t.Skip("the race detector inflates memory use")
	}
	if os.Getenv("ETCD_RSS_CHILD") != "" {
		rssChild()
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestIdleRSS$", "-test.v")
	cmd.Env = append(os.Environ(), "ETCD_RSS_CHILD="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var rss int64 = -1
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "RSS_BYTES="); ok {
			rss, _ = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	if rss < 0 {
		t.Fatalf("child printed no RSS:\n%s", out)
	}
	t.Logf("idle RSS of a process with an embedded etcd: %.1f MB", float64(rss)/(1<<20))
	if rss > idleRSSLimit {
		t.Errorf("idle RSS %.1f MB exceeds %d MB", float64(rss)/(1<<20), idleRSSLimit>>20)
	}
}

func rssChild() {
	b, err := etcd.Start(context.Background(), etcd.Config{DataDir: os.Getenv("ETCD_RSS_CHILD"), Logger: etcdtest.Logger()})
	if err != nil {
		fmt.Println("start:", err)
		os.Exit(1)
	}
	defer b.Close()
	val := strings.Repeat("x", 1024)
	for i := range 500 {
		if _, err := b.Client().Put(context.Background(), fmt.Sprintf("/registry/pods/default/p%d", i), val); err != nil {
			fmt.Println("put:", err)
			os.Exit(1)
		}
	}
	time.Sleep(3 * time.Second)
	runtime.GC()
	debug.FreeOSMemory()
	time.Sleep(500 * time.Millisecond)
	fmt.Printf("RSS_BYTES=%d\n", vmRSS())
}

func vmRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return -1
}
