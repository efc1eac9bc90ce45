"""Where one install's and one no-op preview's time goes (`python -m bench.breakdown`):
the spoke's API requests by verb and resource against kubectl's for the same objects,
the engine's CPU by Go package (`pulumi preview --profiling`, read with `go tool
pprof`), and the Python program's CPU by area (cProfile: of the real program through
`KNATIVE_FLEET_PROFILE`, and under mocks)."""
