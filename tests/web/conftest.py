"""The dashboard tests use the ``registry_data`` fixture of tests/conftest.py."""
