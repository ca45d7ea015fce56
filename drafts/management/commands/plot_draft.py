"""Plot a seat's draft history (as mtg-draftbot draws it) or the archetype bot's weights, as SVG or PNG."""
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from drafts import services
from common.figures import figure_bytes
from drafts.core.plots import draft_history_figure, weights_heatmap_figure
from drafts.management.common import DraftErrorsAsCommandErrors
from drafts.models import DraftSeat


class Command(BaseCommand):
    help = "Write a draft-history plot (--draft ID --seat N) or an archetype weights heat map (--weights SET)."

    def add_arguments(self, parser):
        parser.add_argument("--draft", help="draft (pod) id")
        parser.add_argument("--seat", type=int, default=1, help="seat number, 1-based")
        parser.add_argument("--weights", metavar="SET", help="heat map of the archetype bot's weights for a set")
        parser.add_argument("--top", type=int, default=60, help="cards shown in the heat map")
        parser.add_argument("--out", required=True, help="FILE.svg or FILE.png")

    def handle(self, *args, draft=None, seat=1, weights=None, top=60, out, **opts):
        fmt = Path(out).suffix.lstrip(".").lower()
        if fmt not in ("svg", "png"):
            raise CommandError("--out must end in .svg or .png")
        with DraftErrorsAsCommandErrors():
            if weights:
                s = services.set_list(weights)
                bot, _ = services.get_bot("archetype", s)
                fig = weights_heatmap_figure(bot.weights, bot.cards, bot.archetypes, top=top)
            elif draft:
                row = DraftSeat.objects.filter(draft_id=draft, seat=seat - 1).select_related("draft").first()
                if row is None:
                    raise CommandError(f"no seat {seat} in draft {draft}")
                s = services.set_list(row.draft.set_code)
                ratings, _ = services.draftsim_ratings(s)
                fig = draft_history_figure(list(row.picks.all()), s, ratings)
            else:
                raise CommandError("say what to plot: --draft ID [--seat N] or --weights SET")
        Path(out).write_bytes(figure_bytes(fig, fmt))
        self.stdout.write(self.style.SUCCESS(f"wrote {out}"))
