"""Games between players: ``players`` (random, engine, search and network players), ``selfplay`` (the games
the models learn from), ``roundrobin`` (round robins between decks and their statistics), ``yardstick`` (the
benches' strength measure) and ``decision_review`` (a played game's decisions against the advisor's). The top
of the core: imports ``engine``, ``search`` and ``learning``."""
