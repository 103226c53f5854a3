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
    (:func:`symlayout.prove.copy.model.explain_rejection`), never as an input error.
    """

    def __init__(self, message: str, assertion: str, side: str | None = None):
        super().__init__(message)
        self.assertion = assertion
        self.side = side


class ArgumentTypeError(SymlayoutError, TypeError):
    """An API function was called with an argument of the wrong type (one line naming it)."""


class ArgumentValueError(SymlayoutError, ValueError):
    """An API function was called with an argument value it does not accept (one line naming it)."""


#: characters a terminal acts on instead of showing: C0/C1 controls (ESC starts colour, cursor and "hide"
#: sequences), DEL, and the bidirectional overrides that reorder what follows
_UNPRINTABLE = {c for c in range(0x20)} | {c for c in range(0x7F, 0xA0)} | set(range(0x202A, 0x202F)) | \
    set(range(0x2066, 0x206A))


def printable(text, keep_newlines: bool = False) -> str:
    """``text`` with the characters a terminal would act on written as Python escapes.

    Names, paths and values from the user reach the terminal through this, so a ``name`` holding
    ``\\x1b[8m`` cannot hide the report.

    >>> printable("a\\x1b[8mb\\tc"), printable("x\\ny", keep_newlines=True), printable("caf\\u00e9")
    ('a\\\\x1b[8mb\\\\tc', 'x\\ny', 'café')
    """
    s = str(text)
    if not any(ord(c) in _UNPRINTABLE for c in s):
        return s
    return "".join(c if ord(c) not in _UNPRINTABLE or (keep_newlines and c == "\n") else
                   (repr(c)[1:-1] if ord(c) < 0x100 else f"\\u{ord(c):04x}") for c in s)
