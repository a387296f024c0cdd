package create

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
)

// sources are the --from-literal / --from-file / --from-env-file flags of
// configmaps and secrets.
type sources struct {
	literals, files, envFiles []string
}

func (s *sources) bind(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringArrayVar(&s.literals, "from-literal", nil, "Specify a key and literal value to insert (i.e. mykey=somevalue)")
	f.StringSliceVar(&s.files, "from-file", nil, "Key file can be specified using its file path, in which case file basename will be used as key, or optionally with a key and file path, in which case the given key will be used.  Specifying a directory will iterate each named file in the directory whose basename is a valid key.")
	f.StringSliceVar(&s.envFiles, "from-env-file", nil, "Specify the path to a file to read lines of key=val pairs to create.")
}

var keyPattern = regexp.MustCompile(`^[-._a-zA-Z0-9]+$`)

// read returns the key/value pairs the flags name, refusing duplicates and
// keys kubectl would refuse.
func (s *sources) read() (map[string][]byte, error) {
	if len(s.envFiles) > 0 && (len(s.files) > 0 || len(s.literals) > 0) {
		return nil, fmt.Errorf("from-env-file cannot be combined with from-file or from-literal")
	}
	out := map[string][]byte{}
	add := func(k string, v []byte) error {
		if !keyPattern.MatchString(k) {
			return fmt.Errorf("%q is not a valid key name: a valid config key must consist of alphanumeric characters, '-', '_' or '.'", k)
		}
		if _, dup := out[k]; dup {
			return fmt.Errorf("cannot add key %q, another key by that name already exists", k)
		}
		out[k] = v
		return nil
	}
	for _, l := range s.literals {
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("invalid literal source %s, expected key=value", l)
		}
		if err := add(k, []byte(v)); err != nil {
			return nil, err
		}
	}
	for _, f := range s.files {
		key, path, ok := strings.Cut(f, "=")
		if !ok {
			key, path = "", f
		}
		st, err := os.Stat(path)
		if err != nil {
			return nil, fmt.Errorf("error reading %s: no such file or directory", path)
		}
		if st.IsDir() {
			if key != "" {
				return nil, fmt.Errorf("cannot give a key name for a directory path")
			}
			ents, err := os.ReadDir(path)
			if err != nil {
				return nil, fmt.Errorf("error listing files in %s: %w", path, err)
			}
			for _, e := range ents {
				if !e.Type().IsRegular() || !keyPattern.MatchString(e.Name()) {
					continue
				}
				b, err := os.ReadFile(filepath.Join(path, e.Name()))
				if err != nil {
					return nil, err
				}
				if err := add(e.Name(), b); err != nil {
					return nil, err
				}
			}
			continue
		}
		if key == "" {
			key = filepath.Base(path)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if err := add(key, b); err != nil {
			return nil, err
		}
	}
	for _, p := range s.envFiles {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("error reading %s: no such file or directory", p)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		for n := 1; sc.Scan(); n++ {
			line := strings.TrimSpace(sc.Text())
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				v = os.Getenv(k)
			}
			if err := add(k, []byte(v)); err != nil {
				return nil, fmt.Errorf("%s line %d: %w", p, n, err)
			}
		}
	}
	return out, nil
}
