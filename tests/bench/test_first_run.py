"""bench/first_run.py cuts make run's timestamped output into steps and flags the silent ones, and keeps the
install-excluded and install-included runs side by side in one result (no run here; pure)."""
from bench.first_run import SILENT_SECONDS, combine, split_steps
from bench.harness import report

EVENTS = [(0.5, "== stack: embedded"), (0.6, "== debug: on (DJANGO_DEBUG=1, local use only)"),
          (5.0, "Operations to perform:"), (20.0, "cards: importing (import_cards)"),
          (21.0, "cards:  50%|#####     | 9/18 [00:01<00:01, 9batch/s]"), (28.0, "cards: 34632 upserted"),
          (30.0, "sets: importing (import_sets)"), (35.0, "decks: importing (import_decks)"),
          (60.0, "decks: {\"lines\": 1}"), (61.0, "completion decks: caching the corpus as arrays"),
          (62.0, "engine cards: converting the catalogue for the rules engine (build_engine_cards)"),
          (70.0, "== serving on http://127.0.0.1:8000/")]


def test_steps_are_cut_at_their_first_line_and_silences_flagged():
    steps = split_steps(EVENTS, end=75.0)
    assert list(steps) == ["install", "migrate", "cards", "sets", "decks", "models", "completion decks",
                           "engine cards", "server start"]
    assert steps["install"]["seconds"] == 0.6 and steps["migrate"]["seconds"] == 19.4
    assert steps["decks"] == {"seconds": 25.0, "longest_silence_seconds": 25.0, "silent": True,
                              "silent_after": "decks: importing (import_decks)"}
    assert steps["migrate"]["longest_silence_seconds"] == 15.0 and steps["migrate"]["silent"]
    assert steps["migrate"]["silent_after"] == "Operations to perform:"
    assert not steps["cards"]["silent"] and steps["cards"]["longest_silence_seconds"] == 7.0
    assert steps["server start"]["seconds"] == 5.0
    assert sum(s["seconds"] for s in steps.values()) == 75.0


def test_progress_bar_updates_break_a_silence_and_the_threshold_is_strict():
    bar = [(100.0 + 9.5 * k, f"decks: {k}0%|##   | [00:10<01:00]") for k in range(1, 10)]
    events = [(0.1, "== stack: embedded"), (0.2, "== debug: on"), (100.0, "decks: importing (import_decks)"),
              *bar, (190.0, "decks: {\"lines\": 1}")]
    steps = split_steps(events, end=190.0 + SILENT_SECONDS)
    assert steps["decks"]["longest_silence_seconds"] == 9.5 and not steps["decks"]["silent"]
    # the last step's silence runs to the first 200; exactly the threshold is not over it
    assert steps["models"]["longest_silence_seconds"] == SILENT_SECONDS and not steps["models"]["silent"]
    assert steps["migrate"]["silent_after"] == "== debug: on"


def test_a_step_that_starts_silent_names_its_own_start():
    steps = split_steps([(0.0, "== stack: embedded"), (12.5, "== debug: on")], end=13.0)
    assert steps["install"]["silent"] and steps["install"]["silent_after"] == "== stack: embedded"
    steps = split_steps([(12.5, "== stack: embedded"), (12.6, "== debug: on")], end=13.0)
    assert steps["install"]["silent_after"] == "(install starts)" and steps["install"]["silent"]


def test_a_run_cut_short_lists_only_the_steps_begun():
    steps = split_steps([(0.2, "== stack: embedded"), (1.0, "== debug: on"), (9.0, "cards: importing")], end=12.0)
    assert list(steps) == ["install", "migrate", "cards"] and steps["cards"]["seconds"] == 3.0


def _section(include_install: bool, install: float, total: float, commit: str) -> dict:
    steps = split_steps([(install, "== stack: embedded"), (install + 0.1, "== debug: on"),
                         (install + 5, "decks: importing (import_decks)")], end=total)
    return {"commit": commit, "include_install": include_install, "answered_200": True, "to_first_200_seconds": total,
            "to_first_200_minutes": round(total / 60, 2), "install_seconds": steps["install"]["seconds"],
            "excluding_install_minutes": round((total - install) / 60, 2), "within_target": total - install <= 480,
            "longest_silence_seconds": max(s["longest_silence_seconds"] for s in steps.values()),
            "silent_steps": [n for n, s in steps.items() if s["silent"]], "steps": steps}


