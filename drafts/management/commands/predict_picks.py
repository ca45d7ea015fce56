"""A bot's ranking of every pack in a 17Lands-layout file."""
import csv
import gzip

from django.core.management.base import BaseCommand

from drafts.core.evaluate import rankings, score_matrix
from drafts.management.common import DraftErrorsAsCommandErrors, read_logs
from drafts.services import get_bot, set_list


class Command(BaseCommand):
    help = "Write draft_id, pack_number, pick_number and ranking (the pack's cards, best first, joined by '|')."

    def add_arguments(self, parser):
        parser.add_argument("--logs", required=True)
        parser.add_argument("--bot", required=True)
        parser.add_argument("--out", required=True, help="PREDICTIONS.csv (or .csv.gz)")
        parser.add_argument("--limit", type=int)

    def handle(self, *args, logs, bot, out, limit=None, **opts):
        with DraftErrorsAsCommandErrors():
            data = read_logs(logs, limit)
            s = set_list(data.set_code)
            engine, _ = get_bot(bot, s)
            ranked = rankings(data, score_matrix(engine, data, s))
        opener = gzip.open if out.endswith(".gz") else open
        with opener(out, "wt", encoding="utf-8", newline="") as fh:
            writer = csv.writer(fh, lineterminator="\n")
            writer.writerow(["draft_id", "pack_number", "pick_number", "ranking"])
            for row, names in enumerate(ranked):
                writer.writerow([data.draft_id[row], int(data.pack_number[row]), int(data.pick_number[row]),
                                 "|".join(names)])
        self.stdout.write(self.style.SUCCESS(f"{len(ranked)} rankings written to {out}"))
