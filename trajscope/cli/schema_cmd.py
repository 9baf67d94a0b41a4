"""`trajscope schema`."""
import click

from trajscope.format import json_schema_text


@click.command("schema")
def command() -> None:
    """Print the JSON Schema of one line of a canonical trajectory log (format v1)."""
    click.echo(json_schema_text(), nl=False)
