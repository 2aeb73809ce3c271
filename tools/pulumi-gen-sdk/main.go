// pulumi-gen-sdk writes the SDK of a Pulumi package schema in Go or Python with Pulumi's own generators
// (github.com/pulumi/pulumi/pkg/v3/codegen/go and codegen/python, GeneratePackage): what `pulumi package gen-sdk
// --language go|python` runs inside Pulumi's Go and Python language hosts, which the Go module proxy these
// machines reach does not serve.
//
// Usage: pulumi-gen-sdk go|python <schema.json> <out-dir>
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/blang/semver"

	gogen "github.com/pulumi/pulumi/pkg/v3/codegen/go"
	pygen "github.com/pulumi/pulumi/pkg/v3/codegen/python"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
)

// noReferences is the loader of a schema that refers to no other package: any reference is an error.
type noReferences struct{}

func (noReferences) LoadPackage(pkg string, _ *semver.Version) (*schema.Package, error) {
	return nil, fmt.Errorf("the schema refers to package %q: pulumi-gen-sdk loads no other package", pkg)
}

func (n noReferences) LoadPackageV2(_ context.Context, d *schema.PackageDescriptor) (*schema.Package, error) {
	return n.LoadPackage(d.Name, nil)
}

func (noReferences) LoadPackageReference(pkg string, _ *semver.Version) (schema.PackageReference, error) {
	return nil, fmt.Errorf("the schema refers to package %q: pulumi-gen-sdk loads no other package", pkg)
}

func (n noReferences) LoadPackageReferenceV2(_ context.Context, d *schema.PackageDescriptor) (schema.PackageReference, error) {
	return n.LoadPackageReference(d.Name, nil)
}

// sdk is the files of the SDK in `language`.
func sdk(language string, pkg *schema.Package) (map[string][]byte, error) {
	switch language {
	case "go":
		return gogen.GeneratePackage("pulumi-gen-sdk", pkg, nil)
	case "python":
		return pygen.GeneratePackage("pulumi-gen-sdk", pkg, nil, noReferences{})
	}
	return nil, fmt.Errorf("no generator for %q (go, python)", language)
}

func generate(language, schemaFile, out string) error {
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
	files, err := sdk(language, pkg)
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
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: pulumi-gen-sdk go|python <schema.json> <out-dir>")
		os.Exit(2)
	}
	if err := generate(os.Args[1], os.Args[2], os.Args[3]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
