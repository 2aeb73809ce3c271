// Copyright 2026 The pulumi-llm-accounts authors.
// SPDX-License-Identifier: Apache-2.0

// pulumi-language-nodejs is a small Node.js language host for the Pulumi CLI, written for this project.
//
// Pulumi's own language host (module github.com/pulumi/pulumi/sdk/nodejs/cmd/pulumi-language-nodejs/v3) is not
// served by the Go module proxy that the project's machines can reach, so tools/pulumi-cli builds this one instead.
// It implements the part of the LanguageRuntime gRPC service that `pulumi up/preview/refresh/destroy` need for a
// Node.js or TypeScript program that uses @pulumi/pulumi from its own node_modules:
//
//   - Run starts `node <node_modules/@pulumi/pulumi/cmd/run> --monitor=... <program>` in the program directory, with
//     the stack config in PULUMI_CONFIG, and reports the exit status back to the engine;
//   - GetRequiredPackages / GetRequiredPlugins report no plugins (the dynamic provider plugin
//     pulumi-resource-pulumi-nodejs is found next to the CLI or on PATH without help);
//   - InstallDependencies runs `npm install`; About and GetProgramDependencies read node and package.json;
//   - RunPlugin with the analyzer kind starts a Node.js policy pack (`pulumi preview --policy-pack DIR`): it runs
//     `node_modules/@pulumi/pulumi/cmd/run-policy-pack` of the pack's own folder, as Pulumi's own host does.
//
// Everything else answers Unimplemented (code generation, resource or tool plugins written in Node.js).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	sdk "github.com/pulumi/pulumi/sdk/v3"
	"github.com/pulumi/pulumi/sdk/v3/go/common/apitype"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	"github.com/pulumi/pulumi/sdk/v3/go/common/version"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
)

// Exit code with which @pulumi/pulumi's run script says "the error was already shown to the user".
const exitCodeAlreadyReported = 32

type host struct {
	pulumirpc.UnimplementedLanguageRuntimeServer

	mu            sync.Mutex
	engineAddress string
	// cancel is closed by the Cancel RPC: running programs and installs are stopped.
	cancel     chan struct{}
	cancelOnce sync.Once
}

func main() {
	engineAddress, err := parseArgs(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "pulumi-language-nodejs: %v\n", err)
		os.Exit(2)
	}
	h := &host{engineAddress: engineAddress, cancel: make(chan struct{})}

	handle, err := rpcutil.ServeWithOptions(rpcutil.ServeOptions{
		Init: func(srv *grpc.Server) error {
			pulumirpc.RegisterLanguageRuntimeServer(srv, h)
			return nil
		},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "pulumi-language-nodejs: could not start the gRPC server: %v\n", err)
		os.Exit(1)
	}
	// The engine reads the port from the first line of stdout.
	fmt.Printf("%d\n", handle.Port)

	if err := <-handle.Done; err != nil {
		fmt.Fprintf(os.Stderr, "pulumi-language-nodejs: %v\n", err)
		os.Exit(1)
	}
}

// parseArgs accepts the arguments the engine passes to language plugins: logging and tracing flags
// (--logtostderr, -v=N, --tracing URL, and the flags of Pulumi's own host such as -root DIR, -typescript=BOOL),
// then the engine address as the last positional argument. Flags are accepted and ignored.
func parseArgs(args []string) (string, error) {
	var positional []string
	withValue := map[string]bool{"tracing": true, "root": true, "tsconfig": true, "nodeargs": true,
		"packagemanager": true, "v": true}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			positional = append(positional, a)
			continue
		}
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		if withValue[name] && i+1 < len(args) {
			i++
		}
	}
	if len(positional) == 0 {
		return "", errors.New("missing the engine address argument")
	}
	return positional[len(positional)-1], nil
}

func (h *host) Handshake(
	ctx context.Context, req *pulumirpc.LanguageHandshakeRequest,
) (*pulumirpc.LanguageHandshakeResponse, error) {
	if addr := req.GetEngineAddress(); addr != "" {
		h.mu.Lock()
		h.engineAddress = addr
		h.mu.Unlock()
	}
	return &pulumirpc.LanguageHandshakeResponse{}, nil
}

func (h *host) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: version.Version}, nil
}

func (h *host) GetRequiredPlugins(
	context.Context, *pulumirpc.GetRequiredPluginsRequest,
) (*pulumirpc.GetRequiredPluginsResponse, error) {
	return &pulumirpc.GetRequiredPluginsResponse{}, nil
}

func (h *host) GetRequiredPackages(
	context.Context, *pulumirpc.GetRequiredPackagesRequest,
) (*pulumirpc.GetRequiredPackagesResponse, error) {
	return &pulumirpc.GetRequiredPackagesResponse{}, nil
}

