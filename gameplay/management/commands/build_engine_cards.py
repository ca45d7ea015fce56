"""Build the rules engine's card database from the catalogue and mark which cards it supports."""
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from gameplay import carddb


class Command(BaseCommand):
    help = "Convert every catalogue card for the phase.rs rules engine and record which ones it fully supports."

    def handle(self, *args, **opts):
        if not carddb.engine_version():
            raise CommandError("phase-python is not installed (pip install -r requirements.txt)")
        bar = tqdm(total=None, unit="card", desc="engine cards", disable=None)

        def progress(done, total):
            bar.total = total
            bar.update(done - bar.n)

        path, summary = carddb.build(progress)
        bar.close()
        self.stdout.write(self.style.SUCCESS(
            f"engine cards: {summary['supported']} of {summary['cards']} fully supported, "
            f"{summary['built']} built, {summary['faces']} faces -> {path}"))
