"""The dashboard's forms. A workflow's error becomes the error of the field it names
(``error.field``, when the form has that field) or of the whole form, never a 500; the page
answers with the status of its class (``errors.RegistryError.status``)."""

from django import forms

from .bpe.counting import MAX_CORPUS_WEIGHT
from .bpe.formats import FORMATS
from .bpe.formats.tiktoken import PUBLISHED
from .bpe.parameters import MIN_FREQUENCY_BOUNDS, UNK
from .engines import KINDS
from .engines.registry import DEFAULT_KIND, library_formats
from .errors import RegistryError
from .models import Corpus

PATTERNS = [("gpt2", "gpt2 (GPT-2's regex)"), ("gpt4", "gpt4 (cl100k's regex)"),
            ("o200k", "o200k (o200k's regex)"),
            ("none", "none (no pre-tokenization: merges cross spaces)"),
            ("custom", "custom regex")]


def add_service_error(form: forms.Form, error: ValueError | RegistryError) -> int:
    """Show a workflow's error beside the field it names, else at the top of the form; returns
    the status to answer with (400 for the core's plain ``ValueError``)."""
    field = getattr(error, "field", None)
    form.add_error(field if field in form.fields else None, str(error))
    return error.status if isinstance(error, RegistryError) else 400


class CorpusUploadForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="letters, digits, '.', '_' or '-'")
    evaluation = forms.BooleanField(required=False, label="Evaluation corpus",
                                    help_text="evaluate every version on it: those that "
                                              "exist, and every new one")
    language = forms.CharField(max_length=35, required=False,
                               help_text="its language as a BCP 47 tag (en, de, pt-BR, "
                                         "zh-Hans); empty when mixed or unknown")


class ParallelUploadForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="letters, digits, '.', '_' or '-'; each "
                                                     "language's corpus is NAME.LANGUAGE")
    pivot = forms.CharField(max_length=35, required=False, initial="en",
                            help_text="the language every premium is counted against (BCP 47; "
                                      "en when empty)")
    file = forms.FileField(help_text="a TSV whose header names the languages, a JSON Lines file "
                                     "of {\"en\": ..., \"de\": ...} objects, or a zip of "
                                     "gettext .po files (msgid is the pivot)")


ALGORITHMS = [(kind.name, kind.description) for kind in KINDS.values() if kind.trains]
TRAINED_KINDS = [KINDS[name] for name, _ in ALGORITHMS]
FORM_FIELDS = {"pattern": ("pattern", "custom_pattern")}  # a parameter's fields on the form
KIND_FIELDS = {kind.name: tuple(field for name in kind.parameter_fields  # one kind's only
                                for field in FORM_FIELDS.get(name, (name,)))
               for kind in TRAINED_KINDS}  # shown for the chosen kind only (run_form.js)
DEFAULT_SPECIALS = {kind.name: "\n".join(kind.default_special_tokens) for kind in TRAINED_KINDS}


