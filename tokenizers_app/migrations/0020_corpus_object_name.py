"""A corpus keeps a plain object name, read and written through the store: the ``file`` column
(a ``FileField``, with a storage of its own) becomes ``object_name`` (a ``CharField``). Both are
a varchar of 255, so the rename keeps every row's stored name as it was."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('tokenizers_app', '0019_run_parameters'),
    ]

    operations = [
        migrations.RenameField(
            model_name='corpus',
            old_name='file',
            new_name='object_name',
        ),
        migrations.AlterField(
            model_name='corpus',
            name='object_name',
            field=models.CharField(max_length=255),
        ),
    ]
