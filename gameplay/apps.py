from django.apps import AppConfig

from gameplay.core import policy, value
from ml import kinds


class GameplayConfig(AppConfig):
    name = "gameplay"

    def ready(self):
        from gameplay.policy_training import GAME_POLICY_NET, active_net_weights  # noqa: PLC0415 - imports models: once the registry is ready
        from gameplay.training import GAME_POLICY, active_value_weights  # noqa: PLC0415 - imports models: once the registry is ready

        # the search's learned leaf and the advisor's win estimate use the registry's active version
        # (re-read every few seconds), the shipped file while none is active
        value.set_resolver(active_value_weights)
        kinds.register(GAME_POLICY)
        # the search's policy/value network: the active game_policy_net version, none while none is active
        policy.set_resolver(active_net_weights)
        kinds.register(GAME_POLICY_NET)
