"""The command-line interface: thin Typer commands over library calls."""