def test_one_kind_of_run_keeps_the_other_kinds_last_figures():
    excluded = combine(None, {"install_excluded": _section(False, 0.2, 300.0, "aaa")}, "embedded")
    both = combine(excluded, {"install_included": _section(True, 120.0, 420.0, "bbb")}, "embedded")
    block = both["embedded"]
    assert list(block)[-2:] == ["install_excluded", "install_included"]
    assert block["install_excluded"]["commit"] == "aaa" and block["install_included"]["commit"] == "bbb"
    assert block["headline"]["install_excluded_minutes"] == 5.0 == both["headline"]["embedded.install_excluded_minutes"]
    assert block["headline"]["install_included_minutes"] == 7.0 and block["headline"]["install_seconds"] == 120.1
    assert block["headline"]["silent_steps"] == ["decks (install_excluded)", "decks (install_included)",
                                                 "install (install_included)"]
    # a new excluded run replaces only its own section
    again = combine(both, {"install_excluded": _section(False, 0.2, 200.0, "ccc")}, "embedded")
    assert again["embedded"]["install_excluded"]["commit"] == "ccc"
    assert again["embedded"]["install_included"]["commit"] == "bbb"


def test_both_stacks_sit_side_by_side_and_a_run_of_one_keeps_the_other():
    doc = combine(None, {"install_excluded": _section(False, 0.2, 240.0, "aaa")}, "embedded")
    doc = combine(doc, {"install_excluded": _section(False, 0.2, 420.0, "aaa")}, "services")
    assert list(doc)[-2:] == ["embedded", "services"]
    assert doc["headline"]["embedded.install_excluded_minutes"] == 4.0
    assert doc["headline"]["services.install_excluded_minutes"] == 7.0
    assert "install_included" not in doc["services"]  # the embedded stack's sections never leak into another's
    doc = combine(doc, {"install_excluded": _section(False, 0.2, 300.0, "bbb")}, "services")
    assert doc["embedded"]["install_excluded"]["commit"] == "aaa" and doc["services"]["install_excluded"]["commit"] == "bbb"


def test_a_result_written_before_the_stack_blocks_is_read_as_its_stacks_block():
    old = {"benchmark": "first_run", "stack": "embedded", "install_excluded": _section(False, 0.2, 240.0, "old")}
    doc = combine(old, {"install_excluded": _section(False, 0.2, 420.0, "new")}, "services")
    assert doc["embedded"]["install_excluded"]["commit"] == "old" and doc["services"]["install_excluded"]["commit"] == "new"


def test_the_md_lists_every_step_of_both_runs():
    doc = combine(None, {"install_excluded": _section(False, 0.2, 300.0, "aaa"),
                         "install_included": _section(True, 120.0, 420.0, "bbb")}, "embedded")
    text = report.render(doc, "first_run")
    for kind in ("install_excluded", "install_included"):
        table = text.split(f"## embedded.{kind}.steps\n\n", 1)[1].split("\n\n", 1)[0]
        rows = [line.split(" | ")[0].strip("| ") for line in table.splitlines()[2:]]
        assert rows == list(doc["embedded"][kind]["steps"]), kind  # "decks" too, though raw detail of that name is not
        assert "longest_silence_seconds" in table and "silent_after" in table


def test_a_run_cut_short_has_no_time_to_the_first_page_in_the_headline():
    cut = {**_section(True, 120.0, 600.0, "eee"), "answered_200": False}
    head = combine(None, {"install_included": cut}, "embedded")["embedded"]["headline"]
    assert head["install_included_minutes"] is None
    assert head["install_included_cut_short_after_minutes"] == 10.0
    assert head["install_seconds"] == 120.1  # the install itself was whole
    unfinished = {**cut, "steps": {"install": {**cut["steps"]["install"], "seconds": 600.0}}}
    assert combine(None, {"install_included": unfinished}, "embedded")["embedded"]["headline"]["install_seconds"] is None
