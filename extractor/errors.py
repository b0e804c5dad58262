"""archdiff's own exceptions: third-party failures are translated into these at one boundary."""

from __future__ import annotations


class ArchdiffError(Exception):
    """A failure the user can act on; the CLI prints it on one line and exits with ``exit_code``."""

    exit_code = 1


class UserInputError(ArchdiffError):
    """Bad user input: a spec of no known form, a missing ref, an unreachable index, a corrupt
    evidence file. Exit code 2."""

    exit_code = 2


class EvidenceFormatError(UserInputError):
    """An evidence file that is not valid JSON, not archdiff's, or of another schema version."""


class StorageError(ArchdiffError):
    """An output or cache directory that cannot take what the run must write (full, read-only,
    not permitted). Exit code 2: the user must free space or choose another directory."""

    exit_code = 2
