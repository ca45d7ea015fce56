"""The cards' and decks' steps of ``manage.py setup_site`` (registered from :class:`decks.apps.DecksConfig`):
import the cards, sets and deck corpus from MTG_DATA_DIR when they are not in the database yet, cache the corpus
as arrays for the first completion, and say what the site holds."""
from __future__ import annotations

import time

from django.core.management import call_command

from decks.models import Card, CardSet, Deck
from ml.registry import NoActiveModel
from plumbing import setup
from plumbing.progress import progress as progress_bar, ticking

# Rates for the bars of the steps that report nothing while they work (their ETAs are estimates): measured by
# bench/first_run.py on the shared 2-core machine, with room for its load.
TORCH_SECONDS = 5.0
DECKS_COUNTED_PER_SECOND = 60_000
ROWS_ARRANGED_PER_SECOND = 1_000_000

CARDS, SETS, DECKS, COMPLETION_DECKS, SUMMARY = 10, 20, 30, 50, 90  # the steps' places (plumbing.setup)


def importing(label: str, present, command: str):
    """A step that runs the import ``command`` unless ``present()`` says its rows are there (or it is forced)."""
    def run(s: setup.Setup) -> None:
        if present() and not s.force:
            s.stdout.write(f"{label}: already imported")
            return
        s.stdout.write(f"{label}: importing ({command})")
        call_command(command, stdout=s.stdout, stderr=s.stderr)
    return run


def completion_decks(s: setup.Setup) -> None:
    """Cache the corpus as arrays now, so the first deck completion does not wait for it (~1 min)."""
    # torch is loaded here, under a bar, rather than silently before the first line at start-up
    with ticking("completion decks: loading torch and the card embeddings", expected=TORCH_SECONDS):
        from decks.completion.datasets import deck_arrays  # noqa: PLC0415 - beside the embeddings, loaded here
        from decks.embeddings.service import active_embeddings  # noqa: PLC0415 - imports torch

        try:
            names = active_embeddings().names
        except NoActiveModel as exc:
            names, skipped = None, exc
    if names is None:
        s.stdout.write(f"completion decks: skipped ({skipped})")
        return
    s.stdout.write("completion decks: caching the corpus as arrays")
    t0 = time.perf_counter()
    decks = Deck.objects.filter(source="corpus").count()
    # Before the first row: the corpus's counts and deck facts (one query each, no progress of their own).
    prelude = ticking("completion decks: counting the corpus", expected=decks / DECKS_COUNTED_PER_SECOND).start()
    bar, arranging = None, None

    def rows_read(done, total):
        nonlocal bar, arranging
        if bar is None:
            prelude.close()
            bar = progress_bar(total=total, desc="completion decks", unit="row")
        bar.update(done - bar.n)
        if done == total:  # the rest is sorting them in numpy: a bar on the clock
            bar.close()
            s.stdout.write(f"completion decks: arranging {total} card rows into decks")
            arranging = ticking("completion decks: arranging", expected=total / ROWS_ARRANGED_PER_SECOND).start()

    ok = False
    try:
        arrays = deck_arrays(names, progress=rows_read)
        ok = True
    finally:  # a failure leaves no clock ticking, and no bar reading done
        for stage in (prelude, arranging):
            if stage is not None:
                stage.close(done=ok)
        if bar is not None:
            bar.close()
    s.stdout.write(f"completion decks: {len(arrays)} corpus decks ready for retrieval "
                   f"({time.perf_counter() - t0:.1f}s)")


def summary(s: setup.Setup) -> None:
    s.stdout.write(s.style.SUCCESS(
        f"site data: {Card.objects.count()} cards, {CardSet.objects.count()} sets, "
        f"{Deck.objects.filter(source='corpus').count()} corpus decks"))


def register() -> None:
    setup.step(CARDS, "cards", importing(
        "cards", lambda: Card.objects.filter(source__in=["oracle", "mtgjson"]).exists(), "import_cards"))
    setup.step(SETS, "sets", importing("sets", lambda: CardSet.objects.exists(), "import_sets"))
    setup.step(DECKS, "decks", importing(
        "decks", lambda: Deck.objects.filter(source="corpus").exists(), "import_decks"))
    setup.step(COMPLETION_DECKS, "completion decks", completion_decks)
    setup.step(SUMMARY, "summary", summary)
