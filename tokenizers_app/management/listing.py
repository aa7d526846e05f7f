"""What the read commands share: ``--json`` for scripts (the API's shapes, ``shapes``), a table
otherwise, and one line for an error."""

import json

from django.core.management.base import BaseCommand
from pydantic import BaseModel

from .errors import refusals_as_command_errors


class ReadCommand(BaseCommand):
    """A command that prints records: ``handle_read`` returns shapes (or a list of them),
    ``table`` turns their data into lines for people."""

    def add_arguments(self, parser):
        parser.add_argument("--json", action="store_true", help="print JSON (for scripts)")

    def handle(self, *args, **options):
        with refusals_as_command_errors():
            data = plain(self.handle_read(**options))
        if options["json"]:
            self.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str))
        else:
            for line in self.table(data):
                self.stdout.write(line)

    def handle_read(self, **options):
        raise NotImplementedError

    def table(self, data) -> list[str]:
        raise NotImplementedError


def plain(data):
    """A shape as its data (dicts, lists, numbers, text, datetimes); a list of them too."""
    if isinstance(data, list):
        return [plain(item) for item in data]
    return data.model_dump() if isinstance(data, BaseModel) else data


def columns(rows: list[list], headings: list[str]) -> list[str]:
    """Rows as aligned text columns under their headings."""
    cells = [headings] + [["" if c is None else str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headings))]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip()
            for row in cells]
