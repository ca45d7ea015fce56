"""Build the rules engine's card database from the catalogue and mark which cards it supports."""
import os

from django.core.management.base import BaseCommand, CommandError

from decks.management.importing import progress as progress_bar
from gameplay import carddb


class Command(BaseCommand):
    help = "Convert every catalogue card for the phase.rs rules engine and record which ones it fully supports."

    def add_arguments(self, parser):
        parser.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                            help="processes converting cards in parallel (default: one per CPU)")

    def handle(self, *args, workers=None, **opts):
        if not carddb.engine_version():
            raise CommandError("phase-python is not installed (pip install -r requirements.txt)")
        bar = progress_bar(total=None, unit="card", desc="engine cards", unit_scale=False)

        def progress(done, total):
            bar.total = total
            bar.update(done - bar.n)

        path, summary = carddb.build(progress, workers=workers or os.cpu_count() or 1)
        bar.close()
        self.stdout.write(self.style.SUCCESS(
            f"engine cards: {summary['supported']} of {summary['cards']} fully supported, "
            f"{summary['built']} built, {summary['faces']} faces -> {path}"))
