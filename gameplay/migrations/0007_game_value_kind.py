"""The value model's kind is renamed game_policy -> game_value (its rows keep their versions, files and history).

``game_policy`` named the value model while ``game_policy_net`` is the policy/value network; the old name stays an
alias in ``gameplay.kinds`` for one release."""
from django.db import migrations

OLD, NEW = "game_policy", "game_value"
MODELS = ("ModelVersion", "TrainingRun", "ActivationEvent")


def rename(old: str, new: str):
    def run(apps, schema_editor):
        for name in MODELS:
            apps.get_model("ml", name).objects.filter(kind=old).update(kind=new)
    return run


class Migration(migrations.Migration):

    dependencies = [
        ("gameplay", "0006_gamereview"),
        ("ml", "0006_kind_from_the_registry"),
    ]

    operations = [
        migrations.RunPython(rename(OLD, NEW), rename(NEW, OLD)),
    ]
