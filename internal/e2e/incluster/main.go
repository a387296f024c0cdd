package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const usage = `usage: incluster REQUEST...
REQUEST is VERB:RESOURCE[:NAMESPACE[:NAME]], VERB list or get, RESOURCE pods or
secrets; NAMESPACE defaults to the pod's own (the mounted namespace file).`

// result is one line of output.
type result struct {
	Request string `json:"request"`
	// Allowed: the server answered 2xx.
	Allowed bool `json:"allowed"`
	// Items is the length of an allowed list.
	Items int `json:"items,omitempty"`
	// Name is the name of an allowed get's object.
	Name string `json:"name,omitempty"`
	// Code, Reason and Message are the Status of a refusal.
	Code    int32  `json:"code,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "incluster:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	cfg, err := rest.InClusterConfig()
	if err != nil {
		return fmt.Errorf("in-cluster configuration: %w", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	own, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	enc := json.NewEncoder(os.Stdout)

	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("self subject review: %w", err)
	}
	if err := enc.Encode(map[string]any{"user": review.Status.UserInfo.Username, "groups": review.Status.UserInfo.Groups}); err != nil {
		return err
	}
	for _, a := range args {
		r, err := request(ctx, cs, strings.TrimSpace(string(own)), a)
		if err != nil {
			return err
		}
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return nil
}

// request makes one request; an answer of the server, refusals included,
// is a result, anything else an error.
func request(ctx context.Context, cs kubernetes.Interface, own, spec string) (result, error) {
	parts := strings.Split(spec, ":")
	if len(parts) < 2 || len(parts) > 4 {
		return result{}, fmt.Errorf("request %q: %s", spec, usage)
	}
	verb, resource, ns, name := parts[0], parts[1], own, ""
	if len(parts) > 2 && parts[2] != "" {
		ns = parts[2]
	}
	if len(parts) > 3 {
		name = parts[3]
	}
	r := result{Request: strings.Join([]string{verb, resource, ns, name}, ":")}
	var err error
	switch {
	case verb == "list" && resource == "pods":
		l, lerr := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err = lerr; err == nil {
			r.Items = len(l.Items)
		}
	case verb == "list" && resource == "secrets":
		l, lerr := cs.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
		if err = lerr; err == nil {
			r.Items = len(l.Items)
		}
	case verb == "get" && resource == "pods" && name != "":
		p, gerr := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err = gerr; err == nil {
			r.Name = p.Name
		}
	default:
		return result{}, fmt.Errorf("request %q: %s", spec, usage)
	}
	if err == nil {
		r.Allowed = true
		return r, nil
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return result{}, fmt.Errorf("request %s: %w", r.Request, err)
	}
	s := status.Status()
	r.Code, r.Reason, r.Message = s.Code, string(s.Reason), s.Message
	return r, nil
}
