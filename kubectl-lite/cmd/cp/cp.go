package cp

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/podselect"
	"github.com/minik8s/minik8s/kubectl-lite/remotecommand"
)

// spec is one side of a copy: a local path, or [NAMESPACE/]POD:PATH.
type spec struct {
	namespace, pod, file string
}

func parseSpec(s string) spec {
	i := strings.Index(s, ":")
	// "C:\x" style local paths and "./a:b" are local.
	if i <= 0 || strings.HasPrefix(s, ".") || strings.HasPrefix(s, "/") {
		return spec{file: s}
	}
	sp := spec{pod: s[:i], file: s[i+1:]}
	if ns, pod, ok := strings.Cut(sp.pod, "/"); ok {
		sp.namespace, sp.pod = ns, pod
	}
	return sp
}

// NewCommand returns the cp command.
func NewCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var container string
	cmd := &cobra.Command{
		Use:   "cp <file-spec-src> <file-spec-dest>",
		Short: "Copy files and directories to and from containers",
		Long: `Copy files and directories to and from containers.

A remote file is [NAMESPACE/]POD:PATH. The copy is a tar stream through
exec, so the container needs a tar binary.`,
		Example: `  kubectl-lite cp /tmp/foo_dir some-pod:/tmp/bar_dir
  kubectl-lite cp /tmp/foo some-pod:/tmp/bar -c specific-container
  kubectl-lite cp some-namespace/some-pod:/tmp/foo /tmp/bar`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, dst := parseSpec(args[0]), parseSpec(args[1])
			switch {
			case src.pod != "" && dst.pod != "":
				return errors.New("one of src or dest must be a local file specification")
			case src.pod == "" && dst.pod == "":
				return errors.New("one of src or dest must be a remote file specification")
			case src.file == "" || dst.file == "":
				return errors.New("filepath can not be empty")
			}
			remote := src
			if dst.pod != "" {
				remote = dst
			}
			ns := remote.namespace
			if ns == "" {
				var err error
				if ns, err = g.DefaultNamespace(); err != nil {
					return err
				}
			}
			cc, err := g.ClientConfig()
			if err != nil {
				return err
			}
			c, err := client.New(cc)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			pod, err := client.Resource[api.Pod](c).Namespace(ns).Get(ctx, remote.pod)
			if err != nil {
				return err
			}
			ctr := container
			if ctr == "" {
				ctr = podselect.DefaultContainer(streams, pod)
			}
			exec := func(command []string, stdin io.Reader, stdout io.Writer) error {
				q := url.Values{"container": {ctr}, "stdout": {"true"}, "stderr": {"true"}}
				for _, a := range command {
					q.Add("command", a)
				}
				opts := remotecommand.Options{Stdout: stdout, Stderr: streams.ErrOut}
				if stdin != nil {
					q.Set("stdin", "true")
					opts.Stdin = stdin
				}
				return remotecommand.Exec(ctx, cc, client.ResourcePath(client.Resource[api.Pod](c).Info(), ns, pod.Name, "exec"), q, opts)
			}
			if src.pod != "" {
				return copyFrom(exec, src.file, dst.file, streams.ErrOut)
			}
			return copyTo(exec, src.file, dst.file)
		},
	}
	cmd.Flags().StringVarP(&container, "container", "c", "", "Container name. If omitted, use the kubectl.kubernetes.io/default-container annotation for selecting the container to be attached or the first container in the pod will be chosen")
	return cmd
}

type execFunc func(command []string, stdin io.Reader, stdout io.Writer) error

// copyFrom runs "tar cf - SRC" in the container and unpacks it at dst:
// the remote SRC becomes dst, as with cp -r.
func copyFrom(exec execFunc, src, dst string, warn io.Writer) error {
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := exec([]string{"tar", "cf", "-", src}, nil, pw)
		pw.CloseWithError(err)
		done <- err
	}()
	// tar drops the leading "/" of the names it writes.
	prefix := path.Clean(strings.TrimPrefix(src, "/"))
	untarErr := untar(pr, prefix, dst, warn)
	pr.CloseWithError(untarErr)
	if err := <-done; err != nil {
		return err
	}
	return untarErr
}

func untar(r io.Reader, prefix, dst string, warn io.Writer) error {
	tr := tar.NewReader(r)
	base, err := filepath.Abs(dst)
	if err != nil {
		return err
	}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read tar from the container: %w", err)
		}
		name := path.Clean(h.Name)
		rel, ok := strings.CutPrefix(name, prefix)
		if !ok || (rel != "" && !strings.HasPrefix(rel, "/")) {
			continue
		}
		target := filepath.Join(base, filepath.FromSlash(rel))
		// Nothing may land outside dst ("../" in a hostile archive).
		if target != base && !strings.HasPrefix(target, base+string(filepath.Separator)) {
			fmt.Fprintf(warn, "warning: file %q is outside target destination, skipping\n", h.Name)
			continue
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, fs.FileMode(h.Mode).Perm())
			if err != nil {
				return err
			}
			if _, err := io.Copy(f, tr); err != nil {
				f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
		default:
			fmt.Fprintf(warn, "warning: skipping %q: only files and directories are copied\n", h.Name)
		}
	}
}

// copyTo packs src under the name of dst's last element and unpacks it in
// the container with "tar -xmf - -C DIR".
func copyTo(exec execFunc, src, dst string) error {
	if _, err := os.Stat(src); err != nil {
		return fmt.Errorf("%s doesn't exist in local filesystem", src)
	}
	dir, name := path.Split(path.Clean(dst))
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(tarTree(pw, src, name)) }()
	command := []string{"tar", "-xmf", "-"}
	if dir != "" {
		command = append(command, "-C", dir)
	}
	err := exec(command, pr, io.Discard)
	pr.Close()
	return err
}

// tarTree writes src (a file or a directory tree) to w, named as name.
func tarTree(w io.Writer, src, name string) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() && !info.IsDir() {
			return nil
		}
		h, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		h.Name = path.Join(name, filepath.ToSlash(rel))
		if info.IsDir() {
			h.Name += "/"
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if info.IsDir() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(tw, f)
		return err
	})
	if err != nil {
		return err
	}
	return tw.Close()
}
