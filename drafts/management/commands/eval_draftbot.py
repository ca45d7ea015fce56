"""Pick agreement of a bot with the picks of a 17Lands-layout log file."""
import json
import time
from pathlib import Path

from django.core.management.base import BaseCommand

from drafts.core.evaluate import agreement, ranks_from_scores, score_matrix
from drafts.management.common import DraftErrorsAsCommandErrors, held_out, read_logs
from drafts.services import get_bot, set_list


class Command(BaseCommand):
    help = ("Top-1 and top-3 agreement of a bot with logged picks (overall, without forced picks, by pick number) "
            "and the mean rank of the logged pick.")

    def add_arguments(self, parser):
        parser.add_argument("--logs", required=True, help="17Lands-layout CSV (.csv or .csv.gz)")
        parser.add_argument("--bot", required=True)
        parser.add_argument("--out", help="results JSON")
        parser.add_argument("--split", choices=["all", "held-out", "train"], default="all",
                            help="rows to score: all, or the held-out pods (1 in 10, by pod) the shipped bots never saw")
        parser.add_argument("--limit", type=int)

    def handle(self, *args, logs, bot, out=None, split="all", limit=None, **opts):
        with DraftErrorsAsCommandErrors():
            data = read_logs(logs, limit)
            if split != "all":
                mask = held_out(data, logs)
                data = data.select(mask if split == "held-out" else ~mask)
            s = set_list(data.set_code)
            engine, version = get_bot(bot, s)
            started = time.perf_counter()
            scores = score_matrix(engine, data, s)
            elapsed = time.perf_counter() - started
            result = agreement(data, ranks_from_scores(data, scores))
        report = {"bot": bot, "version": version.version if version else None, "set": data.set_code,
                  "logs": str(logs), "split": split, "picks": len(data),
                  "picks_per_second": round(len(data) / max(elapsed, 1e-9), 1), **result}
        if out:
            Path(out).write_text(json.dumps(report, indent=1))
        a, u = result["all"], result["unforced"]
        self.stdout.write(f"{bot} on {data.set_code} ({split}, {len(data)} picks): top-1 {a['top1']:.3f}, "
                          f"top-3 {a['top3']:.3f}, mean rank {a['mean_rank']:.2f}; without forced picks: "
                          f"top-1 {u['top1']:.3f}, top-3 {u['top3']:.3f}")
