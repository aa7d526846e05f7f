"""Migration 0019 on a database made by the old code: runs whose ``options`` mixed parameters
with outcomes (``core_path``, ``stop_reason``, ``larger_reason``, ``unsent``), whose ``pattern``
held a word split, move to one ``parameters`` object and outcome columns of their own."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from tokenizers_app.bpe.parameters import TrainingParameters

APP = "tokenizers_app"
BEFORE = [(APP, "0018_evaluation_parts")]
AFTER = [(APP, "0019_run_parameters")]


def migrate(targets):
    """Migrate to ``targets``; the models as they are there."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.fixture
def old_apps(transactional_db):
    apps = migrate(BEFORE)
    yield apps
    migrate(MigrationExecutor(connection).loader.graph.leaf_nodes(APP))


def test_old_runs_move_to_one_parameters_object_and_outcome_columns(old_apps):
    tokenizer = old_apps.get_model(APP, "Tokenizer").objects.create(name="old")
    OldRun = old_apps.get_model(APP, "TrainingRun")
    byte = OldRun.objects.create(  # as the old start_training_run and save_training_result
        tokenizer=tokenizer, algorithm="byte_bpe", pattern="gpt4", vocab_size=400,
        special_tokens=["<s>"], min_frequency=2,
        options={"sweep": [280, 300], "core_path": "compiled (Cython)",
                 "stop_reason": "no pair left with count >= 2 after 3 of 5 merges"})
    char = OldRun.objects.create(  # a word split in pattern, the queue down when sent
        tokenizer=tokenizer, algorithm="char_bpe", pattern="word_punct", vocab_size=500,
        special_tokens=["<unk>"], min_frequency=1,
        options={"lowercase": True, "min_word_frequency": 3, "unsent": True,
                 "larger_reason": "the version has 600 tokens"})
    custom = OldRun.objects.create(tokenizer=tokenizer, algorithm="byte_bpe",
                                   pattern=r"\w+|\s+", vocab_size=300, options={})

    Run = migrate(AFTER).get_model(APP, "TrainingRun")

    byte = Run.objects.get(pk=byte.pk)
    assert byte.parameters == {"vocab_size": 400, "special_tokens": ["<s>"], "pattern": "gpt4",
                               "min_frequency": 2, "sweep": [280, 300], "algorithm": "byte_bpe",
                               "lowercase": False, "split": "whitespace",
                               "min_word_frequency": 1}
    assert (byte.core_path, byte.stop_reason, byte.larger_reason, byte.unsent) == (
        "compiled (Cython)", "no pair left with count >= 2 after 3 of 5 merges", "", False)
    char = Run.objects.get(pk=char.pk)
    params = TrainingParameters.from_json(char.parameters)
    assert params == TrainingParameters(500, ["<unk>"], "", 1, [], "char_bpe", True,
                                        "word_punct", 3)
    assert (char.core_path, char.stop_reason, char.larger_reason, char.unsent) == (
        "", "", "the version has 600 tokens", True)
    assert Run.objects.get(pk=custom.pk).parameters["pattern"] == r"\w+|\s+"
    assert not any(hasattr(byte, name) for name in ("options", "pattern", "vocab_size"))


def test_old_versions_keep_a_regex_in_pattern_a_split_and_a_description_apart(old_apps):
    tokenizer = old_apps.get_model(APP, "Tokenizer").objects.create(name="old")
    OldVersion = old_apps.get_model(APP, "TokenizerVersion")
    old_patterns = {"byte_bpe": "gpt4", "char_bpe": "word_punct",
                    "hf": "WordPiece; normalizer BertNormalizer",
                    "sentencepiece": "SentencePiece unigram; normalization nmt_nfkc"}
    made = {kind: OldVersion.objects.create(
                tokenizer=tokenizer, number=number, status="ready", algorithm=kind,
                pattern=pattern, vocab_size=300, merge_count=0, digest=f"{number:064}",
                source="import").pk
            for number, (kind, pattern) in enumerate(old_patterns.items(), 1)}

    Version = migrate(AFTER).get_model(APP, "TokenizerVersion")

    def fields(kind):
        return Version.objects.filter(pk=made[kind]).values_list(
            "pattern", "split", "engine_description").get()

    assert fields("byte_bpe") == ("gpt4", "", "")
    assert fields("char_bpe") == ("", "word_punct", "")
    assert fields("hf") == ("", "", "WordPiece; normalizer BertNormalizer")
    assert fields("sentencepiece") == ("", "", "SentencePiece unigram; normalization nmt_nfkc")
