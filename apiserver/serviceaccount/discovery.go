package serviceaccount

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"github.com/go-jose/go-jose/v4"
)

// The paths of the OIDC discovery documents.
const (
	OpenIDConfigPath = "/.well-known/openid-configuration"
	JWKSPath         = "/openid/v1/jwks"
)

// Discovery serves the issuer's OIDC discovery documents, as
// kube-apiserver: the configuration names the issuer and the JWKS URL, the
// JWKS holds every verification key. Both are made once.
type Discovery struct {
	config, jwks []byte
}

type openIDMetadata struct {
	Issuer        string   `json:"issuer"`
	JWKSURI       string   `json:"jwks_uri"`
	ResponseTypes []string `json:"response_types_supported"`
	SubjectTypes  []string `json:"subject_types_supported"`
	SigningAlgs   []string `json:"id_token_signing_alg_values_supported"`
}

// NewDiscovery builds the documents of issuer, whose keys are at jwksURI.
func NewDiscovery(issuer, jwksURI string, keys *Keys) (*Discovery, error) {
	var set jose.JSONWebKeySet
	var algs []string
	for _, k := range keys.public {
		alg, err := algorithm(k.Key)
		if err != nil {
			return nil, err
		}
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: k.Key, KeyID: k.KeyID, Algorithm: string(alg), Use: "sig"})
		if !slices.Contains(algs, string(alg)) {
			algs = append(algs, string(alg))
		}
	}
	slices.Sort(algs)
	jwks, err := json.Marshal(set)
	if err != nil {
		return nil, fmt.Errorf("failed to marshal service account issuer JWKS: %w", err)
	}
	config, err := json.Marshal(openIDMetadata{Issuer: issuer, JWKSURI: jwksURI, ResponseTypes: []string{"id_token"},
		SubjectTypes: []string{"public"}, SigningAlgs: algs})
	if err != nil {
		return nil, fmt.Errorf("failed to marshal service account issuer metadata: %w", err)
	}
	return &Discovery{config: config, jwks: jwks}, nil
}

// ServeConfig serves /.well-known/openid-configuration.
func (d *Discovery) ServeConfig(w http.ResponseWriter, _ *http.Request) {
	serve(w, "application/json", d.config)
}

// ServeJWKS serves /openid/v1/jwks.
func (d *Discovery) ServeJWKS(w http.ResponseWriter, _ *http.Request) {
	serve(w, "application/jwk-set+json", d.jwks)
}

func serve(w http.ResponseWriter, contentType string, body []byte) {
	w.Header().Set("Content-Type", contentType)
	// kube-apiserver's cache lifetime of both documents.
	w.Header().Set("Cache-Control", "public, max-age=3600")
	_, _ = w.Write(body)
}
