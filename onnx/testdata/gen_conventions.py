#!/usr/bin/env python3
"""Generates the ONNX fixtures of the importer's conventions (issue 26): operators at their
kinks and ties, variadic Max/Min/Sum/Mean, reductions whose axes moved to an input at opset
13 or 18, Clip with learnable bounds, a Cast to float as the graph output, rank-0
initializers, HardSigmoid/HardSwish and ReduceL2 (weight norm). PyTorch 1.13 (Debian's
python3-torch) computes every expected value: each model's output and the autograd gradients
of loss = sum(output * r) with respect to every parameter, written next to the model as
<name>_<dtype>.json in the format of gen.py (package onnx/onnxtest reads it).

Models that PyTorch 1.13 can export are exported (opset in the name); the others — ONNX Max,
Min, Sum and Mean with three or more inputs, which torch.onnx exports as chains of two-input
nodes, and the opset-18 reductions with the axes as an input, beyond torch.onnx's opset 17 —
are written with the onnx package's helper API, and PyTorch computes the same function from
the same tensors: torch.amax over the stacked inputs for Max (it splits the derivative among
ties evenly, as the importer does), torch.amax/amin/mean/prod/logsumexp/linalg.vector_norm for
the reductions.

Ties and kinks need exact values: a model's activations are h = x + w, with x a graph input
and w a parameter, both small multiples of 1/4 chosen so that h holds the kinks and ties
exactly (in float32 too); the gradient with respect to w is the gradient at h.

    /usr/bin/python3 onnx/testdata/gen_conventions.py [NAME ...]   (from the repository root)

The outputs are committed: go test never runs Python.
"""
import os
import sys

import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import helper, numpy_helper

from fixturejson import write_fixture, write_module_fixture

HERE = os.path.dirname(os.path.abspath(__file__))


def quarters(shape, seed):
    """A tensor of multiples of 1/4 in [-2, 2] (exact in float32 and float64)."""
    g = torch.Generator().manual_seed(seed)
    return torch.randint(-8, 9, shape, generator=g).double() / 4


class Shifted(nn.Module):
    """h = x + w, with w = target - x: the activations hold the target's values exactly."""

    def __init__(self, target, x):
        super().__init__()
        self.w = nn.Parameter(target - x)


class Kinks(Shifted):
    """The activations at their kinks: relu and leaky relu at 0, elu (α = 1 and ½) at 0,
    hardswish at ±3, softplus at 0 and far beyond PyTorch's threshold of 20."""

    def forward(self, x):
        h = x + self.w
        return torch.stack([torch.relu(h), F.leaky_relu(h, 0.125), F.elu(h), F.elu(h, 0.5),
                            F.hardswish(h), F.softplus(h)])


class HardSigmoid(Shifted):
    """hardsigmoid at and beyond its kinks ±3 (exported as HardSigmoid with α = 1/6 rounded
    to float32: the values differ from PyTorch's (x + 3)/6 by 3e-8 relative)."""

    def forward(self, x):
        return F.hardsigmoid(x + self.w)


class MaxMin(Shifted):
    """torch.maximum and torch.minimum (ONNX Max and Min of two inputs) with ties."""

    def __init__(self, target, x, a, b):
        super().__init__(target, x)
        self.a = nn.Parameter(a)
        self.b = nn.Parameter(b)

    def forward(self, x):
        h = x + self.w
        return torch.stack([torch.maximum(h, self.a), torch.minimum(self.b, h)])


class Reduce(Shifted):
    """ReduceMax/Min/Mean/Prod/LogSumExp with the axes as an attribute (opset < 18), with
    ties: torch.amax and amin split the derivative evenly among tied elements, and so does
    torch.max without a dimension."""

    def forward(self, x):
        h = x + self.w
        return torch.cat([torch.amax(h, dim=1), torch.amin(h, dim=1), torch.max(h).reshape(1),
                          h.mean(dim=0), torch.prod(h, dim=1), torch.logsumexp(h, dim=1),
                          torch.amax(h, dim=(0, 1)).reshape(1)])


class Clip(Shifted):
    """torch.clamp with learnable tensor bounds (Clip whose bounds are initializers, through a
    Cast) and with constant bounds, values at the bounds included."""

    def __init__(self, target, x):
        super().__init__(target, x)
        self.lo = nn.Parameter(torch.tensor(-0.5))
        self.hi = nn.Parameter(torch.tensor(0.75))

    def forward(self, x):
        h = x + self.w
        return torch.stack([torch.clamp(h, self.lo, self.hi), torch.clamp(h, -0.25, 0.5),
                            torch.clamp(h, min=self.lo)])


