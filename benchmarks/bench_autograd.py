"""How fast the autograd engine is: a deep residual tanh stack, and the overhead of one small op.

    .venv/bin/python benchmarks/bench_autograd.py [-n RUNS] [--depth D] [--width C] [--batch B]

The stack is ``h = h + tanh(h @ W_l)`` for ``l = 1..depth``, forward then
backward with an upstream gradient of ones, collecting the gradient of the
input and of every ``W_l``. It runs through the engine and through a
forward/backward written out by hand in NumPy, alternating the two (and which
goes first) RUNS times, and prints the median CPU time (process time, all
threads) and wall time of each and their ratio. The parameters live across
runs, as in a training loop: each engine run starts with ``zero_grad``.

Then, for 2-element tensors, the median time of one op's forward (graph
building included) and of one op's share of a forward + backward chain.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import timeit
from typing import Callable

import numpy as np

from site_builder.autograd import Tensor, parameter


def stack_engine(x0: np.ndarray, weights: list[Tensor], seed: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    for w in weights:
        w.zero_grad()
    x = parameter(x0, name="input")
    h = x
    for w in weights:
        h = h + (h @ w).tanh()
    h.backward_with_seed(seed)
    return x.grad, [w.grad for w in weights]  # type: ignore[return-value]


def stack_numpy(x0: np.ndarray, weights: list[np.ndarray], seed: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    hs, ts = [x0], []
    h = x0
    for w in weights:
        t = np.tanh(h @ w)
        ts.append(t)
        h = h + t
        hs.append(h)
    g = seed
    grads: list[np.ndarray] = [np.empty(0)] * len(weights)
    for layer in range(len(weights) - 1, -1, -1):
        t = ts[layer]
        dz = g * (1.0 - t * t)
        grads[layer] = hs[layer].T @ dz
        g = g + dz @ weights[layer].T
    return g, grads


def measure(fn: Callable[[], object]) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    fn()
    return time.process_time() - cpu, time.perf_counter() - wall


def small_ops() -> dict[str, Callable[[Tensor, Tensor, Tensor], Tensor]]:
    return {
        "a + b": lambda a, b, w: a + b,
        "a * b": lambda a, b, w: a * b,
        "a - b": lambda a, b, w: a - b,
        "a * 2.0": lambda a, b, w: a * 2.0,
        "a.tanh()": lambda a, b, w: a.tanh(),
        "a @ W": lambda a, b, w: a @ w,
        "a.sum()": lambda a, b, w: a.sum(),
    }


def per_op_microseconds(fn: Callable[[Tensor, Tensor, Tensor], Tensor], runs: int) -> tuple[float, float]:
    """Median µs of one forward, and of one op's share of a 50-op chain's forward + backward."""
    a = parameter([0.5, -0.25], name="a")
    b = parameter([1.5, 0.75], name="b")
    w = parameter([[0.5, -1.0], [0.25, 0.5]], name="W")
    number = 2000
    forward = timeit.repeat(lambda: fn(a, b, w), number=number, repeat=runs)

    def chain() -> None:
        h = a
        for _ in range(50):
            out = fn(h, b, w)
            h = out if out.shape == (2,) else out + a
        h.backward_with_seed(np.ones(2))

    both = timeit.repeat(chain, number=number // 50, repeat=runs)
    return statistics.median(forward) / number * 1e6, statistics.median(both) / number * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--runs", type=int, default=15, help="interleaved runs of each (default 15)")
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args(argv)

    rng = np.random.default_rng(0)
    x0 = rng.standard_normal((args.batch, args.width))
    raw = [rng.standard_normal((args.width, args.width)) * (0.5 / np.sqrt(args.width)) for _ in range(args.depth)]
    weights = [parameter(w, name=f"stack.{i}.weight") for i, w in enumerate(raw)]
    seed = np.ones((args.batch, args.width))

    engine_x, engine_w = stack_engine(x0, weights, seed)  # warm-up, and the answers to compare
    numpy_x, numpy_w = stack_numpy(x0, raw, seed)
    difference = max(float(np.max(np.abs(engine_x - numpy_x))), *(float(np.max(np.abs(a - b))) for a, b in zip(engine_w, numpy_w)))

    engine: list[tuple[float, float]] = []
    by_hand: list[tuple[float, float]] = []
    for run in range(args.runs):
        pair = [(engine, lambda: stack_engine(x0, weights, seed)), (by_hand, lambda: stack_numpy(x0, raw, seed))]
        for times, fn in pair if run % 2 == 0 else pair[::-1]:
            times.append(measure(fn))

    cpu_engine = statistics.median(t[0] for t in engine)
    cpu_numpy = statistics.median(t[0] for t in by_hand)
    wall_engine = statistics.median(t[1] for t in engine)
    wall_numpy = statistics.median(t[1] for t in by_hand)
    print(f"residual tanh stack: depth {args.depth} x width {args.width} x batch {args.batch}, forward + backward")
    print(f"runs: {args.runs} of each, interleaved (median of each)")
    print(f"  engine      CPU {cpu_engine * 1e3:8.2f} ms   wall {wall_engine * 1e3:8.2f} ms")
    print(f"  hand NumPy  CPU {cpu_numpy * 1e3:8.2f} ms   wall {wall_numpy * 1e3:8.2f} ms")
    print(f"  ratio       CPU {cpu_engine / cpu_numpy:8.2f} x    wall {wall_engine / wall_numpy:8.2f} x")
    print(f"  largest |engine - hand NumPy| over every gradient: {difference:.3g}")
    print("small ops on 2-element tensors (median of runs; us per op):")
    print(f"  {'op':<10} {'forward':>8} {'fwd+bwd':>8}")
    for label, fn in small_ops().items():
        forward, both = per_op_microseconds(fn, args.runs)
        print(f"  {label:<10} {forward:8.2f} {both:8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
