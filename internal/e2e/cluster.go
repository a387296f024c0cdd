package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// Cluster is the compose cluster of one checkout, driven from the host.
type Cluster struct {
	// Root is the repository root (docker-compose.yaml, bin/, scripts/).
	Root string
	// Compose is the compose command: "docker compose" (v2) or "docker-compose".
	Compose []string
	// Project is the compose project name (COMPOSE_PROJECT_NAME, .env).
	Project string
	// Kubeconfig is the admin kubeconfig the bootstrap service writes.
	Kubeconfig string
	// Logf reports progress; nil is quiet.
	Logf func(format string, args ...any)
}

// NewCluster finds the repository root above dir and the compose command.
func NewCluster(dir string) (*Cluster, error) {
	root, err := findRoot(dir)
	if err != nil {
		return nil, err
	}
	compose := []string{"docker-compose"}
	if exec.Command("docker", "compose", "version").Run() == nil {
		compose = []string{"docker", "compose"}
	} else if _, err := exec.LookPath("docker-compose"); err != nil {
		return nil, errors.New("neither the docker compose plugin nor docker-compose is installed")
	}
	project := os.Getenv("COMPOSE_PROJECT_NAME")
	if project == "" {
		project = "minik8s"
	}
	return &Cluster{
		Root:       root,
		Compose:    compose,
		Project:    project,
		Kubeconfig: filepath.Join(root, ".minik8s", "kubeconfig"),
	}, nil
}

func findRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "docker-compose.yaml")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no docker-compose.yaml above %s", dir)
		}
	}
}

func (c *Cluster) logf(format string, args ...any) {
	if c.Logf != nil {
		c.Logf(format, args...)
	}
}

// CommandError is a failed command with its output.
type CommandError struct {
	Cmd    string
	Err    error
	Stderr string
}

func (e *CommandError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if len(msg) > 4000 {
		msg = "..." + msg[len(msg)-4000:]
	}
	return fmt.Sprintf("%s: %v: %s", e.Cmd, e.Err, msg)
}

func (e *CommandError) Unwrap() error { return e.Err }

// Run runs name args in the repository root and returns its standard output.
func (c *Cluster) Run(ctx context.Context, name string, args ...string) (string, error) {
	return c.RunInput(ctx, nil, name, args...)
}

// RunInput is Run with stdin.
func (c *Cluster) RunInput(ctx context.Context, stdin []byte, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = c.Root
	cmd.Env = append(os.Environ(), "COMPOSE_PROJECT_NAME="+c.Project)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		return out.String(), &CommandError{Cmd: strings.Join(append([]string{name}, args...), " "), Err: err, Stderr: errb.String() + out.String()}
	}
	return out.String(), nil
}

// Kubectl runs bin/kubectl-lite with the admin kubeconfig.
func (c *Cluster) Kubectl(ctx context.Context, args ...string) (string, error) {
	return c.Run(ctx, filepath.Join(c.Root, "bin", "kubectl-lite"), append([]string{"--kubeconfig", c.Kubeconfig}, args...)...)
}

// KubectlJSON runs kubectl-lite ... -o json and decodes the output into v.
func (c *Cluster) KubectlJSON(ctx context.Context, v any, args ...string) error {
	out, err := c.Kubectl(ctx, append(args, "-o", "json")...)
	if err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		return fmt.Errorf("kubectl-lite %s: decode: %w", strings.Join(args, " "), err)
	}
	return nil
}

// ComposeRun runs a compose subcommand.
func (c *Cluster) ComposeRun(ctx context.Context, args ...string) (string, error) {
	return c.Run(ctx, c.Compose[0], append(c.Compose[1:], args...)...)
}

// Up builds what is stale, starts the cluster from a clean state (down -v
// first), loads the workload and add-on images into the nodes, waits until
// nodes nodes are Ready and deploys the add-ons (kube-proxy, cluster DNS,
// the ingress controller).
func (c *Cluster) Up(ctx context.Context, nodes int) error {
	steps := []struct {
		what string
		cmd  []string
	}{
		{"images", []string{"scripts/images.sh"}},
		{"clean state", append(c.Compose, "down", "-v", "--remove-orphans")},
		{"up", append(c.Compose, "up", "-d", "--remove-orphans")},
		{"load images", []string{"scripts/load-image.sh", "minik8s/busybox:latest,minik8s/busybox:v2,minik8s/kube-proxy:latest,minik8s/cluster-dns:latest,minik8s/ingress-controller:latest"}},
		{"wait ready", []string{"scripts/wait-ready.sh", "-n", fmt.Sprint(nodes), "-t", "180"}},
		{"add-ons", []string{"scripts/addons.sh", "-t", "180"}},
	}
	if err := os.MkdirAll(filepath.Join(c.Root, ".minik8s"), 0o755); err != nil {
		return err
	}
	for _, s := range steps {
		start := time.Now()
		if _, err := c.Run(ctx, s.cmd[0], s.cmd[1:]...); err != nil {
			return fmt.Errorf("cluster %s: %w", s.what, err)
		}
		c.logf("cluster %s: %.1fs", s.what, time.Since(start).Seconds())
	}
	return nil
}

