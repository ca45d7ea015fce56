"""Build the rules engine's card database from the catalogue and mark which cards it supports."""
import os

from django.core.management.base import BaseCommand, CommandError

from plumbing.progress import progress as progress_bar
from gameplay import carddb


class Command(BaseCommand):
    help = "Convert every catalogue card for the phase.rs rules engine and record which ones it fully supports."
    stealth_options = ("started",)  # setup_site: a carddb.Conversion begun while the decks imported

    def add_arguments(self, parser):
        parser.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                            help="processes converting cards in parallel (default: one per CPU)")

    def handle(self, *args, workers=None, started=None, **opts):
        if not carddb.engine_version():
            raise CommandError("phase-python is not installed (pip install -r requirements.txt)")
        bar = progress_bar(total=None, unit="card", desc="engine cards", unit_scale=False)

        def progress(done, total):
            if bar.total is None:  # chunks converted in the background count from the start (for the ETA)
                bar.total, bar.initial, bar.n, bar.last_print_n = total, done, done, done
            bar.update(done - bar.n)

        def log(text):
            bar.close()
            self.stdout.write(f"engine cards: {text}")

        path, summary = carddb.build(progress, workers=workers or os.cpu_count() or 1, started=started, log=log)
        bar.close()
        self.stdout.write(self.style.SUCCESS(
            f"engine cards: {summary['supported']} of {summary['cards']} fully supported, "
            f"{summary['built']} built, {summary['faces']} faces -> {path}"))
