package cli

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/kubeconfig"
	"github.com/minik8s/minik8s/kubectl-lite/resource"
)

// Streams are a command's standard streams; tests pass buffers.
type Streams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// Globals are the flags every command sees. Commands call Client and
// Namespace only when they run, after flag parsing.
type Globals struct {
	Kubeconfig string
	Context    string
	Namespace  string
	// Server, Token, Insecure and RequestTimeout override what the
	// kubeconfig says (-s/--server, --token, --insecure-skip-tls-verify,
	// --request-timeout), as kubectl's global flags do.
	Server         string
	Token          string
	Insecure       bool
	RequestTimeout string
	// As, AsGroups and AsUID make every request act as another user
	// (--as, --as-group, --as-uid: the Impersonate-* headers).
	As       string
	AsGroups []string
	AsUID    string

	cfg    *kubeconfig.Config
	mapper *resource.Mapper
}

// Mapper is the run's one resolver of types and kinds: the built-in table,
// then the server's discovery documents (custom resources, aggregated
// APIs), read at most once per miss through one client.
func (g *Globals) Mapper(ctx context.Context) (*resource.Mapper, error) {
	if g.mapper != nil {
		return g.mapper, nil
	}
	c, err := g.Client()
	if err != nil {
		return nil, err
	}
	g.mapper = resource.NewMapper(ctx, c)
	return g.mapper, nil
}

// Config loads the kubeconfig once, with kubectl's precedence.
func (g *Globals) Config() (*kubeconfig.Config, error) {
	if g.cfg != nil {
		return g.cfg, nil
	}
	cfg, err := kubeconfig.LoadDefault(g.Kubeconfig)
	if err != nil {
		return nil, err
	}
	g.cfg = cfg
	return cfg, nil
}

// ClientConfig resolves the chosen context into a client configuration.
func (g *Globals) ClientConfig() (*client.Config, error) {
	cfg, err := g.Config()
	if err != nil {
		return nil, err
	}
	cc, err := cfg.ClientConfig(g.Context)
	if errors.Is(err, kubeconfig.ErrEmptyConfig) && g.Server != "" {
		// --server alone is a configuration, as with kubectl.
		cc, err = &client.Config{}, nil
	}
	if err != nil {
		return nil, err
	}
	if g.Server != "" {
		cc.Host = g.Server
	}
	if g.Token != "" {
		cc.BearerToken, cc.CertData, cc.KeyData = g.Token, nil, nil
	}
	if g.Insecure {
		cc.Insecure, cc.CAData = true, nil
	}
	if g.RequestTimeout != "" && g.RequestTimeout != "0" {
		d, err := parseTimeout(g.RequestTimeout)
		if err != nil {
			return nil, err
		}
		cc.Timeout = d
	}
	// The flags override the kubeconfig's as, as-groups and as-uid.
	if g.As != "" {
		cc.Impersonate.UserName = g.As
	}
	if len(g.AsGroups) > 0 {
		cc.Impersonate.Groups = g.AsGroups
	}
	if g.AsUID != "" {
		cc.Impersonate.UID = g.AsUID
	}
	if im := cc.Impersonate; im.UserName == "" && (len(im.Groups) > 0 || im.UID != "" || len(im.Extra) > 0) {
		return nil, errors.New("requesting uid, groups or user-extra without impersonating a user")
	}
	cc.UserAgent = client.UserAgentFor("kubectl-lite")
	return cc, nil
}

// parseTimeout reads --request-timeout: a duration, or a bare number of
// seconds.
func parseTimeout(s string) (time.Duration, error) {
	if n, err := strconv.Atoi(s); err == nil && n >= 0 {
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("invalid timeout value. Timeout must be a single integer in seconds, or an integer followed by a corresponding time unit (e.g. 1s | 2m | 3h)")
	}
	return d, nil
}

// Client returns a client for the chosen context.
func (g *Globals) Client() (*client.Client, error) {
	cc, err := g.ClientConfig()
	if err != nil {
		return nil, err
	}
	return client.New(cc)
}

// DefaultNamespace is -n when given, else the context's namespace, else
// "default".
func (g *Globals) DefaultNamespace() (string, error) {
	if g.Namespace != "" {
		return g.Namespace, nil
	}
	cfg, err := g.Config()
	if err != nil {
		return "", err
	}
	return cfg.Namespace(g.Context), nil
}

// FormatError renders err as kubectl's single error line (without the
// newline): "Error from server (NotFound): pods "x" not found" for an API
// error, "error: ..." for anything else.
//
// As kubectl's StandardErrorMessage, a 401 reads "error: You must be logged
// in to the server (...)", and a server that cannot be reached "The
// connection to the server HOST was refused - did you specify the right
// host or port?" or "Unable to connect to the server: ...".
func FormatError(err error) string {
	if agg, ok := err.(Aggregate); ok && len(agg) > 0 {
		return agg.lines()
	}
	if msg, ok := standardMessage(err); ok {
		return msg
	}
	msg := err.Error()
	if strings.HasPrefix(msg, "error: ") {
		return msg
	}
	return "error: " + msg
}

