"""What the benchmarks share: the machine description (``machine``), the repository's paths and Django
set-up (``paths``), the service processes (``processes``), the results' JSON and markdown (``report``), and
the fixtures two benches use (``games``: the sample decks and the engine; ``podload``: the pod clients)."""
