"""Recurrences replayed from CUDA graphs on a GPU: the same kernels, launched without Python in between.

On a GPU the recurrent cells of urnlib are launch-bound: a step of a URN, a GRU or a TPRU is a handful of
small
kernels, and Python and the dispatcher spend longer issuing each one than the GPU spends running it (issue
measurement: the URN's recurrence took 6.05 ms run eagerly and 1.44 ms captured in one CUDA graph). A CUDA
graph
records the kernels of a function once and replays them with one launch.

:func:`replayed` runs ``fn(*args)`` - a function of tensors whose forward and backward make no host
synchronisation and take no branch on tensor values (the hand-written scans are such functions) - from two
captured graphs, one for the forward pass and one for the backward pass, kept per shape, dtype and device of
its arguments. The graphs run the very kernels the eager call runs, so values and gradients are the eager
ones (``tests/test_gpu.py`` compares them in float64); where graphs do not apply it calls ``fn`` as it is:

* on the CPU, or where any argument is not on a CUDA device;
* with gradients off (evaluation) or when no argument requires one (graphs pay off in training, where a
  step is replayed thousands of times);
* while a capture is under way, or when graphs are switched off (:func:`enabled`, or the environment
  variable ``URNLIB_CUDA_GRAPHS=0``);
* when the graph of this shape is still waiting for its backward pass (the same function called twice
  before one backward pass, e.g. an encoder reading premise and hypothesis): the second call runs eagerly.

Outputs are copies (they do not alias the graph's memory); at most :data:`MAX_GRAPHS` shapes are kept (the
least recently used is dropped).
"""

from __future__ import annotations

import contextlib
import os
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence

import torch

__all__ = ["replayed", "enabled", "is_enabled", "clear", "MAX_GRAPHS", "captures"]

MAX_GRAPHS = 64
#: what captures a function's graphs (tests on the CPU put an emulation here)
CAPTURE: Callable = None  # set below to _Graphs
_ENABLED = os.environ.get("URNLIB_CUDA_GRAPHS", "1") not in ("0", "false", "no", "off")
_CACHE: OrderedDict[Hashable, _Graphs] = OrderedDict()
_COUNT = {"captures": 0}


def is_enabled() -> bool:
    """Whether :func:`replayed` uses graphs where they apply."""
    return _ENABLED


@contextlib.contextmanager
def enabled(on: bool):
    """Switch graphs on or off inside a ``with`` block (benchmarks compare the two)."""
    global _ENABLED
    before, _ENABLED = _ENABLED, bool(on)
    try:
        yield
    finally:
        _ENABLED = before


def clear() -> None:
    """Drop every captured graph (their memory returns to torch's allocator)."""
    _CACHE.clear()


def captures() -> int:
    """How many graph pairs were captured in this process (tests check that a path was taken)."""
    return _COUNT["captures"]


class _Graphs:
    """The forward and backward graphs of one function at one set of argument shapes."""

    def __init__(self, fn: Callable, args: Sequence[torch.Tensor]):
        self.fn = fn
        self.inputs = [a.detach().clone().requires_grad_(a.requires_grad) for a in args]
        wanted = [x for x in self.inputs if x.requires_grad]
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):  # warm-up: lazy initialisation (handles, workspaces) stays out
            for _ in range(2):
                outs = _tensors(fn(*self.inputs))
                grads = [o for o in outs if o.requires_grad]
                if grads:
                    torch.autograd.grad(grads, wanted, [torch.ones_like(o) for o in grads], allow_unused=True)
        torch.cuda.current_stream().wait_stream(stream)
        torch.cuda.synchronize()
        pool = torch.cuda.graph_pool_handle()
        self.forward_graph = torch.cuda.CUDAGraph()
        # warm-up and captures on one stream: the inputs' autograd nodes, made in the warm-up, stay on the
        # stream the captured backward pass runs on
        with torch.cuda.graph(self.forward_graph, pool=pool, stream=stream):
            raw = fn(*self.inputs)
        self.outputs, self.many = _tensors(raw), isinstance(raw, (tuple, list))
        self.differentiable = [i for i, o in enumerate(self.outputs) if o.requires_grad]
        self.grad_outputs = [torch.empty_like(self.outputs[i]) for i in self.differentiable]
        self.backward_graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.backward_graph, pool=pool, stream=stream):
            got = torch.autograd.grad([self.outputs[i] for i in self.differentiable], wanted,
                                      self.grad_outputs,
                                      allow_unused=True)
        it = iter(got)
        self.grad_inputs = [next(it) if x.requires_grad else None for x in self.inputs]
        self.pending: weakref.ref | None = None  # the autograd node of the replay awaiting its backward pass
        _COUNT["captures"] += 1

    def replay_forward(self) -> None:
        self.forward_graph.replay()

    def replay_backward(self) -> None:
        self.backward_graph.replay()

    def busy(self) -> bool:
        return self.pending is not None and self.pending() is not None


class _Replay(torch.autograd.Function):
    @staticmethod
    def forward(ctx, graphs: _Graphs, *args):
        for static, a in zip(graphs.inputs, args):
            static.copy_(a)
        graphs.replay_forward()
        ctx.graphs = graphs
        return tuple(o.clone() for o in graphs.outputs)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, *grads):
        graphs = ctx.graphs
        for static, i in zip(graphs.grad_outputs, graphs.differentiable):
            if grads[i] is None:
                static.zero_()
            else:
                static.copy_(grads[i])
        graphs.replay_backward()
        graphs.pending = None
        return (None, *(None if g is None else g.clone() for g in graphs.grad_inputs))


CAPTURE = _Graphs


def _tensors(out) -> list[torch.Tensor]:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _applies(args: Sequence[torch.Tensor]) -> bool:
    return (_ENABLED and torch.is_grad_enabled() and bool(args)
            and all(a.is_cuda for a in args) and any(a.requires_grad for a in args)
            and not torch.cuda.is_current_stream_capturing())


def replayed(fn: Callable, args: Sequence[torch.Tensor | None], name: Hashable):
    """``fn(*args)``, from CUDA graphs where they apply (see the module docstring).

    Args:
        fn: a function of the tensors ``args`` (``None`` entries are passed as ``None`` and keyed), returning
        a
            tensor or a tuple of tensors; no host synchronisation and no branch on tensor values inside it,
            forward or backward.
        args: its arguments.
        name: what, besides the arguments' shapes, dtypes and devices, tells its graphs apart (e.g. the
            function's name and its non-tensor settings).

    Returns:
        what ``fn`` returns (a tuple stays a tuple).
    """
    present = [a for a in args if a is not None]
    if not _applies(present):
        return fn(*args)
    slots = [i for i, a in enumerate(args) if a is not None]
    key = (name, len(args), tuple(slots),
           tuple((tuple(a.shape), a.dtype, a.device, a.requires_grad) for a in present))

    def call(*tensors, _slots=tuple(slots), _count=len(args)):  # holds no tensor of this call
        full = [None] * _count
        for i, t in zip(_slots, tensors):
            full[i] = t
        return fn(*full)

    graphs = _CACHE.get(key)
    if graphs is None:
        graphs = CAPTURE(call, present)
        _CACHE[key] = graphs
        while len(_CACHE) > MAX_GRAPHS:
            _CACHE.popitem(last=False)
    else:
        _CACHE.move_to_end(key)
    if graphs.busy():
        return fn(*args)
    outs = _Replay.apply(graphs, *present)
    nodes = [o.grad_fn for o in outs if o.grad_fn is not None]
    graphs.pending = weakref.ref(nodes[0]) if nodes else None
    return outs if graphs.many else outs[0]
