// A Go program on the llm-accounts provider plugin, run inline through the Go SDK's Automation API (Pulumi's Go
// language host is not needed): `llm-go up|gate|destroy`. The SDK it imports is the one `pulumi package gen-sdk
// --language go` generates from the plugin's schema (tests/e2e/pluginGo.test.ts copies it to sdk/go/llmaccounts).
// The account comes from LLM_ACCOUNTS_BASE_URL/ADMIN_KEY/ACCOUNT_KEY, written into the stack's config (keys as
// secrets); LLM_GO_ALIAS and LLM_GO_COUNT are the declared values. It prints one JSON line, never a key.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"

	"github.com/pulumi/pulumi/sdk/v3/go/auto"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optpreview"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	llm "github.com/pulumi-llm-accounts/pulumi-llm-accounts/sdk/go/llmaccounts"
)

func program(ctx *pulumi.Context) error {
	count, err := strconv.Atoi(os.Getenv("LLM_GO_COUNT"))
	if err != nil {
		return fmt.Errorf("LLM_GO_COUNT: %w", err)
	}
	key, err := llm.NewApiKey(ctx, "ci", &llm.ApiKeyArgs{
		Alias: pulumi.String(os.Getenv("LLM_GO_ALIAS")),
		SecurityConfig: &llm.SecurityConfigArgs{
			Geo: &llm.GeoRestrictionArgs{Countries: pulumi.StringArray{pulumi.String("SG")}},
		},
	})
	if err != nil {
		return err
	}
	team, err := llm.NewSubAccountBatch(ctx, "team", &llm.SubAccountBatchArgs{
		Alias:        pulumi.String("go-team"),
		Balance:      pulumi.Float64(5),
		Count:        pulumi.Int(count),
		ModelPricing: llm.ModelPricingArray{llm.ModelPricingArgs{Model: pulumi.String("model-a"), PricingFactor: pulumi.Float64(1.5)}},
	})
	if err != nil {
		return err
	}
	balance, err := llm.GetBalance(ctx)
	if err != nil {
		return err
	}
	ctx.Export("keyHint", key.KeyHint)
	ctx.Export("key", key.Key)
	ctx.Export("tokens", team.Tokens)
	ctx.Export("balance", pulumi.String(balance.Balance))
	return nil
}

// stack is the inline program's stack "dev" in LLM_GO_WORKDIR, its config the account's.
func stack(ctx context.Context) (auto.Stack, error) {
	s, err := auto.UpsertStackInlineSource(ctx, "dev", "llm-go", program, auto.WorkDir(os.Getenv("LLM_GO_WORKDIR")))
	if err != nil {
		return s, err
	}
	config := auto.ConfigMap{
		"llm-accounts:baseUrl":    auto.ConfigValue{Value: os.Getenv("LLM_ACCOUNTS_BASE_URL")},
		"llm-accounts:adminKey":   auto.ConfigValue{Value: os.Getenv("LLM_ACCOUNTS_ADMIN_KEY"), Secret: true},
		"llm-accounts:accountKey": auto.ConfigValue{Value: os.Getenv("LLM_ACCOUNTS_ACCOUNT_KEY"), Secret: true},
	}
	return s, s.SetAllConfig(ctx, config)
}

// report is what a step prints: what changed, and the outputs a test may see (never the key).
type report struct {
	Changes map[string]int `json:"changes,omitempty"`
	KeyHint interface{}    `json:"keyHint,omitempty"`
	Tokens  int            `json:"tokens"`
	Secret  bool           `json:"keySecret"`
}

func run(ctx context.Context, step string) (report, error) {
	s, err := stack(ctx)
	if err != nil {
		return report{}, err
	}
	switch step {
	case "up":
		res, err := s.Up(ctx)
		if err != nil {
			return report{}, err
		}
		tokens, _ := res.Outputs["tokens"].Value.([]interface{})
		changes := map[string]int{}
		if res.Summary.ResourceChanges != nil {
			changes = *res.Summary.ResourceChanges
		}
		return report{Changes: changes, KeyHint: res.Outputs["keyHint"].Value, Tokens: len(tokens), Secret: res.Outputs["key"].Secret}, nil
	case "gate":
		res, err := s.Preview(ctx, optpreview.Refresh(), optpreview.ExpectNoChanges())
		if err != nil {
			return report{}, err
		}
		changes := map[string]int{}
		for op, n := range res.ChangeSummary {
			changes[string(op)] = n
		}
		return report{Changes: changes}, nil
	case "destroy":
		_, err := s.Destroy(ctx)
		return report{}, err
	}
	return report{}, fmt.Errorf("unknown step %q (up, gate, destroy)", step)
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: llm-go up|gate|destroy")
		os.Exit(2)
	}
	out, err := run(context.Background(), os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	line, _ := json.Marshal(out)
	fmt.Println(string(line))
}
