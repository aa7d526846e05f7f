"""A run's and a version's kind take their choices from the registry of kinds
(``engines.registry``): the same values as before, read when asked. No row changes."""

from django.db import migrations, models

import tokenizers_app.engines.registry


class Migration(migrations.Migration):

    dependencies = [
        ('tokenizers_app', '0020_corpus_object_name'),
    ]

    operations = [
        migrations.AlterField(
            model_name='trainingrun',
            name='algorithm',
            field=models.CharField(choices=tokenizers_app.engines.registry.trained_kind_choices, default='byte_bpe', max_length=20),
        ),
        migrations.AlterField(
            model_name='tokenizerversion',
            name='algorithm',
            field=models.CharField(choices=tokenizers_app.engines.registry.kind_choices, default='byte_bpe', help_text='the kind of tokenizer', max_length=20),
        ),
    ]
