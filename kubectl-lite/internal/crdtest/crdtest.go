package crdtest

import (
	"context"
	"net/http"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
)

// servedTimeout bounds the wait for one CRD's resource to be served.
const servedTimeout = 30 * time.Second

// definition is the part of a CustomResourceDefinition the set-up reads.
type definition struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Group string `json:"group"`
		Scope string `json:"scope"`
		Names struct {
			Plural   string `json:"plural"`
			Singular string `json:"singular"`
			Kind     string `json:"kind"`
		} `json:"names"`
		Versions []struct {
			Name    string `json:"name"`
			Served  bool   `json:"served"`
			Storage bool   `json:"storage"`
		} `json:"versions"`
	} `json:"spec"`
}

// Create creates each CustomResourceDefinition of manifests (one object
// each, YAML or JSON) through c, then waits until the apiserver serves the
// resource of every version the CRD serves. It returns the storage
// version's resource of each CRD, in the order given; the test fails at
// once when a CRD is refused or not served in time.
func Create(t testing.TB, c *client.Client, manifests ...string) []api.ResourceInfo {
	t.Helper()
	ctx := context.Background()
	crds := api.ResourceInfo{Group: api.APIExtensionsGroupName, Version: "v1", Kind: "CustomResourceDefinition", Resource: "customresourcedefinitions"}
	var infos []api.ResourceInfo
	var paths []string
	for _, m := range manifests {
		body, err := yaml.YAMLToJSON([]byte(m))
		if err != nil {
			t.Fatalf("crdtest: decode CustomResourceDefinition: %v", err)
		}
		var d definition
		if err := yaml.Unmarshal(body, &d); err != nil {
			t.Fatalf("crdtest: decode CustomResourceDefinition: %v", err)
		}
		if _, err := c.Do(ctx, client.Request{Method: http.MethodPost, Path: client.ResourcePath(crds, "", ""), Body: body}); err != nil {
			t.Fatalf("crdtest: create CustomResourceDefinition %s: %v", d.Metadata.Name, err)
		}
		info := api.ResourceInfo{Group: d.Spec.Group, Kind: d.Spec.Names.Kind, Resource: d.Spec.Names.Plural,
			Singular: d.Spec.Names.Singular, Namespaced: d.Spec.Scope == "Namespaced"}
		for _, v := range d.Spec.Versions {
			if v.Storage {
				info.Version = v.Name
			}
			if v.Served {
				served := info
				served.Version = v.Name
				paths = append(paths, client.ResourcePath(served, "", ""))
			}
		}
		infos = append(infos, info)
	}
	for _, p := range paths {
		waitServed(t, c, p)
	}
	return infos
}

// waitServed waits until a GET of path (a resource's list across
// namespaces) succeeds.
func waitServed(t testing.TB, c *client.Client, path string) {
	t.Helper()
	deadline := time.Now().Add(servedTimeout)
	for {
		_, err := c.Do(context.Background(), client.Request{Path: path})
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("crdtest: %s not served: %v", path, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
