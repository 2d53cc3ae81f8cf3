"""The Django app of the Django recipes of tests/clients: docs/clients.md's models."""