func (h *host) RuntimeOptionsPrompts(
	context.Context, *pulumirpc.RuntimeOptionsRequest,
) (*pulumirpc.RuntimeOptionsResponse, error) {
	return &pulumirpc.RuntimeOptionsResponse{}, nil
}

func (h *host) Cancel(context.Context, *emptypb.Empty) (*emptypb.Empty, error) {
	h.cancelOnce.Do(func() { close(h.cancel) })
	return &emptypb.Empty{}, nil
}

// runtimeOptions are the `runtime.options` of Pulumi.yaml that this host understands.
type runtimeOptions struct {
	typescript bool
	tsconfig   string
	nodeargs   []string
}

func parseOptions(info *pulumirpc.ProgramInfo) runtimeOptions {
	opts := runtimeOptions{typescript: true}
	if info == nil || info.GetOptions() == nil {
		return opts
	}
	m := info.GetOptions().AsMap()
	if v, ok := m["typescript"].(bool); ok {
		opts.typescript = v
	}
	if v, ok := m["tsconfig"].(string); ok {
		opts.tsconfig = v
	}
	if v, ok := m["nodeargs"].(string); ok {
		opts.nodeargs = strings.Fields(v)
	}
	return opts
}

func programDirectory(info *pulumirpc.ProgramInfo, pwd string) string {
	if info != nil && info.GetProgramDirectory() != "" {
		return info.GetProgramDirectory()
	}
	if pwd != "" {
		return pwd
	}
	wd, _ := os.Getwd()
	return wd
}

// resolveFromProgram asks node where a module resolves from the program directory.
func resolveFromProgram(ctx context.Context, dir, module string) (string, error) {
	script := fmt.Sprintf("process.stdout.write(require.resolve(%q))", module)
	cmd := exec.CommandContext(ctx, "node", "-e", script)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		var execErr *exec.Error
		if errors.As(err, &execErr) {
			return "", fmt.Errorf("could not run node (is Node.js installed and on PATH?): %w", err)
		}
		return "", fmt.Errorf("could not find %s from %s; is @pulumi/pulumi installed (npm install)? %s",
			module, dir, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

func (h *host) Run(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	dir := programDirectory(req.GetInfo(), req.GetPwd())
	opts := parseOptions(req.GetInfo())

	runPath, err := resolveFromProgram(ctx, dir, "@pulumi/pulumi/cmd/run")
	if err != nil {
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}

	config, err := json.Marshal(nonNilMap(req.GetConfig()))
	if err != nil {
		return nil, err
	}
	secretKeys, err := json.Marshal(nonNilSlice(req.GetConfigSecretKeys()))
	if err != nil {
		return nil, err
	}

	h.mu.Lock()
	engineAddress := h.engineAddress
	h.mu.Unlock()

	args := append([]string{}, opts.nodeargs...)
	args = append(args, runPath, "--monitor="+req.GetMonitorAddress())
	if engineAddress != "" {
		args = append(args, "--engine="+engineAddress)
	}
	if v := req.GetOrganization(); v != "" {
		args = append(args, "--organization="+v)
	}
	if v := req.GetProject(); v != "" {
		args = append(args, "--project="+v)
	}
	if info := req.GetInfo(); info != nil && info.GetRootDirectory() != "" {
		args = append(args, "--root-directory="+info.GetRootDirectory())
	}
	if v := req.GetStack(); v != "" {
		args = append(args, "--stack="+v)
	}
	args = append(args, "--pwd="+dir)
	if req.GetDryRun() {
		args = append(args, "--dry-run")
	}
	if req.GetParallel() > 0 {
		args = append(args, fmt.Sprintf("--parallel=%d", req.GetParallel()))
	}
	program := req.GetProgram()
	if info := req.GetInfo(); info != nil && info.GetEntryPoint() != "" {
		program = info.GetEntryPoint()
	}
	if program == "" {
		program = "."
	}
	args = append(args, program)
	args = append(args, req.GetArgs()...)

	env := append(os.Environ(),
		"PULUMI_CONFIG="+string(config),
		"PULUMI_CONFIG_SECRET_KEYS="+string(secretKeys),
		fmt.Sprintf("PULUMI_NODEJS_TYPESCRIPT=%t", opts.typescript),
	)
	if opts.tsconfig != "" {
		env = append(env, "PULUMI_NODEJS_TSCONFIG_PATH="+opts.tsconfig)
	}

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		select {
		case <-h.cancel:
			stop()
		case <-runCtx.Done():
		}
	}()

	cmd := exec.CommandContext(runCtx, "node", args...)
	cmd.Dir = dir
	cmd.Env = env
	// The engine shows what a language host writes on stdout and stderr.
	cmd.Stdout = os.Stdout
	cmd.Stderr = os.Stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGINT) }
	cmd.WaitDelay = 10 * time.Second

	err = cmd.Run()
	if err == nil {
		return &pulumirpc.RunResponse{}, nil
	}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code := exitErr.ExitCode()
		if code == exitCodeAlreadyReported {
			return &pulumirpc.RunResponse{Bail: true}, nil
		}
		if code < 0 {
			return &pulumirpc.RunResponse{Error: "Program was terminated: " + exitErr.String()}, nil
		}
		return &pulumirpc.RunResponse{Error: fmt.Sprintf("Program exited with non-zero exit code: %d", code)}, nil
	}
	return &pulumirpc.RunResponse{Error: fmt.Sprintf("could not run the Node.js program: %v", err)}, nil
}

