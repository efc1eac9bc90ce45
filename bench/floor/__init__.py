"""Why the program's targets under mocks are out of reach with one Python resource per
object, and what the provider-side path would cost in a real run (bench/floor/design.py)."""
