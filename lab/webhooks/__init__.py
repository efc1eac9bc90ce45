"""Knative's own webhooks on the lab's spokes (docs/lab-webhooks.md).

Fake nodes run no containers, so the lab runs each Knative webhook pod's command as a local
process instead, and routes the API server to it as a real cluster does:

- kwok starts a webhook pod without making it Ready (lab.kwok_stages);
- the host (host.py) starts Knative's webhook command for it (process.py), under the
  rights of the pod's ServiceAccount, and marks the pod Ready once the webhook answers, so
  its Deployment is Available when, as on a real spoke, the webhook serves;
- each spoke's kube-apiserver calls webhooks at the pod's IP (aggregator routing) through
  its `cluster` egress, an HTTP CONNECT proxy on a Unix socket (egress.py) that sends a
  webhook pod's address to its process; a pod that goes away is unrouted at once, so its
  webhook configurations then fail closed as they do on a real spoke.
"""
