"""Errors the command-line tools report as one clear line and a non-zero exit."""


class PeRuntimeError(Exception):
    """A problem with the user's input or the run (bad factory, plan, port, child process)."""

    exit_code = 1


class UsageError(PeRuntimeError):
    """Bad command-line usage: exit code 2, as pe-plan's."""

    exit_code = 2
