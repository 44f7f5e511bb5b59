"""Bug Bash: reproduce → root cause → fix plan → human approval → fix → verify.

The deterministic half of the pipeline: the phase machine, the agents' result contracts,
per-bug state under `<project>/.aether/bugs/<id>/`, reports, configuration, costs, the
approval gate and the fix applier. The `aether bug …` commands (`aether.cli.bug`) call
`aether.bugs.pipeline` (creating and analysing a bug), `approving` and `fixing`; agents never
write here, the Queen records their results.
"""
