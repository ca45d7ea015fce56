from django.apps import AppConfig
from django.core.management import call_command

from plumbing import setup

MODELS = 40  # setup_site's step: after the decks are imported, before their arrays are cached (plumbing.setup)


def register_models(s: setup.Setup) -> None:
    """The shipped default of every kind, registered where none is."""
    call_command("register_models", stdout=s.stdout, stderr=s.stderr)


class MlConfig(AppConfig):
    name = "ml"

    def ready(self):
        setup.step(MODELS, "models", register_models)
