"""`python -m bench.levers`: a setting of the engine or the provider, kept or not by its
measured effect on one spoke's install, no-op preview and destroy against the defaults."""