// Restart is the README's stop/start cycle, make down && make up: the node
// containers are removed and created again (a reboot of every node: their
// containerd loses every task, the compose network and the node addresses
// are new) while the volumes (etcd, PKI, node images) stay.
func (c *Cluster) Restart(ctx context.Context) error {
	for _, target := range []string{"down", "up"} {
		start := time.Now()
		if _, err := c.Run(ctx, "make", target); err != nil {
			return fmt.Errorf("make %s: %w", target, err)
		}
		c.logf("make %s: %.1fs", target, time.Since(start).Seconds())
	}
	return nil
}

// TestImage builds the suite's program pkg ("./internal/e2e/incluster")
// statically into bin/KEY, the image minik8s/KEY:latest from it
// (scripts/images.sh KEY) and loads that into nodes (default: every node).
func (c *Cluster) TestImage(ctx context.Context, pkg, key string, nodes ...string) error {
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	build := exec.CommandContext(ctx, "nice", goBin, "build", "-trimpath", "-ldflags", "-s -w", "-o", filepath.Join("bin", key), pkg)
	build.Dir = c.Root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v: %s", pkg, err, out)
	}
	if _, err := c.Run(ctx, filepath.Join(c.Root, "scripts", "images.sh"), key); err != nil {
		return err
	}
	_, err = c.Run(ctx, filepath.Join(c.Root, "scripts", "load-image.sh"), append([]string{"minik8s/" + key + ":latest"}, nodes...)...)
	return err
}

// Down removes the containers and volumes.
func (c *Cluster) Down(ctx context.Context) error {
	_, err := c.ComposeRun(ctx, "down", "-v", "--remove-orphans")
	return err
}

// Container returns the ID of the container of a compose service.
func (c *Cluster) Container(ctx context.Context, service string) (string, error) {
	out, err := c.Run(ctx, "docker", "ps", "-aq",
		"--filter", "label=com.docker.compose.project="+c.Project,
		"--filter", "label=com.docker.compose.service="+service)
	if err != nil {
		return "", err
	}
	ids := strings.Fields(out)
	if len(ids) == 0 {
		return "", fmt.Errorf("no container of service %s in project %s", service, c.Project)
	}
	return ids[0], nil
}

// Logs returns the last lines of a service's container log.
func (c *Cluster) Logs(ctx context.Context, service string, lines int) string {
	id, err := c.Container(ctx, service)
	if err != nil {
		return err.Error()
	}
	cmd := exec.CommandContext(ctx, "docker", "logs", "--tail", fmt.Sprint(lines), id)
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// Exec runs a command in a service's container.
func (c *Cluster) Exec(ctx context.Context, service string, args ...string) (string, error) {
	id, err := c.Container(ctx, service)
	if err != nil {
		return "", err
	}
	return c.Run(ctx, "docker", append([]string{"exec", id}, args...)...)
}

// Poll calls cond every interval until it returns true or an error that is
// not Retry, or ctx ends; the last reason cond gave is in the timeout error.
func Poll(ctx context.Context, interval time.Duration, what string, cond func(ctx context.Context) (bool, string, error)) error {
	last := ""
	for {
		ok, reason, err := cond(ctx)
		if err != nil && !errors.Is(err, ErrRetry) {
			return fmt.Errorf("%s: %w", what, err)
		}
		if err != nil {
			reason = err.Error()
		}
		if ok {
			return nil
		}
		if reason != "" {
			last = reason
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("timed out waiting for %s; last: %s", what, last)
		case <-time.After(interval):
		}
	}
}

// ErrRetry marks a cond error Poll retries.
var ErrRetry = errors.New("retry")

// Retry wraps err as retryable.
func Retry(err error) error { return fmt.Errorf("%w: %w", ErrRetry, err) }
