module knative-fleet/toolchain/pulumi-langhost

go 1.18

replace golang.org/x/text => golang.org/x/text v0.3.6

require github.com/pulumi/pulumi/sdk/v3 v3.79.0
