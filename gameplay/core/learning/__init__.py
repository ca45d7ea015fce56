"""The learned models: ``value`` (the value model: P(win) from 36 features), ``network`` (the policy/value
network: a prior over the actions and P(win)) and ``weights`` (the ``SearchModels`` built from their files; which
files are in use the caller says). Imports ``engine`` and ``search`` only (``search.evaluation`` for the engine's
squash and ``SearchModels``)."""
