"""How fast the autograd engine is: a deep residual tanh stack, and the overhead of one small op.

    .venv/bin/python benchmarks/bench_autograd.py [-n RUNS] [--depth D] [--width C] [--batch B] [--baseline REV]

The stack is ``h = h + tanh(h @ W_l)`` for ``l = 1..depth``, forward then
backward with an upstream gradient of ones, collecting the gradient of the
input and of every ``W_l``. It runs through the engine and through a
forward/backward written out by hand in NumPy, alternating the two (and which
goes first) RUNS times, and prints the median CPU time (process time, all
threads) and wall time of each and their ratio. The parameters live across
runs, as in a training loop: each engine run starts with ``zero_grad``.

Then, for 2-element tensors, the median time of one op's forward (graph
building included) and of one op's share of a forward + backward chain.

``--baseline REV`` also loads ``site_builder/autograd/tensor.py`` as it was at
git revision REV and runs it in the same interleaved rounds, so a before and
after comparison shares the machine's noise instead of coming from two runs.

OpenBLAS runs on one thread unless ``OPENBLAS_NUM_THREADS`` says otherwise:
on a small shared machine its spinning worker threads make CPU time swing
with whatever else is running, which hides the engine's own cost.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402  (after the thread setting, which OpenBLAS reads on import)

current_engine = importlib.import_module("site_builder.autograd.tensor")

REPO = Path(__file__).resolve().parent.parent
ENGINE_PATH = "site_builder/autograd/tensor.py"


def engine_at(revision: str) -> ModuleType:
    """The engine module as it was at a git revision (it imports nothing of ours, so it loads alone)."""
    source = subprocess.run(
        ["git", "show", f"{revision}:{ENGINE_PATH}"], cwd=REPO, check=True, capture_output=True, text=True
    ).stdout
    with tempfile.NamedTemporaryFile("w", suffix=".py", prefix="engine_baseline_", delete=False) as handle:
        handle.write(source)
    spec = importlib.util.spec_from_file_location("engine_baseline", handle.name)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    os.unlink(handle.name)
    return module


def stack_engine(
    engine: ModuleType, x0: np.ndarray, weights: list[Any], seed: np.ndarray
) -> tuple[np.ndarray, list[np.ndarray]]:
    for w in weights:
        w.zero_grad()
    x = engine.parameter(x0, name="input")
    h = x
    for w in weights:
        h = h + (h @ w).tanh()
    h.backward_with_seed(seed)
    return x.grad, [w.grad for w in weights]  # type: ignore[return-value]  # set by backward_with_seed just above


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


Op = Callable[[Any, Any, Any], Any]


def small_ops() -> dict[str, Op]:
    return {
        "a + b": lambda a, b, w: a + b,
        "a * b": lambda a, b, w: a * b,
        "a - b": lambda a, b, w: a - b,
        "a * 2.0": lambda a, b, w: a * 2.0,
        "a.tanh()": lambda a, b, w: a.tanh(),
        "a @ W": lambda a, b, w: a @ w,
        "a.sum()": lambda a, b, w: a.sum(),
        "a / b": lambda a, b, w: a / b,
        "a.sigmoid()": lambda a, b, w: a.sigmoid(),
        "a[::-1]": lambda a, b, w: a[::-1],
    }


def supports(engine: ModuleType, fn: Op) -> bool:
    """Whether this engine has the op (an older revision may not)."""
    x = engine.parameter([0.5, -0.25], name="x")
    try:
        fn(x, x, engine.parameter([[1.0, 0.0], [0.0, 1.0]], name="W"))
    except (AttributeError, TypeError):
        return False
    return True


OPS_PER_TIMING = 2000


def small_op_timers(engine: ModuleType, fn: Op) -> tuple[Callable[[], None], Callable[[], None]]:
    """Two timers of ``OPS_PER_TIMING`` ops: forwards alone, and 50-op chains run forward + backward."""
    a = engine.parameter([0.5, -0.25], name="a")
    b = engine.parameter([1.5, 0.75], name="b")
    w = engine.parameter([[0.5, -1.0], [0.25, 0.5]], name="W")
    ones = np.ones(2)

    def forwards() -> None:
        for _ in range(OPS_PER_TIMING):
            fn(a, b, w)

    def chains() -> None:
        for _ in range(OPS_PER_TIMING // 50):
            h = a
            for _ in range(50):
                out = fn(h, b, w)
                h = out if out.shape == (2,) else out + a
            h.backward_with_seed(ones)

    return forwards, chains


def small_op_microseconds(engines: dict[str, ModuleType], fn: Op, runs: int) -> dict[str, tuple[float, float]]:
    """Per engine, the median µs per op of its forwards and of its chains, the engines interleaved."""
    timers = {label: small_op_timers(engine, fn) for label, engine in engines.items() if supports(engine, fn)}
    samples: dict[str, tuple[list[float], list[float]]] = {label: ([], []) for label in timers}
    for _ in range(runs):
        for label, (forwards, chains) in timers.items():
            for kind, timer in enumerate((forwards, chains)):
                start = time.perf_counter()
                timer()
                samples[label][kind].append((time.perf_counter() - start) / OPS_PER_TIMING * 1e6)
    return {label: (statistics.median(f), statistics.median(c)) for label, (f, c) in samples.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--runs", type=int, default=15, help="interleaved runs of each (default 15)")
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--baseline", metavar="REV", help="also time the engine as it was at this git revision")
    args = parser.parse_args(argv)

    engines: dict[str, ModuleType] = {"engine": current_engine}
    if args.baseline:
        engines[f"engine@{args.baseline}"] = engine_at(args.baseline)

    rng = np.random.default_rng(0)
    x0 = rng.standard_normal((args.batch, args.width))
    raw = [rng.standard_normal((args.width, args.width)) * (0.5 / np.sqrt(args.width)) for _ in range(args.depth)]
    seed = np.ones((args.batch, args.width))

    numpy_x, numpy_w = stack_numpy(x0, raw, seed)
    contestants: dict[str, Callable[[], object]] = {}
    differences: dict[str, float] = {}
    for label, engine in engines.items():
        weights = [engine.parameter(w, name=f"stack.{i}.weight") for i, w in enumerate(raw)]
        grad_x, grad_w = stack_engine(engine, x0, weights, seed)  # warm-up, and the answers to compare
        differences[label] = max(
            float(np.max(np.abs(grad_x - numpy_x))), *(float(np.max(np.abs(a - b))) for a, b in zip(grad_w, numpy_w))
        )
        contestants[label] = lambda engine=engine, weights=weights: stack_engine(engine, x0, weights, seed)
    contestants["hand NumPy"] = lambda: stack_numpy(x0, raw, seed)

    times: dict[str, list[tuple[float, float]]] = {label: [] for label in contestants}
    labels = list(contestants)
    for run in range(args.runs):
        shift = run % len(labels)  # each contestant goes first in turn
        for label in labels[shift:] + labels[:shift]:
            times[label].append(measure(contestants[label]))

    cpu = {label: statistics.median(t[0] for t in runs) for label, runs in times.items()}
    wall = {label: statistics.median(t[1] for t in runs) for label, runs in times.items()}
    width = max(len(label) for label in labels)
    print(f"residual tanh stack: depth {args.depth} x width {args.width} x batch {args.batch}, forward + backward")
    print(
        f"runs: {args.runs} of each, interleaved (median of each); OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}"
    )
    for label in labels:
        print(f"  {label:<{width}}  CPU {cpu[label] * 1e3:8.2f} ms   wall {wall[label] * 1e3:8.2f} ms")
    for label in engines:
        print(
            f"  {label:<{width}}  / hand NumPy: CPU {cpu[label] / cpu['hand NumPy']:5.2f} x   "
            f"wall {wall[label] / wall['hand NumPy']:5.2f} x   "
            f"largest |gradient difference| {differences[label]:.3g}"
        )
    print("small ops on 2-element tensors (median of runs, wall; us per op: forward alone, forward + backward):")
    print(f"  {'op':<12}" + "".join(f"  {label:>{max(width, 17)}}" for label in engines))
    for name, fn in small_ops().items():
        medians = small_op_microseconds(engines, fn, args.runs)
        cells = [
            f"{medians[label][0]:6.2f} {medians[label][1]:6.2f}" if label in medians else "n/a" for label in engines
        ]
        print(f"  {name:<12}" + "".join(f"  {cell:>{max(width, 17)}}" for cell in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