class RunForm(forms.Form):
    """Both algorithms' fields; the page shows the chosen one's (``run_form.js``; without
    script, both groups under their headings), and ``run_parameters`` passes only those."""

    tokenizer = forms.CharField(max_length=100, help_text="a new name (you then own it), or a "
                                "tokenizer you own to add a version to")
    corpus = forms.ModelChoiceField(Corpus.objects.order_by("name"), to_field_name="name",
                                    empty_label=None)
    weight = forms.IntegerField(
        initial=1, required=False, help_text="the corpus's counts are multiplied by this before "
        "merging (1 to 100): more weight on a language lowers its token premium",
        widget=forms.NumberInput(attrs={"min": 1, "max": MAX_CORPUS_WEIGHT}))
    more_corpora = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 2}), label="More corpora",
        help_text="one per line: NAME, or NAME:WEIGHT to count it WEIGHT times (1 to 100)")
    algorithm = forms.ChoiceField(choices=ALGORITHMS, initial=DEFAULT_KIND, required=False,
                                  widget=forms.RadioSelect)  # none chosen: the default kind
    pattern = forms.ChoiceField(choices=PATTERNS, initial="gpt2", required=False)  # none: gpt2
    custom_pattern = forms.CharField(required=False, label="Custom regex",
                                     help_text="its matches must cover the text")
    lowercase = forms.BooleanField(required=False, help_text="lowercase words before training "
                                                             "and encoding")
    split = forms.ChoiceField(choices=[("whitespace", "whitespace (runs of non-space "
                                                      "characters)"),
                                       ("word_punct", "word_punct (letters and digits apart "
                                                      "from punctuation)")],
                              initial="whitespace", label="Words", required=False)
    min_word_frequency = forms.IntegerField(
        initial=1, required=False, help_text="drop words rarer than this before training",
        widget=forms.NumberInput(attrs={"min": MIN_FREQUENCY_BOUNDS[0],
                                        "max": MIN_FREQUENCY_BOUNDS[1]}))
    vocab_size = forms.IntegerField(initial=8000, help_text="special tokens + 256 bytes "
                                    "(byte-level) or the alphabet (character-level) + merges")
    special_tokens = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}),
                                     initial=DEFAULT_SPECIALS[DEFAULT_KIND],
                                     help_text=f"one per line; character-level BPE needs {UNK}")
    # bounds checked once, by the core (``bpe.parameters``), as for the API; shown to browsers
    min_frequency = forms.IntegerField(initial=1, help_text="stop when the best pair is rarer",
                                       widget=forms.NumberInput(attrs={
                                           "min": MIN_FREQUENCY_BOUNDS[0],
                                           "max": MIN_FREQUENCY_BOUNDS[1]}))
    sweep = forms.CharField(required=False, label="Vocabulary sweep",
                            help_text="smaller vocab sizes to keep too, e.g. 2000, 4000")

    @classmethod
    def initial_from(cls, query) -> dict:
        """The form's first values from GET parameters of the same names (a link that prefills
        it: "Run again with changes", or a corpus page's "Train on it")."""
        return {name: query[name] for name in cls.base_fields if name in query}

    def clean_special_tokens(self) -> list[str]:
        return [line.strip("\r") for line in self.cleaned_data["special_tokens"].split("\n")
                if line.strip()]

    def clean_more_corpora(self) -> list:
        """Names, and ``{"name", "weight"}`` for ``NAME:WEIGHT`` (the service checks the
        bounds and the names)."""
        found = []
        for line in self.cleaned_data["more_corpora"].splitlines():
            name, colon, weight = line.strip().rpartition(":")
            if not colon:
                if weight:
                    found.append(weight)
                continue
            weight = weight.strip()
            if not (weight.isascii() and weight.isdigit()):
                raise forms.ValidationError(f"{line.strip()}: the weight after ':' is a whole "
                                            f"number from 1 to {MAX_CORPUS_WEIGHT}")
            found.append({"name": name.strip(), "weight": int(weight)})
        return found

    def corpora_value(self) -> list:
        """The corpora for ``start_training_run``: the chosen one with its weight, then the
        others."""
        data = self.cleaned_data
        weight = data.get("weight")
        return [{"name": data["corpus"].name, "weight": 1 if weight is None else weight},
                *data.get("more_corpora", [])]

    def clean_sweep(self) -> list[int]:
        sizes = [part.strip() for part in self.cleaned_data["sweep"].split(",") if part.strip()]
        if not all(part.isascii() and part.isdigit() for part in sizes):  # "²".isdigit()
            raise forms.ValidationError("write whole numbers separated by commas")
        return [int(part) for part in sizes]

    def pattern_value(self) -> str:
        data = self.cleaned_data
        if data.get("pattern") == "custom":
            return data.get("custom_pattern", "")
        return data.get("pattern") or "gpt2"

    def run_parameters(self) -> dict:
        """The chosen algorithm's parameters for ``start_training_run`` (the other's fields,
        hidden on the page, are left out, and so is a field the form refused)."""
        data = self.cleaned_data
        algorithm = data.get("algorithm") or DEFAULT_KIND
        common = {"algorithm": algorithm, "vocab_size": data.get("vocab_size"),
                  "special_tokens": data.get("special_tokens"), "sweep": data.get("sweep"),
                  "min_frequency": data.get("min_frequency")}
        values = {"pattern": self.pattern_value(), "split": data.get("split") or None}
        found = {**common, **{name: values[name] if name in values else data.get(name)
                              for name in KINDS[algorithm].parameter_fields}}
        return {name: value for name, value in found.items()
                if name in self.cleaned_data or name in ("algorithm", "split", "pattern")}

    def kind_fieldsets(self):
        """``(kind, its special tokens' default, its fields)`` per kind that trains: the
        page's groups of one kind's fields."""
        return [(kind, DEFAULT_SPECIALS[kind.name],
                 [self[name] for name in KIND_FIELDS[kind.name]]) for kind in TRAINED_KINDS]

    def common_fields(self):
        own = {name for fields in KIND_FIELDS.values() for name in fields}
        return [field for field in self if field.name not in own]


