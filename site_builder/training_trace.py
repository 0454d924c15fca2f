"""What the traces of the training pages record: the task, and the losses of the stacks they train.

Apart from :mod:`site_builder.tasks` (which trains, and so imports NumPy and
the engine) so that a page's trace declarations load without NumPy: rendering
a page from its cached fixture results never imports it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from .trace import Int, Real, Sci, record

if TYPE_CHECKING:
    import dataclasses

    # What a type checker knows of the records loss_records declares: their loss fields are named when the page's
    # trace.py runs, so they are given as keywords and read back with getattr. A page's trace.py declares them with
    # ``Curve, Final = loss_records(...)`` and, for the type checker, imports these under the same names.

    class CurveLine:
        """A CURVE line: the step, then one loss per trained stack."""

        __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]
        step: int

        def __init__(self, step: int, /, **losses: float) -> None: ...

    class FinalLine:
        """A FINAL line: the seed, then one loss per trained stack."""

        __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]
        seed: int

        def __init__(self, seed: int, /, **losses: float) -> None: ...


@record("TASK")
class TaskRecord:
    """The task as a trace records it: the spirals' constants, and the loss of a model that has learned nothing."""

    points_per_arm: Int
    turns: Real
    noise: Real
    inner_radius: Real
    seed: Int
    chance_loss: Real  # ln 2: both classes get the same score


def loss_records(columns: Sequence[str], *, per: str, module: str) -> tuple[type[CurveLine], type[FinalLine]]:
    """A training page's CURVE and FINAL records, declared in ``module``: after the step or the seed that tells
    their lines apart, one loss (``Sci``) per trained stack, a field per name in ``columns`` in that order.

    CURVE (one line per recorded step) holds the mean training loss over the seeds at that step; FINAL (one line
    per seed) that seed's training loss after the last update.
    """

    def declare(name: str, kind: str, index: str, doc: str) -> Any:
        namespace = {
            "__module__": module,
            "__qualname__": name,
            "__doc__": doc,
            "__annotations__": {index: Int, **{column: Sci for column in columns}},
        }
        return record(kind, index=index)(type(name, (), namespace))

    return (
        declare(
            "Curve",
            "CURVE",
            "step",
            f"The mean training loss over the seeds at one recorded step, one field per {per}.",
        ),
        declare("Final", "FINAL", "seed", f"One seed's training loss after the last update, one field per {per}."),
    )
