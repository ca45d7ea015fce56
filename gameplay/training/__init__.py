"""Training and evaluation of the gameplay app's model kinds (shells: they read and write the registry):
``value`` (``game_value``: the search's value model) and ``policy`` (``game_policy_net``: the policy/value
network). The kinds themselves are declared in ``gameplay.kinds``."""
