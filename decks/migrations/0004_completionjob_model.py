from django.db import migrations, models


class Migration(migrations.Migration):
    """CompletionJob.model: the jobs stored before it were all completed by Manamorphosis; new ones default to
    the masked model."""

    dependencies = [
        ("decks", "0003_printing_position"),
    ]

    operations = [
        migrations.AddField(
            model_name="completionjob",
            name="model",
            field=models.CharField(choices=[("masked", "masked diffusion + retrieval"), ("manamorphosis", "Manamorphosis")],
                                   default="manamorphosis", max_length=16),
            preserve_default=False,
        ),
        migrations.AlterField(
            model_name="completionjob",
            name="model",
            field=models.CharField(choices=[("masked", "masked diffusion + retrieval"), ("manamorphosis", "Manamorphosis")],
                                   default="masked", max_length=16,
                                   help_text="masked: retrieval + masked diffusion (kind deck_masked); manamorphosis: the "
                                             "continuous diffusion (deck_diffusion), which alone uses the sampler"),
        ),
    ]
