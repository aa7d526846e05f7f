"""Bulk row I/O for the rows of a version (``MergeRule``, ``VocabEntry``): COPY in and binary
reads on Postgres, plain SQL elsewhere."""

from __future__ import annotations

from django.db import connection


def q(name: str) -> str:
    return connection.ops.quote_name(name)


def bulk_insert(model, columns: list[str], rows) -> None:
    """Insert many rows fast: COPY on Postgres, ``executemany`` elsewhere."""
    table, names = q(model._meta.db_table), ", ".join(q(c) for c in columns)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            with cursor.cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        else:
            marks = ", ".join(["%s"] * len(columns))
            cursor.executemany(f"INSERT INTO {table} ({names}) VALUES ({marks})", list(rows))


def fetch_rows(sql: str, *params) -> list[tuple]:
    """All rows of a query as tuples; on Postgres in binary form (bytea arrives as bytes, not as
    hex text to decode)."""
    if connection.vendor == "postgresql":
        import psycopg

        connection.ensure_connection()
        with psycopg.Cursor(connection.connection) as cursor:
            cursor.execute(sql, params, binary=True)
            return cursor.fetchall()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()
