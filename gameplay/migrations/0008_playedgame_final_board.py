"""The board as it stood when a game ended, kept for display (the engine exiles every card of the loser at game
over); games finished before it show the board as stored."""
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("gameplay", "0007_game_value_kind"),
    ]

    operations = [
        migrations.AddField(
            model_name="playedgame",
            name="final_board",
            field=models.JSONField(blank=True, help_text="each seat's observation of the board as it stood when the game ended, before the engine's clean-up exiled the loser's cards: {seat: board}", null=True),
        ),
    ]
