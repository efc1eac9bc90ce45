"""The program's own versions of a few of the Pulumi Python SDK's per-resource
functions, one module each, declared and installed by `sdk_speedups.registry`
(docs/sdk-speedups.md); `sdk_speedups.runtime.use_program_runtime()` sets them and the
collector (`sdk_speedups.collector`) in one call."""