// runPluginWriter forwards a child's output to a RunPlugin stream. gRPC forbids concurrent Sends on one
// stream, and stdout and stderr are copied by two goroutines: they share one lock.
type runPluginWriter struct {
	mu     *sync.Mutex
	stream grpc.ServerStreamingServer[pulumirpc.RunPluginResponse]
	stderr bool
}

func (w runPluginWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	chunk := append([]byte(nil), p...)
	resp := &pulumirpc.RunPluginResponse{Output: &pulumirpc.RunPluginResponse_Stdout{Stdout: chunk}}
	if w.stderr {
		resp = &pulumirpc.RunPluginResponse{Output: &pulumirpc.RunPluginResponse_Stderr{Stderr: chunk}}
	}
	if err := w.stream.Send(resp); err != nil {
		return 0, err
	}
	return len(p), nil
}

// RunPlugin starts a plugin written in Node.js. Only policy packs (the analyzer kind) are supported: the engine
// starts a pack whose PulumiPolicy.yaml says `runtime: nodejs` this way when it finds this language host.
//
// As Pulumi's own host does, the pack runs `@pulumi/pulumi/cmd/run-policy-pack` resolved from the pack's folder
// (its own node_modules), in that folder, with the engine's arguments and then the pack's folder as the last
// argument. The packs' library reads the stack's name, project, organization, dry-run flag and config from
// environment variables, which the engine sends over gRPC (ConfigureStack) only after the plugin has started;
// Pulumi's PolicyProxy (sdk/v3) answers the engine first, collects that configuration, and then forwards every
// call to the pack's own server once node has started with those variables set.
func (h *host) RunPlugin(
	req *pulumirpc.RunPluginRequest, stream grpc.ServerStreamingServer[pulumirpc.RunPluginResponse],
) error {
	if req.GetKind() != string(apitype.AnalyzerPlugin) {
		return status.Errorf(codes.Unimplemented,
			"this language host runs Node.js policy packs only, not %q plugins", req.GetKind())
	}
	info := req.GetInfo()
	if info == nil || info.GetProgramDirectory() == "" {
		return status.Error(codes.InvalidArgument, "RunPlugin needs the policy pack's folder (info.program_directory)")
	}
	dir := info.GetProgramDirectory()
	opts := parseOptions(info)

	ctx, stop := context.WithCancel(stream.Context())
	defer stop()
	go func() {
		select {
		case <-h.cancel:
			stop()
		case <-ctx.Done():
		}
	}()

	var mu sync.Mutex
	stdout := runPluginWriter{mu: &mu, stream: stream}
	stderr := runPluginWriter{mu: &mu, stream: stream, stderr: true}

	runPath, err := resolveFromProgram(ctx, dir, "@pulumi/pulumi/cmd/run-policy-pack")
	if err != nil {
		return fmt.Errorf("it looks like the policy pack's dependencies are not installed (run npm install in %s): %w",
			dir, err)
	}

	env := append([]string{}, req.GetEnv()...)
	env = append(env, fmt.Sprintf("PULUMI_NODEJS_TYPESCRIPT=%t", opts.typescript))
	if opts.tsconfig != "" {
		env = append(env, "PULUMI_NODEJS_TSCONFIG_PATH="+opts.tsconfig)
	}

	// The proxy prints its own port first: that is the port the engine dials.
	proxy, packStdout, err := sdk.NewPolicyProxy(ctx, stdout)
	if err != nil {
		return fmt.Errorf("could not start the policy pack proxy: %w", err)
	}
	config, err := proxy.AwaitConfiguration(ctx)
	if err != nil {
		return fmt.Errorf("could not get the stack configuration for the policy pack: %w", err)
	}
	if config != nil {
		set := func(name, value string) {
			if value != "" {
				env = append(env, name+"="+value)
			}
		}
		set("PULUMI_NODEJS_ORGANIZATION", config.GetOrganization())
		set("PULUMI_NODEJS_PROJECT", config.GetProject())
		set("PULUMI_NODEJS_STACK", config.GetStack())
		set("PULUMI_NODEJS_DRY_RUN", strconv.FormatBool(config.GetDryRun()))
		if c := config.GetConfig(); c != nil {
			data, err := json.Marshal(c)
			if err != nil {
				return fmt.Errorf("could not encode the stack configuration: %w", err)
			}
			set("PULUMI_CONFIG", string(data))
		}
	}

	args := append([]string{}, opts.nodeargs...)
	args = append(args, runPath)
	args = append(args, req.GetArgs()...)
	args = append(args, dir)

	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdout = packStdout
	cmd.Stderr = stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGINT) }
	cmd.WaitDelay = 10 * time.Second

	if err := cmd.Start(); err != nil {
		return fmt.Errorf("could not run node for the policy pack: %w", err)
	}
	// Attach reads the pack's port from its stdout, forwards the configuration, serves the engine's calls
	// through it and returns when node exits.
	if err := proxy.Attach(ctx, cmd); err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			if code := exitErr.ExitCode(); code >= 0 {
				return fmt.Errorf("Program exited with non-zero exit code: %d", code)
			}
			return fmt.Errorf("Program was terminated: %s", exitErr.String())
		}
		return fmt.Errorf("policy pack %s: %w", dir, err)
	}
	return nil
}