// standardMessage is kubectl's StandardErrorMessage: the words of a server
// error (a Status) or of a server that cannot be reached; false for any
// other error.
func standardMessage(err error) (string, bool) {
	var se *apierrors.StatusError
	if errors.As(err, &se) {
		st := se.Status()
		msg := st.Message
		if msg == "" {
			msg = se.Error()
		}
		switch st.Reason {
		case "":
			return "Error from server: " + msg, true
		case api.StatusReasonUnauthorized:
			return fmt.Sprintf("error: You must be logged in to the server (%s)", msg), true
		case api.StatusReasonInvalid:
			if st.Details != nil {
				return invalid(st), true
			}
			return "The request is invalid: " + msg, true
		}
		return fmt.Sprintf("Error from server (%s): %s", st.Reason, msg), true
	}
	var op *net.OpError
	if errors.As(err, &op) {
		if errors.Is(err, syscall.ECONNREFUSED) && op.Addr != nil {
			return fmt.Sprintf("The connection to the server %s was refused - did you specify the right host or port?", op.Addr), true
		}
		return "Unable to connect to the server: " + op.Error(), true
	}
	var cv *tls.CertificateVerificationError
	if errors.As(err, &cv) {
		return "Unable to connect to the server: " + cv.Error(), true
	}
	return "", false
}

// invalid is kubectl's message for a 422 with details: `The ConfigMap "x"
// is invalid: FIELD: MESSAGE`, one cause per line after the first when
// there are several.
func invalid(st api.Status) string {
	d := st.Details
	s := "The request is invalid"
	if d.Kind != "" || d.Name != "" {
		s = fmt.Sprintf("The %s %q is invalid", d.Kind, d.Name)
	} else if len(d.Causes) == 0 && st.Message != "" {
		// Nothing names the object and no cause repeats the message
		// (kube's generic 422 has empty details): say it, as kubectl does.
		s += ": " + st.Message
	}
	var causes []string
	for _, c := range d.Causes {
		if c.Field != "" {
			causes = append(causes, c.Field+": "+c.Message)
		} else {
			causes = append(causes, c.Message)
		}
	}
	switch len(causes) {
	case 0:
		return s
	case 1:
		return s + ": " + causes[0]
	}
	return s + ": \n* " + strings.Join(causes, "\n* ")
}

// ExitError ends the program with Code without another message: the
// command already said what happened ("command terminated with exit code 2"
// from exec), or the code is the answer itself.
type ExitError struct {
	Code int
}

func (e *ExitError) Error() string { return fmt.Sprintf("exit code %d", e.Code) }

// ExitCode is the process exit code for err: 0 for nil, an ExitError's code,
// else 1.
func ExitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return 1
}

// AddSource says which file an error came from, as kubectl does:
// `error when creating "web.yaml": namespaces "x" not found`. An API error
// stays an API error, so it still prints as "Error from server (REASON)".
func AddSource(verb, source string, err error) error {
	if err == nil || source == "" {
		return err
	}
	var se *apierrors.StatusError
	if errors.As(err, &se) {
		st := se.Status()
		st.Message = fmt.Sprintf("error when %s %q: %s", verb, source, st.Message)
		return apierrors.FromStatus(st)
	}
	return fmt.Errorf("error when %s %q: %w", verb, source, err)
}

// Parse is resource.Parse with the run's Mapper: built-in types first,
// then custom and aggregated resources through discovery.
func (g *Globals) Parse(ctx context.Context, args []string, ns string, listing bool) (resource.Selection, error) {
	m, err := g.Mapper(ctx)
	if err != nil {
		return resource.Selection{}, err
	}
	return m.Parse(args, ns, listing)
}

// Select resolves TYPE NAME... / TYPE/NAME... arguments (or TYPE with a
// label selector or all) in the default namespace into the objects they
// name, and returns them with the client that reaches them.
func (g *Globals) Select(ctx context.Context, args []string, selector string, all bool) (*client.Client, []resource.Ref, error) {
	ns, err := g.DefaultNamespace()
	if err != nil {
		return nil, nil, err
	}
	sel, err := g.Parse(ctx, args, ns, selector != "" || all)
	if err != nil {
		return nil, nil, err
	}
	c, err := g.Client()
	if err != nil {
		return nil, nil, err
	}
	refs, err := sel.Expand(ctx, c, ns, client.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, nil, err
	}
	return c, refs, nil
}
