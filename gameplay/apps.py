from django.apps import AppConfig

from gameplay.core.learning import active


class GameplayConfig(AppConfig):
    name = "gameplay"
    websocket_routes = "gameplay.routing.websocket_urlpatterns"  # collected by mtgsite.routing

    def ready(self):
        from decks import panels  # noqa: PLC0415 - the card and deck pages' panels: once the apps are loaded
        from gameplay import kinds, setup  # noqa: PLC0415 - the training shells import models: once the registry is ready
        from gameplay.training.policy import active_net_weights  # noqa: PLC0415 - imports models: once the registry is ready
        from gameplay.training.value import active_value_weights  # noqa: PLC0415 - imports models: once the registry is ready

        # the search's learned leaf and the advisor's win estimate use the registry's active game_value version
        # (re-read every few seconds), the shipped file while none is active; the search's policy/value network
        # is the active game_policy_net version, none while none is active
        active.set_resolvers(value=active_value_weights, network=active_net_weights)
        kinds.register()
        setup.register()  # the engine cards' steps of setup_site
        # the card and deck pages say whether the rules engine supports their cards
        from gameplay.carddb import support_view  # noqa: PLC0415 - imports models: once the registry is ready

        panels.register("engine", "gameplay/_engine_support.html", support_view)
