from django.apps import AppConfig

from ml import kinds


def active_value_weights() -> str | None:
    """The weights file of the active ``game_policy`` version of the model registry (None: none active)."""
    from ml.models import ModelVersion
    from ml.registry import resolve_path

    version = ModelVersion.objects.filter(kind="game_policy", scope="", active=True).only("weights_path").first()
    return str(resolve_path(version.weights_path)) if version is not None else None


class GameplayConfig(AppConfig):
    name = "gameplay"

    def ready(self):
        # imports models: only once the app registry is ready
        from gameplay.core import value
        from gameplay.training import GAME_POLICY

        # the search's learned leaf and the advisor's win estimate use the registry's active version
        # (re-read every few seconds), the shipped file while none is active
        value.set_resolver(active_value_weights)
        kinds.register(GAME_POLICY)
