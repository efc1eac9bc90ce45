"""A ConfigMap on a spoke through a Provider whose kubeconfig is an exec user."""

import json

import pulumi
import pulumi_kubernetes as k8s

cfg = pulumi.Config()
provider = k8s.Provider(
    "spoke",
    kubeconfig=pulumi.Output.secret(json.dumps(cfg.require_object("kubeconfig"))),
)
cm = k8s.core.v1.ConfigMap(
    "smoke",
    metadata={"name": cfg.require("name"), "namespace": cfg.require("name")},
    data={"value": cfg.require("value")},
    opts=pulumi.ResourceOptions(provider=provider),
)
pulumi.export("uid", cm.metadata.uid)