class CastOut(nn.Module):
    """The graph output is a Cast to float of a comparison: no parameter gets a gradient."""

    def __init__(self):
        super().__init__()
        self.t = nn.Parameter(torch.tensor(0.25))

    def forward(self, x):
        return (x > self.t).to(x.dtype)


class Scalars(nn.Module):
    """Rank-0 initializers feeding Mul and Add."""

    def __init__(self):
        super().__init__()
        self.c = nn.Parameter(torch.tensor(1.5))
        self.d = nn.Parameter(torch.tensor(-0.25))

    def forward(self, x):
        return torch.tanh(x * self.c + self.d) * self.c


class WeightNorm(nn.Module):
    """nn.utils.weight_norm of a linear layer: ReduceL2 over the input features."""

    def __init__(self):
        super().__init__()
        self.fc = nn.utils.weight_norm(nn.Linear(4, 3))

    def forward(self, x):
        return torch.tanh(self.fc(x))


def f64(values):
    return torch.tensor(values, dtype=torch.float64)


def shifted(cls, target, seed, *extra):
    """The model cls(target, x, *extra) of the Shifted family and its input x (quarters of the
    target's shape from seed), so that its activations hold target's values."""
    x = quarters(target.shape, seed)
    return cls(target, x, *extra), x


def exported():
    """(name, opset, build(dtype) -> (module, x)) of the models torch.onnx exports."""
    def kinks(dt):
        return shifted(Kinks, f64([-4, -3, -2.5, -1, -0.5, 0, 0.5, 1, 2.5, 3, 4, 17, 25]), 1)

    def hardsigmoid(dt):
        return shifted(HardSigmoid, f64([-4, -3, -1.5, 0, 1.5, 3, 4]), 2)

    def maxmin(dt):
        return shifted(MaxMin, f64([[0, 1, -1, 2], [0.5, 0.5, -2, 1.5]]), 3,
                       f64([[0, 0.5, -1, 1], [0.5, 1, -1.75, 1.5]]), f64([[0, 1.25, -0.5, 2], [0.25, 0.5, -2, 1.75]]))

    def reduce(dt):
        return shifted(Reduce, f64([[1, 1.5, 1.5, 1.5], [0.5, 0.5, -1, 0.25], [1.5, -0.5, 1.5, 0]]), 4)

    def clip(dt):
        return shifted(Clip, f64([-1, -0.5, -0.25, 0, 0.5, 0.75, 1]), 5)

    def castout(dt):
        return CastOut(), f64([-1, 0, 0.25, 0.5, 2])

    def scalars(dt):
        torch.manual_seed(6)
        return Scalars(), torch.randn(2, 3, dtype=torch.float64)

    def weightnorm(dt):
        torch.manual_seed(8)
        return WeightNorm(), torch.randn(2, 4, dtype=torch.float64)

    out = [("kinks_op14", 14, kinks), ("hardsigmoid_op13", 13, hardsigmoid), ("castout_op13", 13, castout),
           ("scalars_op13", 13, scalars)]
    for op in (11, 13):
        out += [(f"maxmin_op{op}", op, maxmin), (f"reduce_op{op}", op, reduce), (f"clip_op{op}", op, clip),
                (f"weightnorm_op{op}", op, weightnorm)]
    return out


def onnx_type(dt):
    return onnx.TensorProto.FLOAT if dt == torch.float32 else onnx.TensorProto.DOUBLE


def helper_model(dt, opset, x, params, nodes, out_shape, ints=()):
    """An ONNX model of nodes over graph input x and the float initializers params (name ->
    tensor) and int64 initializers ints ((name, list)), whose output is "y"."""
    ty = onnx_type(dt)
    inits = [numpy_helper.from_array(v.detach().to(dt).numpy(), name=k) for k, v in params.items()]
    inits += [helper.make_tensor(k, onnx.TensorProto.INT64, [len(v)], v) for k, v in ints]
    g = helper.make_graph(nodes, "conventions", [helper.make_tensor_value_info("x", ty, list(x.shape))],
                          [helper.make_tensor_value_info("y", ty, list(out_shape))], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="gen_conventions.py")
    m.ir_version = 8
    return m.SerializeToString()


