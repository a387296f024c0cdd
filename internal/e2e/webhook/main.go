package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The refused data and the label added.
const (
	disallowKey   = "e2e-webhook"
	disallowValue = "disallow"
	mutatedLabel  = "e2e.minik8s.io/mutated"
	denyMessage   = "the configmap contains unwanted key and value"
)

func main() {
	log := slog.New(slog.NewTextHandler(os.Stdout, nil))
	if err := run(log); err != nil {
		log.Error("webhook server failed", "err", err)
		os.Exit(1)
	}
}

func run(log *slog.Logger) error {
	cert := flag.String("tls-cert-file", "/etc/webhook/certs/tls.crt", "serving certificate (PEM)")
	key := flag.String("tls-private-key-file", "/etc/webhook/certs/tls.key", "serving key (PEM)")
	port := flag.Int("port", 8443, "HTTPS port")
	hang := flag.Duration("hang", 30*time.Second, "how long /hang keeps a review before answering")
	flag.Parse()

	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	mux.Handle("/validate", review(log, validate))
	mux.Handle("/mutate", review(log, mutate))
	mux.Handle("/hang", review(log, func(r *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		time.Sleep(*hang)
		return &admissionv1.AdmissionResponse{Allowed: true}
	}))
	srv := &http.Server{Addr: fmt.Sprintf(":%d", *port), Handler: mux, ReadHeaderTimeout: 10 * time.Second}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServeTLS(*cert, *key) }()
	log.Info("serving admission reviews", "addr", srv.Addr)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// review decodes an AdmissionReview, answers its request with decide and
// writes the review back with the request's uid.
func review(log *slog.Logger, decide func(*admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			http.Error(w, "content type "+ct+", want application/json", http.StatusUnsupportedMediaType)
			return
		}
		var in admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Request == nil {
			http.Error(w, fmt.Sprintf("not an AdmissionReview with a request: %v", err), http.StatusBadRequest)
			return
		}
		req := in.Request
		resp := decide(req)
		resp.UID = req.UID
		log.Info("review", "path", r.URL.Path, "timeout", r.URL.Query().Get("timeout"), "uid", req.UID, "operation", req.Operation,
			"resource", req.Resource.Resource, "namespace", req.Namespace, "name", req.Name, "allowed", resp.Allowed, "patched", resp.Patch != nil)
		out := admissionv1.AdmissionReview{TypeMeta: in.TypeMeta, Response: resp}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&out)
	})
}

// validate refuses a ConfigMap carrying disallowKey: disallowValue.
func validate(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	var cm corev1.ConfigMap
	if req.Kind.Kind != "ConfigMap" || json.Unmarshal(req.Object.Raw, &cm) != nil {
		return &admissionv1.AdmissionResponse{Allowed: true}
	}
	if cm.Data[disallowKey] == disallowValue {
		return &admissionv1.AdmissionResponse{Result: &metav1.Status{Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden, Message: denyMessage}}
	}
	return &admissionv1.AdmissionResponse{Allowed: true}
}

// mutate adds mutatedLabel=true to a ConfigMap.
func mutate(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	var cm corev1.ConfigMap
	if req.Kind.Kind != "ConfigMap" || json.Unmarshal(req.Object.Raw, &cm) != nil {
		return &admissionv1.AdmissionResponse{Allowed: true}
	}
	var op any
	if cm.Labels == nil {
		op = map[string]any{"op": "add", "path": "/metadata/labels", "value": map[string]string{mutatedLabel: "true"}}
	} else {
		op = map[string]any{"op": "add", "path": "/metadata/labels/" + strings.ReplaceAll(mutatedLabel, "/", "~1"), "value": "true"}
	}
	patch, _ := json.Marshal([]any{op})
	pt := admissionv1.PatchTypeJSONPatch
	return &admissionv1.AdmissionResponse{Allowed: true, Patch: patch, PatchType: &pt}
}
