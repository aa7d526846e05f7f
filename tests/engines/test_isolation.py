from tests.bpe.test_isolation import django_modules_loaded_by


def test_the_engines_import_without_django():
    out = django_modules_loaded_by("engines")
    assert out.startswith("0 "), f"the engines loaded Django modules: {out}"
