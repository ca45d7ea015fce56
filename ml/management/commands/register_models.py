"""Register the model versions shipped in ml/weights/ (or, with --export, ship the active ones)."""

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from ml.defaults import OPTIONAL_KINDS, SHIPPED_KINDS, export_active, register_shipped, shipped
from ml.models import ModelVersion
from ml.registry import active_version


# what a fresh site trains, through the models front door, for a shipped kind with neither a file nor a version
QUICK_TRAINING = {"card_embeddings": ("--param", "epochs=20"), "deck_diffusion": ("--param", "steps=300")}

# what the site does while an optional kind has no version
OPTIONAL_WITHOUT = {"deck_masked": "deck completion uses the neighbour vote of the nearest tournament decks",
                    "deck_rank": "the masked completer builds the sideboard itself",
                    "game_value": "the game's search and win estimate use the shipped file, unregistered"}
OPTIONAL_LABEL = {"deck_masked": "neighbour vote", "deck_rank": "the denoiser's sideboard",
                  "game_value": "the shipped file, unregistered"}


class Command(BaseCommand):
    help = "Register the shipped default models; train quick ones for kinds that have neither a shipped file nor a version."

    def add_arguments(self, parser):
        parser.add_argument("--export", action="store_true", help="copy the active versions into ml/weights/ (maintainers)")
        parser.add_argument("--kind", choices=SHIPPED_KINDS,
                            help="with --export: ship only this kind's active version (the other entries are kept)")
        parser.add_argument("--figures", type=int, metavar="VERSION_ID",
                            help="with --export --kind: also ship this version of the kind as the one the published "
                                 "held-out figures come from (a dated split; the active one is then a refit on every "
                                 "deck); registered on setup, never activated")
        parser.add_argument("--half", action="store_true",
                            help="with --figures: store the figures version's float tensors as float16 (cast back to "
                                 "float32 on load) to keep ml/weights under its size budget")
        parser.add_argument("--no-train", action="store_true", help="never train a quick model when one is missing")

    def handle(self, *args, export=False, no_train=False, kind=None, figures=None, half=False, **opts):
        if kind and not export:
            raise CommandError("--kind goes with --export.")
        if figures is not None and not kind:
            raise CommandError("--figures goes with --export --kind.")
        if half and figures is None:
            raise CommandError("--half goes with --figures.")
        if export:
            if kind and active_version(kind, required=False) is None:
                raise CommandError(f"No active {kind} version to ship.")
            figures_version = None
            if figures is not None:
                figures_version = ModelVersion.objects.filter(pk=figures, kind=kind, scope="").first()
                if figures_version is None:
                    raise CommandError(f"No {kind} version with id {figures}.")
            entries = (export_active(kinds=(kind,), scoped_kinds=(), merge=True, figures=figures_version,
                                     half=half) if kind
                       else export_active())
            for entry in entries:
                self.stdout.write(f"shipped {entry['kind']} -> ml/weights/{entry['file']}")
            return
        register_shipped(log=self.stdout.write)
        kinds_shipped = {e["kind"] for e in shipped()}
        for kind in SHIPPED_KINDS:
            if ModelVersion.objects.filter(kind=kind, active=True).exists():
                continue
            if kind in OPTIONAL_KINDS:
                without = OPTIONAL_WITHOUT.get(kind, "the site works without it")
                self.stdout.write(f"{kind}: no shipped or trained version; {without} until one is trained "
                                  f"(manage.py models train {kind})"
                                  + (" (the shipped file is missing)" if kind in kinds_shipped else ""))
                continue
            if no_train:
                continue
            self.stdout.write(f"{kind}: no shipped or trained version; training a quick one"
                              + (" (the shipped file is missing)" if kind in kinds_shipped else ""))
            try:
                call_command("models", "train", kind, "--activate", *QUICK_TRAINING[kind], stdout=self.stdout,
                             stderr=self.stderr)
            except CommandError as exc:
                self.stderr.write(f"{kind}: could not train a quick model ({exc}); deck completion stays off until one exists")
        if not no_train:
            self._quick_draft_bots()
        for kind in SHIPPED_KINDS:
            active = ModelVersion.objects.filter(kind=kind, active=True).first()
            self.stdout.write(f"{kind}: {'v%d active' % active.version if active else 'none active'}"
                              + (f" ({OPTIONAL_LABEL.get(kind, 'optional')})" if kind in OPTIONAL_KINDS and not active
                                 else ""))

    def _quick_draft_bots(self):
        """A shipped draft bot whose file is missing (and no version of its scope is active): train a
        quick one (a TrainingRun, with a progress bar) on the set's logs when there are any."""
        for entry in shipped():
            scope = entry.get("scope", "")
            if entry["kind"] != "draft_bot" or active_version("draft_bot", scope, required=False) is not None:
                continue
            self.stdout.write(f"draft_bot[{scope}]: the shipped file is missing; training a quick one")
            try:
                call_command("models", "train", "draft_bot", "--scope", scope, "--quick", "--activate",
                             stdout=self.stdout, stderr=self.stderr)
            except CommandError as exc:
                self.stderr.write(f"draft_bot[{scope}]: no quick model ({str(exc).splitlines()[0]}); "
                                  f"the {scope.split(':')[0]} bot falls back to its untrained default")