// streamWriter forwards a child's output to an InstallDependencies stream.
type streamWriter struct {
	mu     *sync.Mutex
	stream grpc.ServerStreamingServer[pulumirpc.InstallDependenciesResponse]
	stderr bool
}

func (w streamWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	chunk := append([]byte(nil), p...)
	resp := &pulumirpc.InstallDependenciesResponse{Stdout: chunk}
	if w.stderr {
		resp = &pulumirpc.InstallDependenciesResponse{Stderr: chunk}
	}
	if err := w.stream.Send(resp); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (h *host) InstallDependencies(
	req *pulumirpc.InstallDependenciesRequest,
	stream grpc.ServerStreamingServer[pulumirpc.InstallDependenciesResponse],
) error {
	dir := req.GetDirectory()
	if info := req.GetInfo(); info != nil && info.GetProgramDirectory() != "" {
		dir = info.GetProgramDirectory()
	}
	if _, err := os.Stat(filepath.Join(dir, "package.json")); err != nil {
		return nil // nothing to install
	}
	var mu sync.Mutex
	cmd := exec.CommandContext(stream.Context(), "npm", "install")
	cmd.Dir = dir
	cmd.Stdout = streamWriter{mu: &mu, stream: stream}
	cmd.Stderr = streamWriter{mu: &mu, stream: stream, stderr: true}
	if err := cmd.Run(); err != nil {
		return status.Errorf(codes.Unknown, "npm install failed in %s: %v", dir, err)
	}
	return nil
}

func (h *host) About(ctx context.Context, req *pulumirpc.AboutRequest) (*pulumirpc.AboutResponse, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, status.Error(codes.FailedPrecondition, "node was not found on PATH")
	}
	out, err := exec.CommandContext(ctx, node, "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("node --version: %w", err)
	}
	return &pulumirpc.AboutResponse{
		Executable: node,
		Version:    strings.TrimPrefix(strings.TrimSpace(string(out)), "v"),
	}, nil
}

// GetProgramDependencies lists the dependencies declared in package.json with the versions installed in
// node_modules (or the declared range when a package is not installed).
func (h *host) GetProgramDependencies(
	ctx context.Context, req *pulumirpc.GetProgramDependenciesRequest,
) (*pulumirpc.GetProgramDependenciesResponse, error) {
	dir := programDirectory(req.GetInfo(), req.GetPwd())
	var pkg struct {
		Dependencies    map[string]string `json:"dependencies"`
		DevDependencies map[string]string `json:"devDependencies"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return nil, status.Errorf(codes.FailedPrecondition, "reading package.json: %v", err)
	}
	if err := json.Unmarshal(data, &pkg); err != nil {
		return nil, status.Errorf(codes.FailedPrecondition, "parsing package.json: %v", err)
	}
	declared := map[string]string{}
	for name, v := range pkg.Dependencies {
		declared[name] = v
	}
	if req.GetTransitiveDependencies() {
		for name, v := range pkg.DevDependencies {
			declared[name] = v
		}
	}
	names := make([]string, 0, len(declared))
	for name := range declared {
		names = append(names, name)
	}
	sort.Strings(names)
	resp := &pulumirpc.GetProgramDependenciesResponse{}
	for _, name := range names {
		v := declared[name]
		var installed struct {
			Version string `json:"version"`
		}
		if b, err := os.ReadFile(filepath.Join(dir, "node_modules", name, "package.json")); err == nil {
			if json.Unmarshal(b, &installed) == nil && installed.Version != "" {
				v = installed.Version
			}
		}
		resp.Dependencies = append(resp.Dependencies, &pulumirpc.DependencyInfo{Name: name, Version: v})
	}
	return resp, nil
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func nonNilSlice(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
