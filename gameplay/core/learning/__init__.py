"""The learned models: ``value`` (the value model: P(win) from 36 features), ``network`` (the policy/value
network: a prior over the actions and P(win)) and ``active`` (which versions are in use, as the shell's
registry says). Imports ``engine`` and ``search`` only (``search.evaluation`` for the engine's squash)."""
