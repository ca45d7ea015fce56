"""Bring a fresh database to a working site: import whatever real data is still missing."""
import os
import time

from django.core.management import call_command
from django.core.management.base import BaseCommand

from mtgsite.progress import progress as progress_bar, ticking
from decks.models import Card, CardSet, Deck
from gameplay import carddb
from gameplay.models import EngineCard
from ml.registry import NoActiveModel

# Rates for the bars of the steps that report nothing while they work (their ETAs are estimates): measured by
# bench/first_run.py on the shared 2-core machine, with room for its load.
CHECK_SECONDS = 8.0
TORCH_SECONDS = 5.0
DECKS_COUNTED_PER_SECOND = 60_000
ROWS_ARRANGED_PER_SECOND = 1_000_000


class Command(BaseCommand):
    def _start_engine_cards(self, force):
        """Start converting the catalogue for the rules engine in worker processes (they work while the decks
        import); None when there is nothing to build (it says why)."""
        if not carddb.engine_version():
            self.stdout.write("engine cards: phase-python is not installed; game advice is off")
            return None
        if carddb.card_data_path().exists() and EngineCard.objects.exists() and not force:
            self.stdout.write("engine cards: already built")
            return None
        started = carddb.start_build(workers=os.cpu_count() or 1)
        self.stdout.write(f"engine cards: converting the catalogue in the background ({len(started.chunks)} chunks)")
        return started

    def _engine_cards(self, started):
        """The rules engine's card database (game advice); rebuilt when the catalogue changes."""
        if started is None:
            return
        self.stdout.write("engine cards: converting the catalogue for the rules engine (build_engine_cards)")
        call_command("build_engine_cards", started=started, stdout=self.stdout, stderr=self.stderr)

    help = "Import the cards, sets and deck corpus from MTG_DATA_DIR when they are not in the database yet."

    def check(self, *args, **kwargs):
        """Django's system checks, before ``handle``: they load the URL configuration, whose views import torch
        (``make run``'s migrate skips them, so they run once, here, under a bar)."""
        with ticking("checks: Django's system checks (the views, torch)", expected=CHECK_SECONDS):
            return super().check(*args, **kwargs)

    def _completion_decks(self):
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
            self.stdout.write(f"completion decks: skipped ({skipped})")
            return
        self.stdout.write("completion decks: caching the corpus as arrays")
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
                self.stdout.write(f"completion decks: arranging {total} card rows into decks")
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
        self.stdout.write(f"completion decks: {len(arrays)} corpus decks ready for retrieval "
                          f"({time.perf_counter() - t0:.1f}s)")

    def add_arguments(self, parser):
        parser.add_argument("--force", action="store_true", help="re-run every import (idempotent)")

    def handle(self, *args, force=False, **opts):
        steps = [
            ("cards", lambda: Card.objects.filter(source__in=["oracle", "mtgjson"]).exists(), "import_cards"),
            ("sets", lambda: CardSet.objects.exists(), "import_sets"),
            ("decks", lambda: Deck.objects.filter(source="corpus").exists(), "import_decks"),
        ]
        started = None
        for label, present, command in steps:
            if label == "decks":  # the cards are in: the engine cards convert meanwhile
                started = self._start_engine_cards(force)
            if present() and not force:
                self.stdout.write(f"{label}: already imported")
                continue
            self.stdout.write(f"{label}: importing ({command})")
            call_command(command, stdout=self.stdout, stderr=self.stderr)
        call_command("register_models", stdout=self.stdout, stderr=self.stderr)
        self._completion_decks()
        self._engine_cards(started)
        self.stdout.write(self.style.SUCCESS(
            f"site data: {Card.objects.count()} cards, {CardSet.objects.count()} sets, "
            f"{Deck.objects.filter(source='corpus').count()} corpus decks"))
