package volume

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

func read(t *testing.T, dir, p string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, p))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The layout is kube's: files in a timestamped directory, ..data pointing
// at it, top-level entries through ..data; modes as given; an unchanged
// payload writes nothing; a changed one replaces the old directory and
// drops the entries it no longer has.
func TestAtomicWriterLayout(t *testing.T) {
	dir := t.TempDir()
	w := NewAtomicWriter(dir)
	changed, err := w.Write(map[string]FileProjection{
		"token": {Data: []byte("t1"), Mode: 0o644}, "sub/x": {Data: []byte("x"), Mode: 0o600}, "gone": {Data: []byte("g"), Mode: 0o644},
	})
	if err != nil || !changed {
		t.Fatalf("first write: %v, %v", changed, err)
	}
	ts, err := os.Readlink(filepath.Join(dir, "..data"))
	if err != nil || !strings.HasPrefix(ts, "..20") {
		t.Fatalf("..data -> %q, %v", ts, err)
	}
	for name, want := range map[string]string{"token": "..data/token", "sub": "..data/sub", "gone": "..data/gone"} {
		if got, err := os.Readlink(filepath.Join(dir, name)); err != nil || got != want {
			t.Errorf("%s -> %q, %v; want %q", name, got, err, want)
		}
	}
	if got := read(t, dir, "sub/x"); got != "x" {
		t.Errorf("sub/x = %q", got)
	}
	if fi, err := os.Stat(filepath.Join(dir, "sub/x")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("sub/x mode %v, %v", fi.Mode(), err)
	}
	changed, err = w.Write(map[string]FileProjection{
		"token": {Data: []byte("t1"), Mode: 0o644}, "sub/x": {Data: []byte("x"), Mode: 0o600}, "gone": {Data: []byte("g"), Mode: 0o644},
	})
	if err != nil || changed {
		t.Fatalf("same payload: changed %v, %v", changed, err)
	}
	if now, _ := os.Readlink(filepath.Join(dir, "..data")); now != ts {
		t.Errorf("same payload moved ..data to %s", now)
	}
	if changed, err = w.Write(map[string]FileProjection{"token": {Data: []byte("t2"), Mode: 0o644}, "sub/x": {Data: []byte("x"), Mode: 0o600}}); err != nil || !changed {
		t.Fatalf("update: %v, %v", changed, err)
	}
	if got := read(t, dir, "token"); got != "t2" {
		t.Errorf("token = %q after update", got)
	}
	if _, err := os.Lstat(filepath.Join(dir, "gone")); !os.IsNotExist(err) {
		t.Errorf("dropped key still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ts)); !os.IsNotExist(err) {
		t.Errorf("old timestamped dir kept: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != 4 { // ..TS, ..data, sub, token
		t.Errorf("entries %v", names)
	}
}

func TestAtomicWriterRefusesEscapes(t *testing.T) {
	for _, p := range []string{"../x", "/etc/passwd", "a/../../x", "..data", ""} {
		if _, err := NewAtomicWriter(t.TempDir()).Write(map[string]FileProjection{p: {Data: []byte("x"), Mode: 0o644}}); err == nil {
			t.Errorf("path %q accepted", p)
		}
	}
}

// A reader going through the volume (as a container does through its bind
// mount) sees one payload or the next, never files of both.
func TestAtomicWriterUpdateSeenWhole(t *testing.T) {
	dir := t.TempDir()
	w := NewAtomicWriter(dir)
	payload := func(gen string) map[string]FileProjection {
		return map[string]FileProjection{"a": {Data: []byte(gen), Mode: 0o644}, "b/c": {Data: []byte(gen), Mode: 0o644}}
	}
	if _, err := w.Write(payload("0")); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var mixed, reads atomic.Int64
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for !stop.Load() {
				// Through ..data once, as a reader holding the directory.
				ts, err := os.Readlink(filepath.Join(dir, "..data"))
				if err != nil {
					continue
				}
				a, err1 := os.ReadFile(filepath.Join(dir, ts, "a"))
				c, err2 := os.ReadFile(filepath.Join(dir, ts, "b/c"))
				if err1 != nil || err2 != nil {
					continue // the old directory went away meanwhile
				}
				reads.Add(1)
				if string(a) != string(c) {
					mixed.Add(1)
				}
			}
		})
	}
	for i := 1; i <= 200; i++ {
		if _, err := w.Write(payload(strings.Repeat("x", i))); err != nil {
			t.Fatal(err)
		}
	}
	stop.Store(true)
	wg.Wait()
	if mixed.Load() > 0 {
		t.Errorf("%d of %d reads saw a mix of two payloads", mixed.Load(), reads.Load())
	}
	if got := read(t, dir, "b/c"); got != strings.Repeat("x", 200) {
		t.Errorf("final b/c = %q", got)
	}
}

// TestAtomicWriterIgnoresForeignDataLink: a ..data link rewritten to point
// outside the volume (by a container that could write it) is replaced,
// and what it pointed at is neither read nor removed.
func TestAtomicWriterIgnoresForeignDataLink(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	outside := filepath.Join(root, "host")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "precious"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "vol")
	w := NewAtomicWriter(dir)
	if _, err := w.Write(map[string]FileProjection{"a": {Data: []byte("1"), Mode: 0o644}}); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "..data")
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../host", link); err != nil {
		t.Fatal(err)
	}
	if changed, err := w.Write(map[string]FileProjection{"a": {Data: []byte("2"), Mode: 0o644}}); err != nil || !changed {
		t.Fatalf("write after the link was rewritten: changed %v, err %v", changed, err)
	}
	if b, err := os.ReadFile(filepath.Join(outside, "precious")); err != nil || string(b) != "keep" {
		t.Fatalf("the directory the foreign link named was touched: %q %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "a")); err != nil || string(b) != "2" {
		t.Fatalf("a = %q %v, want 2", b, err)
	}
	if target, err := os.Readlink(link); err != nil || !isTimestampDir(target) {
		t.Fatalf("..data -> %q %v, want a timestamped directory", target, err)
	}
}

// An entry already at a top-level name (a plain file, or a link to
// somewhere else) is replaced by the link through ..data; a directory in
// the way is an error that names it, and the payload is not published.
func TestAtomicWriterReplacesStrayEntries(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte("stale"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/hostname", filepath.Join(dir, "ca.crt")); err != nil {
		t.Fatal(err)
	}
	w := NewAtomicWriter(dir)
	if _, err := w.Write(map[string]FileProjection{"token": {Data: []byte("t1"), Mode: 0o644}, "ca.crt": {Data: []byte("ca"), Mode: 0o644}}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, dir, "token"); got != "t1" {
		t.Errorf("token = %q", got)
	}
	if got := read(t, dir, "ca.crt"); got != "ca" {
		t.Errorf("ca.crt = %q", got)
	}
	if err := os.Mkdir(filepath.Join(dir, "namespace"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := w.Write(map[string]FileProjection{"token": {Data: []byte("t2"), Mode: 0o644}, "namespace": {Data: []byte("ns"), Mode: 0o644}})
	if err == nil || !strings.Contains(err.Error(), "namespace: a directory is in the way") {
		t.Fatalf("directory in the way: %v", err)
	}
	if got := read(t, dir, "token"); got != "t1" {
		t.Errorf("after the failed write token = %q, want the old payload", got)
	}
}
