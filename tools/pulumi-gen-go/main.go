// pulumi-gen-go writes the Go SDK of a Pulumi package schema with Pulumi's own Go generator
// (github.com/pulumi/pulumi/pkg/v3/codegen/go, GeneratePackage): what `pulumi package gen-sdk --language go` runs
// inside Pulumi's Go language host, which the Go module proxy these machines reach does not serve.
//
// Usage: pulumi-gen-go <schema.json> <out-dir>
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/blang/semver"

	gogen "github.com/pulumi/pulumi/pkg/v3/codegen/go"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
)

// noReferences is the loader of a schema that refers to no other package: any reference is an error.
type noReferences struct{}

func (noReferences) LoadPackage(pkg string, _ *semver.Version) (*schema.Package, error) {
	return nil, fmt.Errorf("the schema refers to package %q: pulumi-gen-go loads no other package", pkg)
}

func (n noReferences) LoadPackageV2(_ context.Context, d *schema.PackageDescriptor) (*schema.Package, error) {
	return n.LoadPackage(d.Name, nil)
}

func generate(schemaFile, out string) error {
	text, err := os.ReadFile(schemaFile)
	if err != nil {
		return err
	}
	var spec schema.PackageSpec
	if err := json.Unmarshal(text, &spec); err != nil {
		return fmt.Errorf("%s: %w", schemaFile, err)
	}
	pkg, diags, err := schema.BindSpec(spec, noReferences{}, schema.ValidationOptions{})
	if err != nil {
		return err
	}
	if diags.HasErrors() {
		return diags
	}
	files, err := gogen.GeneratePackage("pulumi-gen-go", pkg, nil)
	if err != nil {
		return err
	}
	for name, content := range files {
		path := filepath.Join(out, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, content, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: pulumi-gen-go <schema.json> <out-dir>")
		os.Exit(2)
	}
	if err := generate(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
