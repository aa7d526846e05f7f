"""Workflows that span the models, the BPE core and the queue: one module per thing a user does.

- ``corpora``: store an uploaded corpus (streamed, hashed and checked on the way).
- ``runs``: start, cancel and execute training runs, and the reaper for silent workers.
- ``attempts``: what one attempt at a run shares with the fan-out: progress, outcome, saving.
- ``fanout``: counting a large corpus in byte ranges on several workers.
- ``versions``: add and import versions.
- ``staff``: publish, deprecate and annotate versions, move aliases (staff only).
- ``downloads``: render a version's files in a format, once per digest, and the served file.
- ``evaluations``: queue, compute and reap evaluations.

Each workflow is a keyword-only function named verb-first. What it refuses it raises as one of
the classes of ``tokenizers_app.errors``, where it finds the condition, with a message a person
can act on: bad input ``Invalid`` (naming its field) before any row is written, an unknown name
``NotFound``, a name taken ``Conflict``, a staff-only action by anyone else ``Forbidden``, a
corpus over the cap ``TooLarge``, a full disk ``NoRoom``, a silent queue ``QueueUnavailable``
(its rows kept); the core's own ``ValueError`` names the bad value. Tasks call the ``execute_*``/``count_*``/``merge_*``/``run_*``
functions with ids; commands, the admin, the API and the dashboard call the rest.
"""
