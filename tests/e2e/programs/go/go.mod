module github.com/pulumi-llm-accounts/pulumi-llm-accounts

go 1.24

require github.com/pulumi/pulumi/sdk/v3 v3.248.0
