"""Export stored drafts in the 17Lands public layout."""
import gzip
import sys

from django.core.management.base import BaseCommand, CommandError

from drafts.logstore import export_logs
from drafts.management.common import DraftErrorsAsCommandErrors
from drafts.models import DraftSeat
from drafts.pods.service import consented_seats
from drafts.rounds import games_csv


class Command(BaseCommand):
    help = "Write drafts of one set as a 17Lands-layout CSV (.csv or .csv.gz; '-' for stdout)."

    def add_arguments(self, parser):
        parser.add_argument("--out", required=True)
        parser.add_argument("--set", dest="set_code", help="all drafts of this set")
        parser.add_argument("--draft", nargs="*", default=[], help="draft (pod) ids")
        parser.add_argument("--kind", choices=["simulated", "imported", "online"])
        parser.add_argument("--consented", action="store_true",
                            help="only people's online drafts they agreed to share for training")
        parser.add_argument("--games", action="store_true",
                            help="the games of the seats' rounds (Play your pod), 17Lands-like game rows, "
                                 "instead of the picks")

    def handle(self, *args, out, set_code=None, draft=(), kind=None, consented=False, games=False, **opts):
        seats = (consented_seats() if consented else DraftSeat.objects.all()).select_related("draft")
        if draft:
            seats = seats.filter(draft_id__in=draft)
        if set_code:
            seats = seats.filter(draft__set_code=set_code.upper())
        if kind:
            seats = seats.filter(draft__kind=kind)
        if not (draft or set_code):
            raise CommandError("say what to export: --set CODE or --draft ID")
        if not seats.exists():
            raise CommandError("no stored drafts match")
        if games:
            return self._games(seats, out)
        with DraftErrorsAsCommandErrors():
            if out == "-":
                n = export_logs(seats, sys.stdout)
            else:
                opener = gzip.open if out.endswith(".gz") else open
                with opener(out, "wt", encoding="utf-8", newline="") as fh:
                    n = export_logs(seats, fh)
        if out != "-":
            self.stdout.write(self.style.SUCCESS(f"{n} picks written to {out}"))

    def _games(self, seats, out):
        text = games_csv(seats)
        if text is None:
            raise CommandError("no finished games of these drafts")
        if out == "-":
            self.stdout.write(text, ending="")
            return
        opener = gzip.open if out.endswith(".gz") else open
        with opener(out, "wt", encoding="utf-8", newline="") as fh:
            fh.write(text)
        self.stdout.write(self.style.SUCCESS(f"{text.count(chr(10)) - 1} games written to {out}"))