def variadic(dt):
    """Max, Min, Sum and Mean of three or four inputs with multidirectional broadcasting:
    h [2, 3], a [3], b [2, 1], c [] (opset 13)."""
    t = f64([[1, 0.5, 2], [-1, 0.75, 0]])
    x = quarters(t.shape, 9)
    p = {"w": t - x, "a": f64([1, 0.75, -0.5]), "b": f64([[1], [0.75]]), "c": f64(0.5)}
    nodes = [helper.make_node("Add", ["x", "w"], ["h"]),
             helper.make_node("Max", ["h", "a", "b"], ["mx"]),
             helper.make_node("Min", ["h", "a", "b", "c"], ["mn"]),
             helper.make_node("Sum", ["h", "a", "b"], ["s"]),
             helper.make_node("Mean", ["a", "h", "b"], ["m"]),
             helper.make_node("Concat", ["mx", "mn", "s", "m"], ["y"], axis=0)]

    def fn(x, p):
        h = x + p["w"]
        hab = torch.broadcast_tensors(h, p["a"], p["b"])
        habc = torch.broadcast_tensors(h, p["a"], p["b"], p["c"])
        return torch.cat([torch.stack(hab).amax(0), torch.stack(habc).amin(0),
                          h + p["a"] + p["b"], (p["a"] + h + p["b"]) / 3])
    return helper_model(dt, 13, x, p, nodes, [8, 3]), x, p, fn


def reduce18(dt):
    """The reductions at opset 18, the axes an int64 initializer input: ReduceMax, Min, Mean,
    Prod, LogSumExp, L2 and Sum over axis 1 with keepdims, a row of zeros (ties across the row;
    a zero norm) among them; ReduceMean over both axes with noop_with_empty_axes = 0 and no
    axes (every axis); ReduceMax with noop_with_empty_axes = 1 and no axes (the identity)."""
    t = f64([[1, 1.5, 1.5, -0.5], [0, 0, 0, 0], [-1, 0.5, -1, 0.25]])
    x = quarters(t.shape, 10)
    p = {"w": t - x}
    kinds = ["ReduceMax", "ReduceMin", "ReduceMean", "ReduceProd", "ReduceLogSumExp", "ReduceL2", "ReduceSum"]
    nodes = [helper.make_node("Add", ["x", "w"], ["h"])]
    for k in kinds:
        nodes.append(helper.make_node(k, ["h", "axes"], [k], keepdims=1))
    nodes += [helper.make_node("ReduceMean", ["h"], ["all"], keepdims=1, noop_with_empty_axes=0),
              helper.make_node("Add", ["ReduceSum", "all"], ["sum_all"]),
              helper.make_node("ReduceMax", ["h"], ["same"], noop_with_empty_axes=1),
              helper.make_node("Concat", kinds[:-1] + ["sum_all", "same"], ["y"], axis=1)]

    def fn(x, p):
        h = x + p["w"]
        return torch.cat([torch.amax(h, 1, keepdim=True), torch.amin(h, 1, keepdim=True),
                          h.mean(1, keepdim=True), h.prod(1, keepdim=True), torch.logsumexp(h, 1, keepdim=True),
                          torch.linalg.vector_norm(h, dim=1, keepdim=True),
                          h.sum(1, keepdim=True) + h.mean(), h], dim=1)
    return helper_model(dt, 18, x, p, nodes, [3, 11], ints=[("axes", [1])]), x, p, fn


HELPER = [("variadic_op13", variadic), ("reduce_op18", reduce18)]


def write(base, x, y, r, loss, grads):
    write_fixture(base, x, y, r, loss, grads)
    print(base, "ok")


def weights(y):
    return torch.randn(*y.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(11)).to(y.dtype)


def main(names):
    known = [m[0] for m in exported()] + [m[0] for m in HELPER]
    unknown = set(names) - set(known)
    if unknown:
        raise SystemExit(f"unknown models {sorted(unknown)}; known: {known}")
    for dtype, tag in ((torch.float32, "f32"), (torch.float64, "f64")):
        for name, opset, build in exported():
            if names and name not in names:
                continue
            model, x = build(dtype)
            model, x = model.to(dtype), x.to(dtype)
            base = os.path.join(HERE, f"{name}_{tag}")
            torch.onnx.export(model, (x,), base + ".onnx", opset_version=opset, input_names=["x"],
                              output_names=["y"], do_constant_folding=False)
            write_module_fixture(base, model, x, weights)
            print(base, "ok")
        for name, build in HELPER:
            if names and name not in names:
                continue
            data, x, p, fn = build(dtype)
            base = os.path.join(HERE, f"{name}_{tag}")
            with open(base + ".onnx", "wb") as f:
                f.write(data)
            x = x.to(dtype)
            p = {k: v.to(dtype).requires_grad_() for k, v in p.items()}
            y = fn(x, p)
            r = weights(y)
            loss = (y * r).sum()
            loss.backward()
            write(base, x, y, r, loss, {k: v.grad.reshape(-1).tolist() for k, v in p.items()})


if __name__ == "__main__":
    main(sys.argv[1:])
