from django.apps import AppConfig

from gameplay.core import value
from ml import kinds


class GameplayConfig(AppConfig):
    name = "gameplay"

    def ready(self):
        from gameplay.training import GAME_POLICY, active_value_weights  # noqa: PLC0415 - imports models: once the registry is ready

        # the search's learned leaf and the advisor's win estimate use the registry's active version
        # (re-read every few seconds), the shipped file while none is active
        value.set_resolver(active_value_weights)
        kinds.register(GAME_POLICY)
