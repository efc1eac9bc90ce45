"""What a command asked of a spoke's API server: `apiserver_request_total` read from the
server's own /metrics before and after, parsed with prometheus_client, as counts by
verb and resource."""

from __future__ import annotations

from collections import Counter

from kubernetes import client
from prometheus_client.parser import text_string_to_metric_families

METRIC = "apiserver_request"  # the counter family; its samples are apiserver_request_total


def metrics_text(api: client.ApiClient) -> str:
    """The API server's /metrics, as its admin client reads them."""
    method, url, headers, body, _ = api.param_serialize(
        "GET", "/metrics", header_params={"Accept": "text/plain"},
        auth_settings=["BearerToken"])
    resp = api.call_api(method, url, header_params=headers, body=body, _request_timeout=30)
    resp.read()
    return resp.data.decode()


def request_counts(text: str) -> Counter[str]:
    """{"VERB resource[/subresource]": requests so far}, every response code together."""
    counts: Counter[str] = Counter()
    for family in text_string_to_metric_families(text):
        if family.name != METRIC:
            continue
        for sample in family.samples:
            if not sample.name.endswith("_total"):
                continue
            labels = sample.labels
            resource = labels.get("resource") or "(none)"
            if labels.get("subresource"):
                resource += "/" + labels["subresource"]
            counts[f"{labels.get('verb', '?')} {resource}"] += int(sample.value)
    return counts


def delta(before: Counter[str], after: Counter[str]) -> Counter[str]:
    """The requests made between the two reads (what only grew)."""
    return Counter({k: after[k] - before.get(k, 0) for k in after
                    if after[k] > before.get(k, 0)})


def by_verb(counts: Counter[str]) -> Counter[str]:
    out: Counter[str] = Counter()
    for key, n in counts.items():
        out[key.split(" ", 1)[0]] += n
    return out


class Requests:
    """The requests one spoke's API server receives during a `with` block."""

    def __init__(self, api: client.ApiClient) -> None:
        self.api = api
        self.counts: Counter[str] = Counter()

    def __enter__(self) -> Requests:
        self._before = request_counts(metrics_text(self.api))
        return self

    def __exit__(self, *exc: object) -> None:
        self.counts = delta(self._before, request_counts(metrics_text(self.api)))
