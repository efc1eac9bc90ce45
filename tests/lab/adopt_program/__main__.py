"""Running Deployments and StatefulSets adopted by server-side apply with one label more:
the write leaves their spec and annotations, and so their generation, as they were."""

import json

import pulumi
import pulumi_kubernetes as k8s

cfg = pulumi.Config()
provider = k8s.Provider(
    "spoke",
    kubeconfig=pulumi.Output.secret(json.dumps(cfg.require_object("kubeconfig"))),
)
namespace = cfg.require("namespace")
kinds = {"Deployment": k8s.apps.v1.Deployment, "StatefulSet": k8s.apps.v1.StatefulSet}
for kind, names in cfg.require_object("objects").items():
    spec = cfg.require_object("specs")[kind]
    for name in names:
        kinds[kind](
            name,
            metadata={"name": name, "namespace": namespace,
                      "annotations": {"pulumi.com/patchForce": "true"},
                      "labels": {cfg.require("label"): "yes"}},
            spec=json.loads(json.dumps(spec).replace("NAME", name)),
            opts=pulumi.ResourceOptions(provider=provider),
        )
