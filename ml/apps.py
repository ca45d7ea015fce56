from django.apps import AppConfig

from ml import kinds


class MlConfig(AppConfig):
    name = "ml"

    def ready(self):
        # the training modules import models: only once the app registry is ready
        from ml.completion_training import DECK_DIFFUSION, DECK_MASKED  # noqa: PLC0415 models need the app registry
        from ml.embeddings_training import CARD_EMBEDDINGS  # noqa: PLC0415 models need the app registry

        for kind in (CARD_EMBEDDINGS, DECK_MASKED, DECK_DIFFUSION):
            kinds.register(kind)
