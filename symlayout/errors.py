"""Exceptions raised by symlayout.

Every error a user can cause is a :class:`SymlayoutError` subclass whose
message is one line naming the operation/location and the problem.

>>> from symlayout.errors import SymlayoutError, NotationError
>>> issubclass(NotationError, SymlayoutError)
True
"""


class SymlayoutError(Exception):
    """Base class of all user-facing symlayout errors (one-line message)."""


class NotationError(SymlayoutError):
    """Malformed CuTe notation; the message names the column."""


class AlgebraError(SymlayoutError):
    """A layout-algebra operation was given operands CuTe would reject."""


class ConditionError(AlgebraError):
    """A side condition of an operation is decidably false."""


class AtomError(SymlayoutError):
    """Unknown atom/type, or an atom used with an incompatible value type."""


class TilingError(SymlayoutError):
    """A tile does not divide, or a tiled copy/MMA cannot be built."""


class ConfigError(SymlayoutError):
    """A configuration file is malformed; the message names file and line."""


class CuteStaticAssert(AtomError, TilingError):
    """CuTe refuses to compile the construction: one of its ``static_assert``\\ s fires.

    ``assertion`` is CuTe's own message (e.g. ``"TiledCopy uses too few vals for
    selected CopyAtom"``); ``side`` is ``"src"``, ``"dst"`` or ``None``: which
    tensor of the copy the failing check is about.  The prover reports such a
    configuration as a refutation of the property that explains the failure
    (:func:`symlayout.prove.model.explain_rejection`), never as an input error.
    """

    def __init__(self, message: str, assertion: str, side: str | None = None):
        super().__init__(message)
        self.assertion = assertion
        self.side = side
