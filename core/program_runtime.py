"""How the program's Python runs, set in one call: the collector's thresholds
(core/program_gc.py) and every cut of the Python SDK's per-resource work, in the order
the program needs them. The program (`__main__.py`) and the benchmarks that time it
under mocks run the same way. Each keeps Python's or the SDK's own behaviour when its
variable asks for it (README, "Debug output and caches")."""

from __future__ import annotations


def use_program_runtime() -> None:
    """Sets the collector and installs each SDK cut (core/sdk_review.py lists the cuts
    and what each replaces)."""
    from core.program_gc import use_program_gc
    from core.sdk_debug import quiet_sdk_debug
    from core.sdk_kept_outputs import use_kept_outputs
    from core.sdk_outputs_wait import use_linear_wait
    from core.sdk_plain_urn import use_plain_urn
    from core.sdk_plain_values import use_plain_values
    from core.sdk_stack_trace import use_frame_stack_trace

    use_program_gc()  # KNATIVE_FLEET_GC=python keeps Python's thresholds
    quiet_sdk_debug()  # KNATIVE_FLEET_SDK_DEBUG=1 keeps the SDK's debug messages
    use_linear_wait()  # KNATIVE_FLEET_SDK_WAIT=sdk
    use_plain_values()  # KNATIVE_FLEET_SDK_SERIALIZE=sdk
    use_kept_outputs()  # KNATIVE_FLEET_SDK_OUTPUTS=sdk
    use_plain_urn()  # KNATIVE_FLEET_SDK_URN=sdk
    use_frame_stack_trace()  # KNATIVE_FLEET_SDK_STACK=sdk
