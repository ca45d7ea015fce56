"""bench/first_run.py cuts make run's timestamped output into steps and flags the silent ones (no run here)."""
from bench.first_run import split_steps


def test_steps_are_cut_at_their_first_line_and_silences_flagged():
    events = [(0.5, "== stack: embedded"), (0.6, "== debug: on (DJANGO_DEBUG=1, local use only)"),
              (5.0, "Operations to perform:"), (20.0, "cards: importing (import_cards)"),
              (21.0, "cards:  50%|#####     | 9/18 [00:01<00:01, 9batch/s]"), (28.0, "cards: 34632 upserted"),
              (30.0, "sets: importing (import_sets)"), (35.0, "decks: importing (import_decks)"),
              (60.0, "decks: {\"lines\": 1}"), (61.0, "completion decks: caching the corpus as arrays"),
              (62.0, "engine cards: converting the catalogue for the rules engine (build_engine_cards)"),
              (70.0, "== serving on http://127.0.0.1:8000/")]
    steps = split_steps(events, end=75.0)
    assert list(steps) == ["install", "migrate", "cards", "sets", "decks", "models", "completion decks",
                           "engine cards", "server start"]
    assert steps["install"]["seconds"] == 0.6 and steps["migrate"]["seconds"] == 19.4
    assert steps["decks"] == {"seconds": 25.0, "longest_silence_seconds": 25.0, "silent": True}
    assert steps["migrate"]["longest_silence_seconds"] == 15.0 and steps["migrate"]["silent"]
    assert not steps["cards"]["silent"] and steps["server start"]["seconds"] == 5.0
    assert sum(s["seconds"] for s in steps.values()) == 75.0


def test_a_run_cut_short_lists_only_the_steps_begun():
    steps = split_steps([(0.2, "== stack: embedded"), (1.0, "== debug: on"), (9.0, "cards: importing")], end=12.0)
    assert list(steps) == ["install", "migrate", "cards"] and steps["cards"]["seconds"] == 3.0
