"""Spearman correlation between a bot's first-pick order and human average pick position (Draftsim data)."""
import json
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from drafts.bots.base import PickContext
from drafts.bots.ratings import read_khakhalin_avg_pick, spearman_p1p1
from drafts.management.common import DraftErrorsAsCommandErrors
from drafts.services import get_bot, set_list

KHAKHALIN = "khakhalin_draftsim_derived"


def human_sets() -> list[str]:
    folder = Path(settings.MTG_DATA_DIR) / KHAKHALIN
    return sorted(p.stem.split("_")[-1] for p in folder.glob("basic_data_*.csv"))


def p1p1_scores(bot, s) -> dict[str, float]:
    """The bot's score for every card of the set as the first pick of an empty pool."""
    names = s.names
    ranking = bot.pick(names, [], PickContext(set_list=s, pack_number=0, pick_number=0))
    n = len(ranking)
    return {name: float(n - position) for position, (name, _) in enumerate(ranking)}


def evaluate_p1p1(bot_name: str, code: str) -> dict:
    path = Path(settings.MTG_DATA_DIR) / KHAKHALIN / f"basic_data_{code}.csv"
    if not path.exists():
        raise CommandError(f"no human pick data for {code}; sets with data: {', '.join(human_sets())}")
    s = set_list(code)
    bot, version = get_bot(bot_name, s)
    result = spearman_p1p1(p1p1_scores(bot, s), read_khakhalin_avg_pick(path))
    return {"bot": bot_name, "set": code, "version": version.version if version else None, **result}


class Command(BaseCommand):
    help = "Spearman rho between a bot's pack-1-pick-1 order and human average pick position."

    def add_arguments(self, parser):
        parser.add_argument("--bot", required=True)
        parser.add_argument("--set", dest="sets", nargs="*", help="default: every set with human data")
        parser.add_argument("--out")

    def handle(self, *args, bot, sets=None, out=None, **opts):
        results = []
        with DraftErrorsAsCommandErrors():
            for code in [c.upper() for c in (sets or human_sets())]:
                try:
                    results.append(evaluate_p1p1(bot, code))
                except CommandError as exc:
                    if sets:
                        raise
                    self.stderr.write(f"{code}: {exc}")
                    continue
                r = results[-1]
                self.stdout.write(f"{bot} {code}: rho {r['rho']:.3f} over {r['n']} cards")
        if out:
            Path(out).write_text(json.dumps(results, indent=1))
