"""A small tensor-level reverse-mode autograd on NumPy (float64).

Each operation computes its value and, right beside it, the local
vector-Jacobian product that sends an output gradient back to each parent.
``backward_with_seed`` walks the graph once in reverse topological order and
adds every edge's contribution into its parent, so a tensor used twice (for
example ``x + x``) receives the sum of both edges.

A VJP never writes into the gradient it is given, and for each parent it
returns either that gradient (or a view of it) or an array it has just
allocated and that nothing else holds. The backward pass relies on this: it
adds a second contribution in place only into such a fresh array, so it never
writes into the seed, a leaf's ``.grad`` or a buffer another node still holds,
and the sum is the same float as ``earlier + later``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any, cast

import numpy as np

VJP = Callable[[np.ndarray], Sequence["np.ndarray | None"]]


class AutogradError(Exception):
    """Base class for every error the engine raises on purpose."""


class ShapeError(AutogradError, ValueError):
    """Two operands (or a seed and its tensor) have shapes that do not fit."""

    def __init__(self, message: str, left: tuple[int, ...], right: tuple[int, ...]):
        super().__init__(message)
        self.left = left
        self.right = right


class GraphReleasedError(AutogradError, RuntimeError):
    """A backward pass reached a node whose graph an earlier pass released."""


def shape_text(shape: Iterable[int]) -> str:
    """Render a shape the way every message and record in this project does: ``[2,2]``."""
    return "[" + ",".join(str(int(d)) for d in shape) + "]"


def _as_array(value: object) -> np.ndarray:
    return np.array(value, dtype=np.float64)


def _is_fresh(array: object, given: np.ndarray) -> bool:
    """Whether a VJP's result is a buffer of its own (not the gradient it was given, nor a view)."""
    return type(array) is np.ndarray and array.base is None and array is not given


