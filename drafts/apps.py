from django.apps import AppConfig


class DraftsConfig(AppConfig):
    name = "drafts"
