"""A run's parameters become one stored object (``TrainingRun.parameters``, the checked
``bpe.parameters.TrainingParameters`` whole), and its outcomes, which ``options`` mixed with the
parameters, get columns of their own (``core_path``, ``stop_reason``, ``larger_reason``,
``unsent``). Existing rows move over: ``vocab_size``, ``special_tokens``, ``pattern``,
``min_frequency`` and the parameters in ``options`` (``sweep``, and character-level BPE's
``lowercase``, ``split`` and ``min_word_frequency``) into ``parameters``; ``pattern`` keeps only a
byte-level run's regex (a character-level run's word split, where an old row held it there, goes
to ``split``).

A version's ``pattern`` too keeps only a regex: a character-level version's word split moves to
``split``, a library tokenizer's description (hf, sentencepiece) to ``engine_description``."""

from django.db import migrations, models

SPLITS = ("whitespace", "word_punct")  # bpe.char_tokenizer.SPLITS when this was written
OUTCOMES = ("core_path", "stop_reason", "larger_reason", "unsent")


def parameters_of(algorithm: str, pattern: str, vocab_size: int, special_tokens, min_frequency,
                  options: dict) -> dict:
    """The ``parameters`` of an old row (``TrainingParameters.as_json``'s fields)."""
    char_level = algorithm == "char_bpe"
    split = options.get("split") or (pattern if pattern in SPLITS else "whitespace")
    return {"vocab_size": vocab_size, "special_tokens": list(special_tokens or []),
            "pattern": "" if char_level else (pattern or "gpt2"),
            "min_frequency": min_frequency, "sweep": list(options.get("sweep", [])),
            "algorithm": algorithm,
            "lowercase": bool(options.get("lowercase", False)) if char_level else False,
            "split": split if char_level else "whitespace",
            "min_word_frequency": int(options.get("min_word_frequency", 1)) if char_level else 1}


def forward(apps, schema_editor):
    TrainingRun = apps.get_model("tokenizers_app", "TrainingRun")
    for run in TrainingRun.objects.all().iterator():
        options = run.options or {}
        run.parameters = parameters_of(run.algorithm, run.pattern, run.vocab_size,
                                       run.special_tokens, run.min_frequency, options)
        run.core_path = options.get("core_path", "")
        run.stop_reason = options.get("stop_reason", "")
        run.larger_reason = options.get("larger_reason", "")
        run.unsent = bool(options.get("unsent", False))
        run.save(update_fields=["parameters", *OUTCOMES])


def backward(apps, schema_editor):
    TrainingRun = apps.get_model("tokenizers_app", "TrainingRun")
    for run in TrainingRun.objects.all().iterator():
        params = run.parameters
        char_level = params["algorithm"] == "char_bpe"
        options = {"sweep": params["sweep"]} if params["sweep"] else {}
        if char_level:
            options.update(lowercase=params["lowercase"], split=params["split"],
                           min_word_frequency=params["min_word_frequency"])
        options.update({name: getattr(run, name) for name in OUTCOMES if getattr(run, name)})
        run.options, run.pattern = options, params["pattern"]
        run.vocab_size, run.special_tokens = params["vocab_size"], params["special_tokens"]
        run.min_frequency = params["min_frequency"]
        run.save(update_fields=["options", "pattern", "vocab_size", "special_tokens",
                                "min_frequency"])


ENGINE_KINDS = ("hf", "sentencepiece")  # the library kinds when this was written


def versions_forward(apps, schema_editor):
    TokenizerVersion = apps.get_model("tokenizers_app", "TokenizerVersion")
    for version in TokenizerVersion.objects.filter(algorithm="char_bpe"):
        TokenizerVersion.objects.filter(pk=version.pk).update(split=version.pattern, pattern="")
    for version in TokenizerVersion.objects.filter(algorithm__in=ENGINE_KINDS):
        TokenizerVersion.objects.filter(pk=version.pk).update(
            engine_description=version.pattern, pattern="")


def versions_backward(apps, schema_editor):
    TokenizerVersion = apps.get_model("tokenizers_app", "TokenizerVersion")
    for version in TokenizerVersion.objects.exclude(split="", engine_description=""):
        TokenizerVersion.objects.filter(pk=version.pk).update(
            pattern=version.pattern or version.split or version.engine_description)


class Migration(migrations.Migration):

    dependencies = [
        ('tokenizers_app', '0018_evaluation_parts'),
    ]

    operations = [
        migrations.AddField(
            model_name='trainingrun',
            name='parameters',
            field=models.JSONField(default=dict, help_text="the checked training parameters, whole (bpe.parameters.TrainingParameters as_json): vocab_size, special_tokens, pattern (byte_bpe's regex), min_frequency, sweep, algorithm, and char_bpe's lowercase, split and min_word_frequency"),
        ),
        migrations.AddField(
            model_name='trainingrun',
            name='core_path',
            field=models.CharField(blank=True, help_text='the BPE core that ran the merges (bpe.compiled.CORE_PATH: "compiled (Cython)" or "pure Python (...)"); "" until it has finished', max_length=200),
        ),
        migrations.AddField(
            model_name='trainingrun',
            name='stop_reason',
            field=models.TextField(blank=True, help_text='why the run made fewer merges than asked ("" when it made them all, or is not done)'),
        ),
        migrations.AddField(
            model_name='trainingrun',
            name='larger_reason',
            field=models.TextField(blank=True, help_text='why a character-level run\'s version is larger than the vocab size asked for (its whole alphabet is always kept), "" when it is not'),
        ),
        migrations.AddField(
            model_name='trainingrun',
            name='unsent',
            field=models.BooleanField(default=False, help_text="sending the run's task failed (the queue did not answer): the reaper sends it again"),
        ),
        migrations.AlterField(  # a default for the way back, where the column is added again
            model_name='trainingrun',
            name='vocab_size',
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.RunPython(forward, backward),
        migrations.RemoveField(model_name='trainingrun', name='options'),
        migrations.RemoveField(model_name='trainingrun', name='pattern'),
        migrations.RemoveField(model_name='trainingrun', name='vocab_size'),
        migrations.RemoveField(model_name='trainingrun', name='special_tokens'),
        migrations.RemoveField(model_name='trainingrun', name='min_frequency'),
        migrations.AddField(
            model_name='tokenizerversion',
            name='engine_description',
            field=models.TextField(blank=True, help_text='a library\'s tokenizer (hf, sentencepiece): its model and normalizer, as the engine describes them (engines.hf.describe, engines.spm); "" for the core\'s kinds'),
        ),
        migrations.AddField(
            model_name='tokenizerversion',
            name='split',
            field=models.CharField(blank=True, help_text='character-level BPE\'s word split (whitespace or word_punct); "" for the other kinds', max_length=20),
        ),
        migrations.AlterField(
            model_name='tokenizerversion',
            name='pattern',
            field=models.TextField(blank=True, help_text='byte-level BPE\'s pre-tokenizing regex (a short name or the regex); "" for the other kinds'),
        ),
        migrations.RunPython(versions_forward, versions_backward),
        migrations.AlterField(
            model_name='trainingrun',
            name='parameters',
            field=models.JSONField(help_text="the checked training parameters, whole (bpe.parameters.TrainingParameters as_json): vocab_size, special_tokens, pattern (byte_bpe's regex), min_frequency, sweep, algorithm, and char_bpe's lowercase, split and min_word_frequency"),
        ),
    ]