def unbroadcast(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum ``grad`` back down to ``shape``, undoing NumPy broadcasting."""
    if grad.shape == shape:
        return grad
    extra = grad.ndim - len(shape)
    if extra > 0:
        grad = grad.sum(axis=tuple(range(extra)))
    kept = tuple(i for i, dim in enumerate(shape) if dim == 1 and grad.shape[i] != 1)
    if kept:
        grad = grad.sum(axis=kept, keepdims=True)
    return grad.reshape(shape)


def _axes(axis: object, shape: tuple[int, ...], action: str) -> tuple[int, ...]:
    """``axis`` (None, an int or a tuple of ints, negative from the end) as sorted non-negative axes.

    ``action`` completes "cannot ... shape [..]" in an error message ("sum", "take the max of").
    """
    ndim = len(shape)
    if axis is None:
        return tuple(range(ndim))
    items = axis if isinstance(axis, tuple) else (axis,)
    axes: list[int] = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (int, np.integer)):
            raise TypeError(f"axis must be an int or a tuple of ints, got {axis!r}")
        if not -ndim <= item < ndim:
            raise ShapeError(
                f"cannot {action} shape {shape_text(shape)} over axis {int(item)}: it has {ndim} axes", shape, ()
            )
        axes.append(int(item) % ndim)
    if len(set(axes)) != len(axes):
        raise ShapeError(f"cannot {action} shape {shape_text(shape)} over axis {axis!r}: an axis repeats", shape, ())
    return tuple(sorted(axes))


def _kept_shape(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, ...]:
    """``shape`` with each reduced axis kept as a 1: the shape a keepdims reduction returns."""
    return tuple(1 if i in axes else d for i, d in enumerate(shape))


def _check_matmul(a: tuple[int, ...], b: tuple[int, ...]) -> None:
    """Raise a ShapeError naming both shapes unless NumPy's matmul accepts them."""

    def fail(why: str) -> ShapeError:
        return ShapeError(f"cannot matmul shapes {shape_text(a)} and {shape_text(b)}: {why}", a, b)

    if not a or not b:
        raise fail("each operand needs at least one axis (multiply by a scalar with *)")
    inner = b[-2] if len(b) >= 2 else b[0]
    if a[-1] != inner:
        raise fail(f"inner dimensions must agree ({a[-1]} != {inner})")
    # One side without batch axes, or equal batch axes, always broadcasts; only unequal ones need the check.
    if len(a) > 2 and len(b) > 2 and a[:-2] != b[:-2]:
        try:
            np.broadcast_shapes(a[:-2], b[:-2])
        except ValueError:
            raise fail(f"batch dimensions {shape_text(a[:-2])} and {shape_text(b[:-2])} do not broadcast") from None


class Tensor:
    """A float64 array that remembers how it was computed."""

    __slots__ = ("data", "grad", "name", "requires_grad", "op", "_parents", "_vjp")

    # Make NumPy defer to our reflected operators: without this, ``ndarray + Tensor``
    # silently builds an object array of Tensors and the gradient is lost.
    __array_ufunc__ = None

    def __init__(
        self,
        data: object,
        *,
        name: str | None = None,
        requires_grad: bool = False,
        op: str = "leaf",
        parents: tuple[Tensor, ...] = (),
        vjp: VJP | None = None,
    ) -> None:
        self.data: np.ndarray = _as_array(data)
        self.grad: np.ndarray | None = None
        self.name = name
        self.requires_grad = requires_grad
        self.op = op
        self._parents = parents
        self._vjp = vjp

    # ------------------------------------------------------------------ basics
    @property
    def shape(self) -> tuple[int, ...]:
        return self.data.shape

    @property
    def is_leaf(self) -> bool:
        return not self._parents

    @property
    def parents(self) -> tuple[Tensor, ...]:
        return self._parents

    def numpy(self) -> np.ndarray:
        return self.data.copy()

    @property
    def gradient(self) -> np.ndarray:
        """``.grad`` once a backward pass has reached this tensor: an array, never ``None``.

        ``.grad`` is ``None`` until then; reading ``.gradient`` before it is an :class:`AutogradError` that names
        the tensor, rather than a ``None`` found later inside an arithmetic expression.
        """
        if self.grad is None:
            raise AutogradError(f"{self!r} has no gradient: no backward pass has reached it")
        return self.grad

    def zero_grad(self) -> None:
        self.grad = None

    def __repr__(self) -> str:
        label = f" name={self.name!r}" if self.name else ""
        return f"Tensor(shape={shape_text(self.shape)}, op={self.op}{label})"

    # ------------------------------------------------------------ construction
    @staticmethod
    def _lift(value: Tensor | object) -> Tensor:
        return value if isinstance(value, Tensor) else Tensor(value)

    def _make(self, data: np.ndarray, op: str, parents: tuple[Tensor, ...], vjp: VJP) -> Tensor:
        """An op's result: tracked (keeping ``parents`` and ``vjp``) when any parent is, a constant otherwise.

        ``data`` is the op's own new array, so it is kept as it is, not copied.
        """
        out = _new_tensor(Tensor)
        # An op on 0-d arrays returns a NumPy scalar; every tensor holds an ndarray.
        out.data = data if type(data) is np.ndarray else np.asarray(data, dtype=np.float64)
        out.grad = None
        out.name = None
        out.op = op
        for parent in parents:
            if parent.requires_grad:
                out.requires_grad = True
                out._parents = parents
                out._vjp = vjp
                return out
        out.requires_grad = False
        out._parents = ()
        out._vjp = None
        return out

    # -------------------------------------------------------------------- ops
    def __add__(self, other: Tensor | object) -> Tensor:
        other = Tensor._lift(other)
        try:
            out = self.data + other.data
        except ValueError:
            raise ShapeError(
                f"cannot add shapes {shape_text(self.shape)} and {shape_text(other.shape)}: they do not broadcast",
                self.shape,
                other.shape,
            ) from None
        a_shape, b_shape = self.shape, other.shape
        return self._make(out, "add", (self, other), lambda g: (unbroadcast(g, a_shape), unbroadcast(g, b_shape)))

    __radd__ = __add__

    def __neg__(self) -> Tensor:
        return self._make(-self.data, "neg", (self,), lambda g: (-g,))

    def __sub__(self, other: Tensor | object) -> Tensor:
        other = Tensor._lift(other)
        try:
            out = self.data - other.data
        except ValueError:
            raise ShapeError(
                f"cannot subtract shape {shape_text(other.shape)} from {shape_text(self.shape)}: they do not broadcast",
                self.shape,
                other.shape,
            ) from None
        a_shape, b_shape = self.shape, other.shape
        return self._make(out, "sub", (self, other), lambda g: (unbroadcast(g, a_shape), -unbroadcast(g, b_shape)))

    def __rsub__(self, other: object) -> Tensor:
        return Tensor._lift(other) - self

    def __mul__(self, other: Tensor | object) -> Tensor:
        if type(other) is float or type(other) is int:
            return self.scale(other)
        if not isinstance(other, Tensor) and np.ndim(cast(Any, other)) == 0:
            return self.scale(float(cast(Any, other)))
        other = Tensor._lift(other)
        try:
            out = self.data * other.data
        except ValueError:
            raise ShapeError(
                f"cannot multiply shapes {shape_text(self.shape)} and {shape_text(other.shape)} "
                "elementwise: they do not broadcast",
                self.shape,
                other.shape,
            ) from None
        a, b = self.data, other.data
        a_shape, b_shape = self.shape, other.shape
        need_a, need_b = self.requires_grad, other.requires_grad
        return self._make(
            out,
            "mul",
            (self, other),
            lambda g: (
                unbroadcast(g * b, a_shape) if need_a else None,
                unbroadcast(g * a, b_shape) if need_b else None,
            ),
        )

    __rmul__ = __mul__

    def scale(self, factor: float) -> Tensor:
        """Multiply by a plain Python number (a constant, not a tracked tensor)."""
        factor = float(factor)
        return self._make(self.data * factor, "scale", (self,), lambda g: (g * factor,))

    def __pow__(self, exponent: float) -> Tensor:
        if isinstance(exponent, Tensor) or np.ndim(exponent) != 0:
            raise TypeError("Tensor ** p supports a plain number exponent only")
        p = float(exponent)
        a = self.data
        return self._make(a**p, f"pow{p:g}", (self,), lambda g: (g * p * a ** (p - 1.0),))

    def square(self) -> Tensor:
        a = self.data
        return self._make(a * a, "square", (self,), lambda g: (g * 2.0 * a,))

    def __truediv__(self, other: Tensor | object) -> Tensor:
        if not isinstance(other, Tensor) and np.ndim(cast(Any, other)) == 0:
            divisor = float(cast(Any, other))
            return self._make(self.data / divisor, "div", (self,), lambda g: (g / divisor,))
        other = Tensor._lift(other)
        try:
            out = self.data / other.data
        except ValueError:
            raise ShapeError(
                f"cannot divide shape {shape_text(self.shape)} by {shape_text(other.shape)}: they do not broadcast",
                self.shape,
                other.shape,
            ) from None
        b = other.data
        a_shape, b_shape = self.shape, other.shape
        need_a, need_b = self.requires_grad, other.requires_grad
        return self._make(
            out,
            "div",
            (self, other),
            lambda g: (
                unbroadcast(g / b, a_shape) if need_a else None,
                unbroadcast(-(g * out) / b, b_shape) if need_b else None,  # d(a/b)/db = -(a/b)/b
            ),
        )

    def __rtruediv__(self, other: object) -> Tensor:
        return Tensor._lift(other) / self

    # ------------------------------------------------------------------ matmul
    def __matmul__(self, other: Tensor | object) -> Tensor:
        """NumPy's matmul: vectors, matrices, and stacks of matrices whose batch axes broadcast."""
        other = Tensor._lift(other)
        a, b = self.data, other.data
        _check_matmul(a.shape, b.shape)
        out = a @ b
        need_a, need_b = self.requires_grad, other.requires_grad

        if a.ndim <= 2 and b.ndim <= 2:

            def vjp(g: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
                if a.ndim == 1 and b.ndim == 1:  # dot product, g is a scalar
                    return g * b if need_a else None, g * a if need_b else None
                if a.ndim == 1:  # [n] @ [n,m] -> [m]
                    return g @ b.T if need_a else None, np.outer(a, g) if need_b else None
                if b.ndim == 1:  # [k,n] @ [n] -> [k]
                    return np.outer(g, b) if need_a else None, a.T @ g if need_b else None
                return g @ b.T if need_a else None, a.T @ g if need_b else None  # [k,n] @ [n,m] -> [k,m]

            return self._make(out, "matmul", (self, other), vjp)

        def batched_vjp(g: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
            # A vector operand is a one-row (left) or one-column (right) matrix, as NumPy treats it.
            a2 = a[np.newaxis, :] if a.ndim == 1 else a
            b2 = b[:, np.newaxis] if b.ndim == 1 else b
            g2 = np.expand_dims(g, -2) if a.ndim == 1 else g
            g2 = np.expand_dims(g2, -1) if b.ndim == 1 else g2
            grad_a = grad_b = None
            if need_a:
                grad_a = unbroadcast(g2 @ b2.swapaxes(-1, -2), a2.shape)
                grad_a = grad_a.reshape(a.shape) if a.ndim == 1 else grad_a
            if need_b:
                if b2.ndim == 2:  # one matrix for every batch row: a single product sums over all of them
                    grad_b = a2.reshape(-1, a2.shape[-1]).T @ g2.reshape(-1, g2.shape[-1])
                else:
                    grad_b = unbroadcast(a2.swapaxes(-1, -2) @ g2, b2.shape)
                grad_b = grad_b.reshape(b.shape) if b.ndim == 1 else grad_b
            return grad_a, grad_b

        return self._make(out, "matmul", (self, other), batched_vjp)

    # -------------------------------------------------------------- reductions
    def sum(self, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Tensor:
        """Sum over ``axis`` (an int, a tuple of ints, negative counting from the end; None: all)."""
        a_shape = self.shape
        if axis is None:
            out, axes = self.data.sum(keepdims=keepdims), tuple(range(len(a_shape)))
        else:
            axes = _axes(axis, a_shape, "sum")
            out = self.data.sum(axis=axes, keepdims=keepdims)
        kept = _kept_shape(a_shape, axes)

        def vjp(g: np.ndarray) -> tuple[np.ndarray]:
            grad = np.empty(a_shape)
            grad[...] = g.reshape(kept)  # g copied along every summed axis
            return (grad,)

        return self._make(out, "sum" if axis is None else "sum" + ",".join(map(str, axes)), (self,), vjp)

    def mean(self, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Tensor:
        """The sum over ``axis`` divided by how many elements it adds (the float ``np.mean`` gives)."""
        axes = _axes(axis, self.shape, "take the mean of")
        count = math.prod(self.shape[i] for i in axes)
        if count == 0:
            raise ShapeError(
                f"cannot take the mean of shape {shape_text(self.shape)} over axis {axis}: it has no elements",
                self.shape,
                (),
            )
        return self.sum(axis, keepdims) / count

    def max(self, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Tensor:
        """The largest element over ``axis``.

        The gradient goes to one element only: where the maximum occurs more than
        once, to the first occurrence in row-major order over the reduced axes
        (the element ``np.argmax`` picks).
        """
        a = self.data
        axes = _axes(axis, a.shape, "take the max of")
        if any(a.shape[i] == 0 for i in axes):
            raise ShapeError(
                f"cannot take the max of shape {shape_text(a.shape)} over axis {axis}: it has no elements",
                a.shape,
                (),
            )

        def vjp(g: np.ndarray) -> tuple[np.ndarray]:
            kept = [i for i in range(a.ndim) if i not in axes]
            rows = np.transpose(a, kept + list(axes)).reshape([a.shape[i] for i in kept] + [-1])
            first = np.zeros(rows.shape, dtype=bool)
            np.put_along_axis(first, rows.argmax(axis=-1)[..., np.newaxis], True, axis=-1)
            mask = first.reshape([a.shape[i] for i in kept + list(axes)]).transpose(np.argsort(kept + list(axes)))
            return (np.where(mask, g.reshape(_kept_shape(a.shape, axes)), 0.0),)

        return self._make(a.max(axis=axes, keepdims=keepdims), "max", (self,), vjp)

    # ------------------------------------------------------- elementwise maps
    def tanh(self) -> Tensor:
        t = np.tanh(self.data)
        return self._make(t, "tanh", (self,), lambda g: (g * (1.0 - t * t),))

    def relu(self) -> Tensor:
        a = self.data
        # np.maximum, not data * mask: -inf * 0 is nan and -1 * 0 is -0.0.
        return self._make(np.maximum(a, 0.0), "relu", (self,), lambda g: (g * (a > 0.0),))

    def exp(self) -> Tensor:
        out = np.exp(self.data)
        return self._make(out, "exp", (self,), lambda g: (g * out,))

    def log(self) -> Tensor:
        """Natural logarithm (NumPy's: -inf at 0, nan below)."""
        a = self.data
        return self._make(np.log(a), "log", (self,), lambda g: (g / a,))

    def sqrt(self) -> Tensor:
        out = np.sqrt(self.data)
        return self._make(out, "sqrt", (self,), lambda g: (g / (2.0 * out),))

    def sigmoid(self) -> Tensor:
        """1 / (1 + e^-x), computed from e^-|x| so no exponential overflows."""
        a = self.data
        e = np.exp(-np.abs(a))
        out = np.where(a >= 0.0, 1.0 / (1.0 + e), e / (1.0 + e))
        return self._make(out, "sigmoid", (self,), lambda g: (g * (out * (1.0 - out)),))

    # ---------------------------------------------------------- shape and index
    def reshape(self, *shape: int | Sequence[int]) -> Tensor:
        """The same elements in row-major order under a new shape (``-1`` once: inferred)."""
        dims = shape[0] if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)) else shape
        target = tuple(int(d) for d in cast(Sequence[int], dims))
        a_shape = self.shape
        try:
            out = self.data.reshape(target)
        except ValueError:
            raise ShapeError(
                f"cannot reshape shape {shape_text(a_shape)} ({self.data.size} elements) into {shape_text(target)}",
                a_shape,
                target,
            ) from None
        return self._make(out, "reshape", (self,), lambda g: (g.reshape(a_shape),))

    def transpose(self) -> Tensor:
        """Swap the last two axes: a matrix's transpose, or each matrix's in a stack of them."""
        if self.data.ndim < 2:
            raise ShapeError(
                f"transpose swaps the last two axes, but shape {shape_text(self.shape)} has fewer than two",
                self.shape,
                (),
            )
        out = np.swapaxes(self.data, -1, -2)
        return self._make(out, "transpose", (self,), lambda g: (np.swapaxes(g, -1, -2),))

    @property
    def T(self) -> Tensor:
        return self.transpose()

    def __getitem__(self, index: object) -> Tensor:
        """NumPy indexing: ints, slices, integer or boolean arrays, and tuples of them.

        The gradient scatters back to the positions read; a position read
        more than once (a repeated index) collects every read's gradient.
        """
        parts = index if isinstance(index, tuple) else (index,)
        if any(isinstance(part, Tensor) for part in parts):
            raise TypeError("index a Tensor with ints, slices or integer arrays, not with a Tensor (use its .data)")
        a_shape = self.shape
        try:
            out = self.data[cast(Any, index)]
        except IndexError as error:
            raise IndexError(f"cannot index shape {shape_text(a_shape)} with {index!r}: {error}") from None

        def vjp(g: np.ndarray) -> tuple[np.ndarray]:
            grad = np.zeros(a_shape)
            np.add.at(grad, index, g)  # type: ignore[arg-type]  # any index the forward took
            return (grad,)

        return self._make(out, "index", (self,), vjp)

    def detach(self) -> Tensor:
        """The same values as a constant: nothing flows back through it."""
        return self._make(self.data, "detach", (), lambda g: ())

    # --------------------------------------------------------------- backward
    def backward(self) -> None:
        """Back-propagate from a scalar with seed 1 and release the graph."""
        if self.data.size != 1:
            raise ShapeError(
                f"backward() needs a scalar, got shape {shape_text(self.shape)}; "
                "use backward_with_seed(seed) for a tensor output",
                self.shape,
                (),
            )
        self.backward_with_seed(np.ones_like(self.data), retain_graph=False)

    def backward_with_seed(self, seed: object, *, retain_graph: bool = False) -> None:
        """Back-propagate ``seed`` (the upstream gradient, same shape as this tensor)."""
        seed_array = np.asarray(seed, dtype=np.float64)  # read, never written: no copy needed
        if seed_array.shape != self.data.shape:
            raise ShapeError(
                f"seed shape {shape_text(seed_array.shape)} does not match tensor shape {shape_text(self.shape)}",
                seed_array.shape,
                self.shape,
            )
        if not self.requires_grad:
            raise AutogradError(f"{self!r} does not require a gradient: nothing to back-propagate")
        order = self._topological_order()
        grads: dict[int, np.ndarray] = {id(self): seed_array}
        owned: set[int] = set()  # nodes whose pending gradient is a fresh buffer nothing else holds
        for node in order:
            key = id(node)
            g = grads.pop(key, None)
            if g is None:
                continue
            parents = node._parents
            if not parents:  # a leaf
                if node.grad is not None:
                    node.grad = node.grad + g
                elif key in owned:
                    node.grad = g
                else:
                    node.grad = np.array(g, dtype=np.float64)  # a copy: g may be the seed or shared
                continue
            vjp = node._vjp
            if vjp is None:
                raise GraphReleasedError(
                    f"the graph through {node!r} was already released by an earlier backward; "
                    "pass retain_graph=True to the first backward to run another"
                )
            for parent, pg in zip(parents, vjp(g)):
                if pg is None or not parent.requires_grad:
                    continue
                pkey = id(parent)
                earlier = grads.get(pkey)
                if earlier is None:
                    grads[pkey] = pg
                    if _is_fresh(pg, g):
                        owned.add(pkey)
                elif pkey in owned:
                    np.add(earlier, pg, out=earlier)
                elif _is_fresh(pg, g):
                    grads[pkey] = np.add(pg, earlier, out=pg)  # addition commutes: the bits of earlier + pg
                    owned.add(pkey)
                else:
                    total = earlier + pg
                    grads[pkey] = total
                    if type(total) is np.ndarray:
                        owned.add(pkey)
        if not retain_graph:
            for node in order:
                if node._parents:
                    node._vjp = None

    def leaves(self) -> list[Tensor]:
        """The leaves of this tensor's graph that collect a gradient: its parameters and tracked inputs."""
        return [node for node in self._topological_order() if node.is_leaf and node.requires_grad]

    def _topological_order(self) -> list[Tensor]:
        """Nodes reachable from self, each after every node that uses it.

        A depth-first search that marks a node when it is expanded; the ``None``
        pushed above a node says "its parents are all placed: place it next".
        """
        order: list[Tensor] = []
        seen: set[int] = set()
        stack: list[Tensor | None] = [self]
        while stack:
            node = stack.pop()
            if node is None:
                order.append(stack.pop())  # type: ignore[arg-type]  # a None marker always follows its node
                continue
            if id(node) in seen:
                continue
            seen.add(id(node))
            stack.append(node)
            stack.append(None)
            for parent in node._parents:
                if parent.requires_grad and id(parent) not in seen:
                    stack.append(parent)
        order.reverse()
        return order


_new_tensor = object.__new__


# region: concat
def concat(tensors: Sequence[Tensor], axis: int = -1) -> Tensor:
    """Join tensors along ``axis`` (every other axis must agree), as ``np.concatenate`` does.

    The gradient splits back into one slice per operand; a tensor listed twice
    collects both slices.
    """
    parts = [Tensor._lift(t) for t in tensors]
    if not parts:
        raise ShapeError("concat needs at least one tensor", (), ())
    shapes = [p.shape for p in parts]
    ndim = len(shapes[0])
    if ndim == 0 or any(len(s) != ndim for s in shapes):
        raise ShapeError(
            f"concat needs tensors with the same number of axes (at least one), got {', '.join(shape_text(s) for s in shapes)}",
            shapes[0],
            shapes[-1],
        )
    if not -ndim <= axis < ndim:
        raise ShapeError(
            f"cannot concat shape {shape_text(shapes[0])} along axis {axis}: it has {ndim} axes", shapes[0], ()
        )
    axis %= ndim
    for s in shapes[1:]:
        if s[:axis] + s[axis + 1 :] != shapes[0][:axis] + shapes[0][axis + 1 :]:
            raise ShapeError(
                f"cannot concat shapes {shape_text(shapes[0])} and {shape_text(s)} along axis {axis}: "
                "every other axis must agree",
                shapes[0],
                s,
            )
    ends = np.cumsum([s[axis] for s in shapes])[:-1]

    def vjp(g: np.ndarray) -> list[np.ndarray]:
        return np.split(g, ends, axis=axis)  # views of g, one per operand

    return parts[0]._make(np.concatenate([p.data for p in parts], axis=axis), "concat", tuple(parts), vjp)


# endregion: concat


def tensor(data: object, *, name: str | None = None) -> Tensor:
    """A constant: no gradient is tracked for it."""
    return Tensor(data, name=name, requires_grad=False)


def parameter(data: object, *, name: str) -> Tensor:
    """A named leaf that collects a gradient."""
    return Tensor(data, name=name, requires_grad=True)
