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

from typing import Callable, Iterable, Sequence

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
        parents: tuple["Tensor", ...] = (),
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
    def parents(self) -> tuple["Tensor", ...]:
        return self._parents

    def numpy(self) -> np.ndarray:
        return self.data.copy()

    def zero_grad(self) -> None:
        self.grad = None

    def __repr__(self) -> str:
        label = f" name={self.name!r}" if self.name else ""
        return f"Tensor(shape={shape_text(self.shape)}, op={self.op}{label})"

    # ------------------------------------------------------------ construction
    @staticmethod
    def _lift(value: "Tensor | object") -> "Tensor":
        return value if isinstance(value, Tensor) else Tensor(value)

    def _make(self, data: np.ndarray, op: str, parents: tuple["Tensor", ...], vjp: VJP) -> "Tensor":
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
    def __add__(self, other: "Tensor | object") -> "Tensor":
        other = Tensor._lift(other)
        try:
            out = self.data + other.data
        except ValueError:
            raise ShapeError(
                f"cannot add shapes {shape_text(self.shape)} and {shape_text(other.shape)}: "
                "they do not broadcast",
                self.shape,
                other.shape,
            ) from None
        a_shape, b_shape = self.shape, other.shape
        return self._make(
            out, "add", (self, other), lambda g: (unbroadcast(g, a_shape), unbroadcast(g, b_shape))
        )

    __radd__ = __add__

    def __neg__(self) -> "Tensor":
        return self._make(-self.data, "neg", (self,), lambda g: (-g,))

    def __sub__(self, other: "Tensor | object") -> "Tensor":
        other = Tensor._lift(other)
        try:
            out = self.data - other.data
        except ValueError:
            raise ShapeError(
                f"cannot subtract shape {shape_text(other.shape)} from {shape_text(self.shape)}: "
                "they do not broadcast",
                self.shape,
                other.shape,
            ) from None
        a_shape, b_shape = self.shape, other.shape
        return self._make(
            out, "sub", (self, other), lambda g: (unbroadcast(g, a_shape), -unbroadcast(g, b_shape))
        )

    def __rsub__(self, other: object) -> "Tensor":
        return Tensor._lift(other) - self

    def __mul__(self, other: "Tensor | object") -> "Tensor":
        if type(other) is float or type(other) is int:
            return self.scale(other)
        if not isinstance(other, Tensor) and np.ndim(other) == 0:
            return self.scale(float(other))  # type: ignore[arg-type]
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

    def scale(self, factor: float) -> "Tensor":
        """Multiply by a plain Python number (a constant, not a tracked tensor)."""
        factor = float(factor)
        return self._make(self.data * factor, "scale", (self,), lambda g: (g * factor,))

    def __pow__(self, exponent: float) -> "Tensor":
        if isinstance(exponent, Tensor) or np.ndim(exponent) != 0:
            raise TypeError("Tensor ** p supports a plain number exponent only")
        p = float(exponent)
        a = self.data
        return self._make(a**p, f"pow{p:g}", (self,), lambda g: (g * p * a ** (p - 1.0),))

    def square(self) -> "Tensor":
        a = self.data
        return self._make(a * a, "square", (self,), lambda g: (g * 2.0 * a,))

    def __matmul__(self, other: "Tensor | object") -> "Tensor":
        other = Tensor._lift(other)
        a, b = self.data, other.data
        if a.ndim not in (1, 2) or b.ndim not in (1, 2) or a.shape[-1] != b.shape[0]:
            raise ShapeError(
                f"cannot matmul shapes {shape_text(a.shape)} and {shape_text(b.shape)}: "
                "inner dimensions must agree (vector or matrix operands only)",
                self.shape,
                other.shape,
            )
        out = a @ b
        need_a, need_b = self.requires_grad, other.requires_grad

        def vjp(g: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
            if a.ndim == 1 and b.ndim == 1:  # dot product, g is a scalar
                return g * b if need_a else None, g * a if need_b else None
            if a.ndim == 1:  # [n] @ [n,m] -> [m]
                return g @ b.T if need_a else None, np.outer(a, g) if need_b else None
            if b.ndim == 1:  # [k,n] @ [n] -> [k]
                return np.outer(g, b) if need_a else None, a.T @ g if need_b else None
            return g @ b.T if need_a else None, a.T @ g if need_b else None  # [k,n] @ [n,m] -> [k,m]

        return self._make(out, "matmul", (self, other), vjp)

    def sum(self, axis: int | None = None) -> "Tensor":
        a_shape = self.shape
        # The gradient is a read-only broadcast view of g: nothing writes into a VJP's input or result.
        if axis is None:
            return self._make(self.data.sum(), "sum", (self,), lambda g: (np.broadcast_to(g, a_shape),))
        if not -len(a_shape) <= axis < len(a_shape):
            raise ShapeError(
                f"cannot sum shape {shape_text(a_shape)} over axis {axis}", a_shape, ()
            )
        ax = axis % len(a_shape)
        return self._make(
            self.data.sum(axis=ax),
            f"sum{ax}",
            (self,),
            lambda g: (np.broadcast_to(np.expand_dims(g, ax), a_shape),),
        )

    def tanh(self) -> "Tensor":
        t = np.tanh(self.data)
        return self._make(t, "tanh", (self,), lambda g: (g * (1.0 - t * t),))

    def relu(self) -> "Tensor":
        a = self.data
        # np.maximum, not data * mask: -inf * 0 is nan and -1 * 0 is -0.0.
        return self._make(np.maximum(a, 0.0), "relu", (self,), lambda g: (g * (a > 0.0),))

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
                f"seed shape {shape_text(seed_array.shape)} does not match tensor shape "
                f"{shape_text(self.shape)}",
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

    def leaves(self) -> list["Tensor"]:
        """The leaves of this tensor's graph that collect a gradient: its parameters and tracked inputs."""
        return [node for node in self._topological_order() if node.is_leaf and node.requires_grad]

    def _topological_order(self) -> list["Tensor"]:
        """Nodes reachable from self, each after every node that uses it."""
        order: list[Tensor] = []
        seen: set[int] = set()
        stack: list[tuple[Tensor, bool]] = [(self, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                order.append(node)
                continue
            if id(node) in seen:
                continue
            seen.add(id(node))
            stack.append((node, True))
            for parent in node._parents:
                if parent.requires_grad and id(parent) not in seen:
                    stack.append((parent, False))
        order.reverse()
        return order


_new_tensor = object.__new__


def tensor(data: object, *, name: str | None = None) -> Tensor:
    """A constant: no gradient is tracked for it."""
    return Tensor(data, name=name, requires_grad=False)


def parameter(data: object, *, name: str) -> Tensor:
    """A named leaf that collects a gradient."""
    return Tensor(data, name=name, requires_grad=True)
