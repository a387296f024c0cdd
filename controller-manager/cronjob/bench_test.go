package cronjob_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/controller-manager/controllermanagertest"
	"github.com/minik8s/minik8s/internal/client"
)

// BenchmarkCronJobControllerCPU is the cronjob controller's cost with
// MINIK8S_BENCH_CRONJOBS (default 1000) CronJobs scheduled every minute,
// against a real apiserver: the controller-manager runs as its own process
// (only the cronjob controller, default flags: 50 QPS) so that its CPU,
// read from /proc/PID/stat around each window, is its alone. It reports
//
//   - suspended-cpu-ms/min: all CronJobs suspended, scaled to a minute;
//   - active-cpu-ms/min: the minute from just before a schedule time, in
//     which every CronJob makes its Job and records it;
//   - apiserver-cpu-ms/min: this process (apiserver and etcd) in that
//     active minute;
//   - jobs/min and last-job-s: the Jobs made in that minute (every
//     CronJob's, unless the controller fell behind) and how long after the
//     schedule time the last one was created.
//
// It takes about two minutes (it waits for the wall clock's minute) and
// runs once whatever b.N asks; run it with -benchtime=1x:
//
//	go test ./controller-manager/cronjob/ -run '^$' -bench CronJobControllerCPU -benchtime=1x
func BenchmarkCronJobControllerCPU(b *testing.B) {
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("MINIK8S_BENCH_CRONJOBS")); err == nil && v > 0 {
		n = v
	}
	b.Setenv("KUBECONFIG", "")
	srv := apiservertest.Start(b)
	cl, err := client.New(&client.Config{Host: srv.URL(), QPS: -1, Timeout: 30 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	const ns = "bench"
	if _, err := client.Resource[api.Namespace](cl).Create(ctx, &api.Namespace{ObjectMeta: api.ObjectMeta{Name: ns}}); err != nil {
		b.Fatal(err)
	}
	cm := startControllerManager(b, srv.URL())

	cronJobs := client.Resource[api.CronJob](cl).Namespace(ns)
	controllermanagertest.Parallel(b, n, func(i int) error {
		_, err := cronJobs.Create(ctx, &api.CronJob{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("cj-%04d", i)},
			Spec: api.CronJobSpec{Schedule: "* * * * *", Suspend: new(true),
				JobTemplate: api.JobTemplateSpec{Spec: api.JobSpec{Template: api.PodTemplateSpec{Spec: api.PodSpec{
					RestartPolicy: api.RestartPolicyNever, Containers: []api.Container{{Name: "c", Image: "busybox", Command: []string{"true"}}}}}}}}})
		return err
	})
	time.Sleep(2 * time.Second) // the controller has seen them

	// Suspended, for at least 10 s and until 5-35 s past a minute, so
	// that the CronJobs resume well within one.
	start := time.Now()
	resume := start.Add(10 * time.Second)
	if s := resume.Second(); s < 5 {
		resume = resume.Truncate(time.Minute).Add(5 * time.Second)
	} else if s > 35 {
		resume = resume.Truncate(time.Minute).Add(65 * time.Second)
	}
	cpu0 := cm.cpu()
	time.Sleep(time.Until(resume))
	suspended := perMinute(cm.cpu()-cpu0, time.Since(start))

	// They resume as CronJobs that ran at this minute's schedule time
	// (status.lastScheduleTime), as long-lived ones have: none has a
	// missed time to catch up on, each runs at the next minute.
	ran := time.Now().Truncate(time.Minute)
	tick := ran.Add(time.Minute)
	status := []byte(fmt.Sprintf(`{"status":{"lastScheduleTime":%q}}`, ran.UTC().Format(time.RFC3339)))
	controllermanagertest.Parallel(b, n, func(i int) error {
		name := fmt.Sprintf("cj-%04d", i)
		if _, err := cronJobs.Patch(ctx, name, client.MergePatchType, status, "status"); err != nil {
			return err
		}
		_, err := cronJobs.Patch(ctx, name, client.MergePatchType, []byte(`{"spec":{"suspend":false}}`))
		return err
	})
	if time.Until(tick) < 3*time.Second {
		b.Fatalf("resuming %d CronJobs took until %s, too close to the schedule time", n, time.Now().Format(time.TimeOnly))
	}
	// The active minute: from a second before the schedule time.
	time.Sleep(time.Until(tick.Add(-time.Second)))
	b.ResetTimer()
	cpu0, self0 := cm.cpu(), selfCPU()
	time.Sleep(time.Minute)
	active, self := cm.cpu()-cpu0, selfCPU()-self0
	b.StopTimer()

	jobs, err := client.Resource[api.Job](cl).Namespace(ns).List(ctx, client.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	var last time.Time
	for _, j := range jobs.Items {
		last = latestOf(last, j.CreationTimestamp.Time)
	}
	if len(jobs.Items) == 0 {
		b.Errorf("no Job made in the active minute; controller log:\n%s", cm.logTail())
	}
	b.ReportMetric(float64(suspended.Milliseconds()), "suspended-cpu-ms/min")
	b.ReportMetric(float64(active.Milliseconds()), "active-cpu-ms/min")
	b.ReportMetric(float64(self.Milliseconds()), "apiserver-cpu-ms/min")
	b.ReportMetric(float64(len(jobs.Items)), "jobs/min")
	b.ReportMetric(last.Sub(tick).Seconds(), "last-job-s")
}

func latestOf(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func perMinute(cpu, wall time.Duration) time.Duration {
	return time.Duration(float64(cpu) * float64(time.Minute) / float64(wall))
}

// selfCPU is this process' user and system CPU time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// process is a controller-manager running as a child process.
type process struct {
	cmd *exec.Cmd
	log string
}

// startControllerManager builds the controller-manager and runs it with
// only the cronjob controller against the apiserver at url.
func startControllerManager(b *testing.B, url string) *process {
	b.Helper()
	dir := b.TempDir()
	bin := filepath.Join(dir, "controller-manager")
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", bin, "github.com/minik8s/minik8s/controller-manager")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build controller-manager: %v\n%s", err, out)
	}
	p := &process{log: filepath.Join(dir, "controller-manager.log")}
	logFile, err := os.Create(p.log)
	if err != nil {
		b.Fatal(err)
	}
	p.cmd = exec.Command(bin, "--master="+url, "--controllers=cronjob", "--leader-elect=false", "--secure-port=0")
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	if err := p.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = p.cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = p.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-done
		}
		logFile.Close()
	})
	return p
}

// cpu is the process' user and system CPU time from /proc/PID/stat
// (fields 14 and 15, in clock ticks of 10 ms on Linux).
func (p *process) cpu() time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// The command name may hold spaces: the fields start after its ')'.
	fields := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	if len(fields) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

func (p *process) logTail() string {
	data, _ := os.ReadFile(p.log)
	if len(data) > 4000 {
		data = data[len(data)-4000:]
	}
	return string(data)
}