class ExtendForm(forms.Form):
    """An extension run: the parent's pattern, split, options and special tokens are kept, so
    only what it is extended on, and to how many tokens, is asked."""

    extends = forms.CharField(max_length=120, label="Extend version",
                              help_text="NAME@NUMBER: every id of it keeps its token")
    corpus = forms.ModelChoiceField(Corpus.objects.order_by("name"), to_field_name="name",
                                    empty_label=None, help_text="the new language or domain")
    vocab_size = forms.IntegerField(help_text="the new total: the parent's tokens + new ones")
    min_frequency = forms.IntegerField(initial=1, help_text="stop when the best pair is rarer",
                                       widget=forms.NumberInput(attrs={
                                           "min": MIN_FREQUENCY_BOUNDS[0],
                                           "max": MIN_FREQUENCY_BOUNDS[1]}))
    sweep = forms.CharField(required=False, label="Vocabulary sweep",
                            help_text="smaller totals to keep too (byte-level), e.g. 9000")
    clean_sweep = RunForm.clean_sweep


IMPORT_FORMATS = [("", "detect it from the files"),
                  *((name, name) for name in (*FORMATS, *library_formats()))]


class ImportForm(forms.Form):
    """Tokenizer files to import as a version (the files come as ``request.FILES["files"]``)."""

    tokenizer = forms.CharField(max_length=100, help_text="a new name (you then own it), or a "
                                "tokenizer you own to add a version to")
    format = forms.ChoiceField(choices=IMPORT_FORMATS, required=False,
                               help_text="the files' format; most are recognised by their "
                                         "content")
    pattern = forms.ChoiceField(
        choices=[("", "from the files (gpt2 for GPT-2 files)"), *PATTERNS[:-1],
                 *((name, f"tiktoken's {name} (its pattern and special tokens)")
                   for name in PUBLISHED), PATTERNS[-1]],
        required=False, label="Pattern (GPT-2 files and bare rank files only)",
        help_text="vocab.json + merges.txt and a .tiktoken file without its sidecar hold no "
                  "pattern: choose the one the tokenizer was trained with (a published tiktoken "
                  "encoding's file is recognised without it)")
    custom_pattern = forms.CharField(required=False, label="Custom regex",
                                     help_text="its matches must cover the text")
    special_tokens = forms.CharField(
        required=False, label="Special tokens (bare rank files only)",
        widget=forms.TextInput(attrs={"placeholder": '{"<|endoftext|>": 50256}'}),
        help_text="a rank file holds no special tokens: a JSON object of each one's id")

    def pattern_value(self) -> str | None:
        """The pattern given (a name or a regex), or ``None`` to let the files say."""
        data = self.cleaned_data
        if data["pattern"] == "custom":
            return data["custom_pattern"] or None
        return data["pattern"] or None

    def clean(self):
        data = super().clean()
        if data.get("pattern") == "custom" and not data.get("custom_pattern"):
            self.add_error("custom_pattern", "write the regex, or choose a named pattern")
        return data


class VocabRangeForm(forms.Form):
    """The leaderboard's vocab-size range (GET ``min_vocab``, ``max_vocab``, both optional)."""

    min_vocab = forms.IntegerField(required=False, min_value=0, label="Vocab size from")
    max_vocab = forms.IntegerField(required=False, min_value=0, label="to")

    def within(self, evaluations):
        """``evaluations`` of versions whose vocab size is in the range (all when it is not
        valid: the form then says why beside its field)."""
        if not self.is_valid():
            return evaluations
        low, high = self.cleaned_data["min_vocab"], self.cleaned_data["max_vocab"]
        if low is not None:
            evaluations = evaluations.filter(version__vocab_size__gte=low)
        if high is not None:
            evaluations = evaluations.filter(version__vocab_size__lte=high)
        return evaluations
