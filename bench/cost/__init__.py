"""What a spoke costs the machine that runs Pulumi: CPU seconds of the engine, the
language host, the program and the providers, and memory, for one stack of 1, 4 and 8
spokes, for 8 spokes as 2 stacks of 4 and 16 as 4 stacks of 4 through the fleet runner,
and under the engine and provider settings that could change them (`python -m bench.cost`).
"""
