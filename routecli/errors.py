"""User-facing errors: the CLI prints their message as one line on stderr and exits with 2."""


class RoutecliError(Exception):
    """Base of every error caused by user input (files, options)."""


class InstanceFormatError(RoutecliError):
    """An instance or solution file is malformed or describes an impossible instance."""


class OptionError(RoutecliError):
    """A command-line option has a bad value."""
