"""Records: corpora, training runs, tokenizers and their immutable versions, aliases, evaluations.
One module per kind of record; a change of one row's state is a method on its model or
QuerySet."""

from .aliases import ALIAS_PATTERN, Alias, AliasMove, GoldenEncoding
from .api_keys import ApiKey
from .contents import EngineFile, MergeRule, VocabEntry
from .corpora import Corpus, CorpusQuerySet
from .evaluations import Evaluation, EvaluationPart
from .languages import check_language
from .names import check_name
from .parallel import ParallelMember, ParallelSet
from .runs import CountPart, Kind, TrainingRun
from .versions import Tokenizer, TokenizerVersion, VersionQuerySet

__all__ = ["ALIAS_PATTERN", "Alias", "AliasMove", "ApiKey", "Corpus",
           "CorpusQuerySet", "CountPart", "EngineFile", "Evaluation", "EvaluationPart",
           "GoldenEncoding", "Kind", "MergeRule", "ParallelMember", "ParallelSet", "Tokenizer",
           "TokenizerVersion", "TrainingRun", "VersionQuerySet", "VocabEntry", "check_language",
           "check_name"]
