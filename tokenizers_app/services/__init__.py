"""Workflows that span the models, the BPE core and the queue: one module per thing a user does.

- ``corpora``: store an uploaded corpus (streamed, hashed and checked on the way).
- ``runs``: start, cancel and execute training runs, and the reaper for silent workers.
- ``attempts``: what one attempt at a run shares with the fan-out: progress, outcome, saving.
- ``fanout``: counting a large corpus in byte ranges on several workers.
- ``versions``: add and import versions.
- ``staff``: publish, deprecate and annotate versions, move aliases (staff only).
- ``downloads``: render a version's files in a format, once per digest, and the served file.
- ``evaluations``: queue, compute and reap evaluations.

Each workflow is a keyword-only function named verb-first. Bad input raises ``ValueError`` with
a message a person can act on, before any row is written; a staff-only action by anyone else
raises ``PermissionDenied``. Tasks call the ``execute_*``/``count_*``/``merge_*``/``run_*``
functions with ids; commands, the admin, the API and the dashboard call the rest.
"""
