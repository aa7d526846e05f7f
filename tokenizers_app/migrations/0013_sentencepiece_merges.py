"""Merge rows for the SentencePiece BPE versions imported before their merges were read from
their pieces (``engines.spm.pieces_merges``): the merge table and token pages show them, as they
do for a version imported now. Data only; the schema is unchanged."""

from django.db import migrations


def read_sentencepiece_merges(apps, schema_editor):
    from tokenizers_app.engines.spm import SentencePieceEngine

    version_model = apps.get_model("tokenizers_app", "TokenizerVersion")
    merge_model = apps.get_model("tokenizers_app", "MergeRule")
    engine_file = apps.get_model("tokenizers_app", "EngineFile")
    for version in version_model.objects.filter(algorithm="sentencepiece", merge_count=0):
        content = engine_file.objects.filter(digest=version.digest).values_list(
            "content", flat=True).first()
        if content is None:
            continue
        try:
            merges = SentencePieceEngine(bytes(content)).merges
        except ValueError:  # a damaged file: manage.py verify says so
            continue
        if not merges or merge_model.objects.filter(version_id=version.pk).exists():
            continue
        merge_model.objects.bulk_create(
            [merge_model(version_id=version.pk, rank=rank, left=left, right=right, count=None)
             for rank, (left, right) in enumerate(merges)], batch_size=5000)
        version_model.objects.filter(pk=version.pk).update(merge_count=len(merges))


class Migration(migrations.Migration):

    dependencies = [
        ('tokenizers_app', '0012_evaluation_attempts'),
    ]

    operations = [
        migrations.RunPython(read_sentencepiece_merges, migrations.RunPython.noop),
    ]
