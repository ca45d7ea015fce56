"""Import 17Lands-layout draft logs (public PremierDraft CSVs or the proxy logs) into the database."""
from django.core.management.base import BaseCommand

from plumbing.progress import progress
from drafts.logstore import import_logs
from drafts.management.common import DraftErrorsAsCommandErrors


class Command(BaseCommand):
    help = "Import a 17Lands draft CSV (.csv or .csv.gz). Idempotent: drafts already stored are skipped."

    def add_arguments(self, parser):
        parser.add_argument("--logs", required=True, nargs="+", help="17Lands-layout CSV file(s)")
        parser.add_argument("--seats", help="seats side file linking draft_ids into pods (default: beside the file)")
        parser.add_argument("--limit", type=int, help="read only the first N rows (whole drafts are kept)")

    def handle(self, *args, logs, seats=None, limit=None, **opts):
        for path in logs:
            bars = {}

            def on_progress(stage, n):
                bar = bars.setdefault(stage, progress(desc=f"{stage} {path}", unit="pick"))
                bar.update(n - bar.n)

            with DraftErrorsAsCommandErrors():
                added = import_logs(path, seats_path=seats, limit=limit, on_progress=on_progress)
            for bar in bars.values():
                bar.close()
            self.stdout.write(self.style.SUCCESS(
                f"{path}: {added['set']}: {added['pods']} pods, {added['seats']} seats, {added['picks']} picks stored; "
                f"{added['skipped_seats']} seats were already stored"))
