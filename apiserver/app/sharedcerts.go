package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/minik8s/minik8s/apiserver/serviceaccount"
	"github.com/minik8s/minik8s/internal/pki"
)

// sharedCertFiles are what kubeadm copies to a joining control-plane node
// (its certificate upload): the cluster CA, the service-account key pair,
// the front-proxy CA and the etcd CA. Each member makes its own serving,
// peer and client certificates from them, with its own names.
var sharedCertFiles = []string{
	pki.CACertFile, pki.CAKeyFile,
	serviceaccount.KeyFile, serviceaccount.PubKeyFile,
	pki.FrontProxyCACertFile, pki.FrontProxyCAKeyFile,
	pki.EtcdCACertFile, pki.EtcdCAKeyFile,
}

// sharedCertsLock is the lock file in --shared-cert-dir: members starting
// together take turns, so exactly one writes the shared files.
const sharedCertsLock = ".minik8s-shared-certs.lock"

// syncSharedCerts makes --cert-dir hold the cluster-wide CAs and keys of
// --shared-cert-dir, before anything reads or makes a certificate: the
// first member to start (the shared directory empty) makes its own, or
// keeps those it has, and writes them there; every later one copies them
// in. A member whose --cert-dir holds different ones was made for another
// cluster and stops here, changing nothing.
func (a *APIServer) syncSharedCerts(context.Context) error {
	shared := a.opts.SharedCertDir
	if shared == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Join(shared, pki.EtcdDir), 0o700); err != nil {
		return fmt.Errorf("--shared-cert-dir: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(shared, sharedCertsLock), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("--shared-cert-dir: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("--shared-cert-dir: lock: %w", err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)

	var have, missing []string
	for _, f := range sharedCertFiles {
		if _, err := os.Stat(filepath.Join(shared, f)); err == nil {
			have = append(have, f)
		} else if errors.Is(err, fs.ErrNotExist) {
			missing = append(missing, f)
		} else {
			return fmt.Errorf("--shared-cert-dir: %w", err)
		}
	}
	switch {
	case len(have) == 0:
		if err := a.ensureClusterCAs(); err != nil {
			return err
		}
		for _, f := range sharedCertFiles {
			if err := copyFile(filepath.Join(a.opts.CertDir, f), filepath.Join(shared, f)); err != nil {
				return fmt.Errorf("--shared-cert-dir: publish %s: %w", f, err)
			}
		}
		a.log.Info("wrote the cluster CAs and keys to the shared certificate directory", "dir", shared, "files", sharedCertFiles)
		return nil
	case len(missing) > 0:
		return fmt.Errorf("--shared-cert-dir %s holds %v but not %v: copy every one of them from a member's --cert-dir", shared, have, missing)
	}
	var copied []string
	for _, f := range sharedCertFiles {
		src, dst := filepath.Join(shared, f), filepath.Join(a.opts.CertDir, f)
		want, err := os.ReadFile(src)
		if err != nil {
			return fmt.Errorf("--shared-cert-dir: %w", err)
		}
		got, err := os.ReadFile(dst)
		switch {
		case err == nil && !bytes.Equal(got, want):
			return fmt.Errorf("%s in --cert-dir differs from the one in --shared-cert-dir %s: this member's certificates belong to another cluster (empty its --cert-dir and --data-dir to join this one)", f, shared)
		case err == nil:
		case errors.Is(err, fs.ErrNotExist):
			copied = append(copied, f)
		default:
			return fmt.Errorf("--cert-dir: %w", err)
		}
	}
	for _, f := range copied {
		if err := copyFile(filepath.Join(shared, f), filepath.Join(a.opts.CertDir, f)); err != nil {
			return fmt.Errorf("copy %s from --shared-cert-dir: %w", f, err)
		}
	}
	if len(copied) > 0 {
		a.log.Info("copied the cluster CAs and keys from the shared certificate directory", "dir", shared, "files", copied)
	}
	return nil
}

// ensureClusterCAs makes (or keeps) the files of sharedCertFiles in
// --cert-dir, as the first start would.
func (a *APIServer) ensureClusterCAs() error {
	dir := a.opts.CertDir
	for _, ca := range []struct{ dir, cn string }{{dir, pki.CACommonName}, {filepath.Join(dir, pki.EtcdDir), pki.EtcdCACommonName}} {
		crt, key := filepath.Join(ca.dir, pki.CACertFile), filepath.Join(ca.dir, pki.CAKeyFile)
		_, errCrt := os.Stat(crt)
		_, errKey := os.Stat(key)
		if errCrt == nil && errKey == nil {
			continue
		}
		if !errors.Is(errCrt, fs.ErrNotExist) || !errors.Is(errKey, fs.ErrNotExist) {
			return fmt.Errorf("CA %s: one of %s and %s is missing or unreadable (%v, %v)", ca.cn, crt, key, errCrt, errKey)
		}
		c, err := pki.NewCA(ca.cn, 0)
		if err != nil {
			return err
		}
		if err := c.WriteFiles(ca.dir); err != nil {
			return err
		}
		a.log.Info("wrote certificate", "file", crt)
	}
	if _, err := serviceaccount.EnsureKeys(dir); err != nil {
		return fmt.Errorf("service account key in %s: %w", dir, err)
	}
	if _, _, _, err := pki.EnsureFrontProxy(dir); err != nil {
		return fmt.Errorf("front-proxy CA in %s: %w", dir, err)
	}
	return nil
}

// copyFile copies src to dst (mode of src; parent made 0700), through a
// temporary file renamed into place.
func copyFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	fi, err := os.Stat(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	tmp := dst + ".tmp"
	if err := os.WriteFile(tmp, data, fi.Mode().Perm()); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}
