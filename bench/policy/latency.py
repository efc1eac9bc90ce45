"""What the admission policy costs the requests it sees: the API server's own histogram
of its ValidatingAdmissionPolicy admission plugin (`apiserver_admission_controller_
admission_duration_seconds{name="ValidatingAdmissionPolicy"}`: every write, whoever makes
it, each matched against every policy), read from its /metrics with prometheus_client.
The plugin's per-policy histogram records only denials and errors, not admissions."""

from __future__ import annotations

from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

FAMILY = "apiserver_admission_controller_admission_duration_seconds"
PLUGIN = "ValidatingAdmissionPolicy"


@dataclass(frozen=True)
class PolicyChecks:
    """The checks made so far: how many, and the seconds they took in all."""

    count: int = 0
    seconds: float = 0.0

    def __sub__(self, earlier: PolicyChecks) -> PolicyChecks:
        return PolicyChecks(self.count - earlier.count, self.seconds - earlier.seconds)

    @property
    def mean_ms(self) -> float:
        return 1000 * self.seconds / self.count if self.count else 0.0


def policy_checks(text: str) -> PolicyChecks:
    """The plugin's checks so far, every operation and outcome together."""
    count, seconds = 0, 0.0
    for family in text_string_to_metric_families(text):
        if family.name != FAMILY:
            continue
        for sample in family.samples:
            if sample.labels.get("name") != PLUGIN:
                continue
            if sample.name.endswith("_count"):
                count += int(sample.value)
            elif sample.name.endswith("_sum"):
                seconds += sample.value
    return PolicyChecks(count, seconds)
