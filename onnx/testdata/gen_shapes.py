#!/usr/bin/env python3
"""Generates the shape-arithmetic, mask and attention fixtures of issue 26 from PyTorch
(Debian's python3-torch 1.13 and python3-onnx 1.12): each small module is exported with
torch.onnx.export's default settings (constant folding on) at the operator sets where the
lowering changes, in float32 and float64, to shapes/<name>_<dtype>.onnx; shapes/<name>_<dtype>.json
holds its inputs, PyTorch's output, a fixed weighting r, loss = sum(output * r) and the
autograd gradients of the loss:

    {"input": first float input as {"shape", "data"} (onnxtest.Fixture's field),
     "inputs": [{"name", "dtype": "float" | "int64" | "bool", "shape", "data"}, ...] (every graph
               input in order; bool as 0/1),
     "output": {"shape", "data"}, "r": [...], "loss": ...,
     "grads": {ONNX initializer name: gradient, flat},
     "grad_inputs": {graph input name: gradient, flat} (the float inputs)}

Gradients are keyed by the ONNX initializer that holds each parameter: the exporter renames and
transposes some (a Linear's weight folded into a MatMul operand is onnx::MatMul_N = weight^T), so
each float initializer is matched to the parameter it equals, or whose transpose it equals, and
given that parameter's gradient (transposed alike). Every parameter is perturbed before the
export so that no two are equal (the exporter would merge them). Float initializers that are no
parameter (a mask cast to float and folded) get no gradient.

    /usr/bin/python3 onnx/testdata/gen_shapes.py [NAME ...]   (from the repository root)

The outputs are committed: go test never runs Python.
"""
import json
import math
import os
import sys

import numpy as np
import onnx
import onnx.numpy_helper
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shapes")


class Chunk(nn.Module):
    """torch.chunk (even and uneven) and torch.split (sizes, and an uneven split size): the
    exporter computes the slice bounds from Shape with integer Add, Div and Mul."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 5)

    def forward(self, x):  # x: [2, 6, 5]
        h = self.fc(x)
        a, b = h.chunk(2, dim=1)
        p, q, r = torch.chunk(h, 3, dim=2)  # 2, 2, 1
        s1, s2, s3 = torch.split(h, [1, 2, 3], dim=1)
        u, v = torch.split(h, 4, dim=1)  # 4, 2
        return torch.cat([(a * torch.sigmoid(b)).flatten(1), (p * q).flatten(1), r.flatten(1),
                          (s1 * s3[:, :1]).flatten(1), s2.flatten(1), (u.sum(1) * v.sum(1))], dim=1)


class Flatten(nn.Module):
    """torch.flatten(x) and flatten(x, 2): Reshape to a shape computed from Shape, Slice and Concat."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 4)

    def forward(self, x):  # x: [2, 3, 4, 5]
        h = self.fc(x)
        return torch.cat([torch.flatten(h).tanh(), torch.flatten(h, 2).sum(-1).flatten(), torch.flatten(h, 1).mean(0)])


class GPTMask(nn.Module):
    """minGPT's causal self-attention: a [1,1,8,8] mask buffer sliced to the sequence length
    (Slice of a constant with ends from Shape), then [0] (Gather on a multi-dimensional
    constant), == 0 and masked_fill with -inf; a bool buffer the same way with ~; heads as
    rank-4 matmuls."""

    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(8, 24)
        self.proj = nn.Linear(8, 8)
        self.register_buffer("bias", torch.tril(torch.ones(8, 8)).view(1, 1, 8, 8))
        self.register_buffer("keep", torch.tril(torch.ones(8, 8, dtype=torch.bool)).view(1, 1, 8, 8))

    def forward(self, x):  # x: [2, 5, 8]
        B, T, C = x.size()
        q, k, v = self.qkv(x).split(8, dim=2)
        q = q.view(B, T, 2, 4).transpose(1, 2)
        k = k.view(B, T, 2, 4).transpose(1, 2)
        v = v.view(B, T, 2, 4).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(4))
        att = att.masked_fill(self.bias[:, :, :T, :T][0] == 0, float("-inf"))
        att = att.masked_fill(~self.keep[:, :, :T, :T][0], -1e4)
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.proj(y)


class Pads(nn.Module):
    """F.pad constant (value 1.5), reflect and replicate, a negative pad (cropping) and a
    convolution with padding_mode='reflect'."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 3, 3, padding=1, padding_mode="reflect")

    def forward(self, x):  # x: [1, 2, 4, 5]
        a = F.pad(x, (1, 2, 2, 1), value=1.5)
        b = F.pad(x, (1, 2, 2, 1), mode="reflect")
        c = F.pad(x, (1, 2, 2, 1), mode="replicate")
        d = F.pad(x, (-1, 1, 0, 0))
        return torch.cat([self.conv(a * b + torch.tanh(c)).flatten(), d.flatten()])


class Expands(nn.Module):
    """Expand to an explicit shape and to a new leading dimension, and new_ones of a shape
    computed from Shape (ConstantOfShape), as nn.LSTM's initial state is."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):  # x: [2, 1, 3]
        h = self.fc(x)
        e = h.expand(2, 4, 3)
        f = h.expand(5, -1, -1, -1)
        return e * f.mean(0) + x.new_ones(x.size(0), 4, 3) * 0.5 + torch.zeros_like(e)


class Masks(nn.Module):
    """masked_fill and torch.where with a bool buffer, a product with the buffer cast to float
    (folded by the exporter into a float initializer), conditions computed from the input
    (Greater, Less) and a bool-to-float Cast of them, ~mask with -inf and a softmax."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.register_buffer("m", torch.tensor([[True, False, True], [False, True, True]]))

    def forward(self, x):  # x: [2, 3]
        h = self.fc(x)
        a = h.masked_fill(self.m, 0.5)
        b = torch.where(self.m, h, -h)
        c = h * self.m.to(h.dtype)
        d = h.masked_fill(h > 0.2, -1.0)
        e = (h < 0).to(h.dtype) * h
        f = h.masked_fill(~self.m, float("-inf")).softmax(-1)
        return a + b + c + d + e + f


class BMM(nn.Module):
    """matmul with broadcasting: a stack times a matrix, batch broadcasting of both operands,
    vectors on either side, a matrix times a stack, rank 4."""

    def __init__(self):
        super().__init__()
        self.w1 = nn.Parameter(torch.randn(5, 6))
        self.w2 = nn.Parameter(torch.randn(3, 6, 2))
        self.w3 = nn.Parameter(torch.randn(4))
        self.w4 = nn.Parameter(torch.randn(2, 1, 7, 4))
        self.w5 = nn.Parameter(torch.randn(2))
        self.w6 = nn.Parameter(torch.randn(7, 4))
        self.w7 = nn.Parameter(torch.randn(3, 5, 2))

    def forward(self, x):  # x: [2, 3, 4, 5]
        h = torch.tanh(x @ self.w1)  # [2,3,4,6]
        g = h @ self.w2  # [2,3,4,2]
        outs = [g, self.w3 @ g, self.w4 @ g, g @ self.w5, self.w6 @ g, x[:, :1] @ self.w7]
        return torch.cat([o.flatten() for o in outs])


class Embed(nn.Module):
    """nn.Embedding of int64 ids (a graph input, with repeated ids) and of a column of them,
    a positional table added by broadcasting, a float input."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4)
        self.pos = nn.Embedding(3, 4)
        self.fc = nn.Linear(4, 3)

    def forward(self, ids, x):  # ids: [2, 3] int64, x: [2, 3, 4]
        h = self.emb(ids) + self.pos.weight + x + self.emb(ids[:, 0]).unsqueeze(1)
        return self.fc(torch.tanh(h))


class LayerNorms(nn.Module):
    """nn.LayerNorm over the last axis, over the last two, and with epsilon 1e-3 (opset 17
    exports one LayerNormalization each; PyTorch 1.13 cannot export one without affine
    parameters: its LayerNormalization then has an empty Scale input, which the checker refuses)."""

    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(4)
        self.ln2 = nn.LayerNorm([3, 4])
        self.ln3 = nn.LayerNorm(4, eps=1e-3)
        self.fc = nn.Linear(4, 4)

    def forward(self, x):  # x: [2, 3, 4]
        return self.ln1(x) * self.ln2(x) + self.ln3(self.fc(x))


class MHA(nn.Module):
    """nn.MultiheadAttention as self-attention, with the masks given as graph inputs."""

    def __init__(self, batch_first, kpm=False, am=False):
        super().__init__()
        self.m = nn.MultiheadAttention(8, 2, batch_first=batch_first)
        self.kpm, self.am = kpm, am

    def forward(self, x, *masks):
        masks = list(masks)
        kpm = masks.pop(0) if self.kpm else None
        am = masks.pop(0) if self.am else None
        return self.m(x, x, x, key_padding_mask=kpm, attn_mask=am)[0]


class TEL(nn.Module):
    """nn.TransformerEncoderLayer in eval mode, masks as graph inputs."""

    def __init__(self, batch_first, kpm=False, am=False, **kw):
        super().__init__()
        self.m = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=batch_first, **kw)
        self.kpm, self.am = kpm, am

    def forward(self, x, *masks):
        masks = list(masks)
        kpm = masks.pop(0) if self.kpm else None
        am = masks.pop(0) if self.am else None
        return self.m(x, src_mask=am, src_key_padding_mask=kpm)


KPM = [[False, False, False, True, True], [False] * 5]  # batch 2, length 5
CAUSAL = np.triu(np.ones((5, 5), dtype=bool), 1).tolist()


def fl(*shape):
    return ("float", shape)


# name, constructor, inputs (("float", shape) | ("int64", data) | ("bool", data) | ("floatmask", shape)),
# opsets[, export options]. gptmask with the default settings has its mask slice folded by the
# exporter (the shapes are static when it traces); gptmask_nofold keeps the Slice of the buffer
# and the Gather of [0] on it, which the importer must then evaluate itself.
MODELS = [
    ("chunk", Chunk, [fl(2, 6, 5)], [11, 13, 17]),
    ("flatten", Flatten, [fl(2, 3, 4, 5)], [11, 13, 17]),
    ("gptmask", GPTMask, [fl(2, 5, 8)], [11, 13]),
    ("gptmask_nofold", GPTMask, [fl(2, 5, 8)], [13], {"do_constant_folding": False}),
    ("pads", Pads, [fl(1, 2, 4, 5)], [10, 11, 13]),
    ("expand", Expands, [fl(2, 1, 3)], [11, 13]),
    ("masks", Masks, [fl(2, 3)], [11, 13]),
    ("bmm", BMM, [fl(2, 3, 4, 5)], [13]),
    ("embed", Embed, [("int64", [[1, 7, 1], [3, 9, 7]]), fl(2, 3, 4)], [13]),
    ("layernorm", LayerNorms, [fl(2, 3, 4)], [17]),
    ("mha", lambda: MHA(False), [fl(5, 2, 8)], [13]),
    ("mha_kpm", lambda: MHA(True, kpm=True), [fl(2, 5, 8), ("bool", KPM)], [13]),
    ("mha_am", lambda: MHA(False, am=True), [fl(5, 2, 8), ("bool", CAUSAL)], [13]),
    ("mha_amf", lambda: MHA(True, am=True), [fl(2, 5, 8), ("floatmask", (5, 5))], [13]),
    ("mha_both", lambda: MHA(False, kpm=True, am=True), [fl(5, 2, 8), ("bool", KPM), ("bool", CAUSAL)], [13]),
    ("tel", lambda: TEL(False), [fl(5, 2, 8)], [13]),
    ("tel_kpm", lambda: TEL(True, kpm=True), [fl(2, 5, 8), ("bool", KPM)], [17]),
    ("tel_am", lambda: TEL(False, am=True, norm_first=True, activation="gelu"), [fl(5, 2, 8), ("bool", CAUSAL)], [11]),
]


def make_inputs(specs, dtype):
    out = []
    for kind, v in specs:
        if kind == "float":
            out.append(torch.randn(*v, dtype=dtype))
        elif kind == "floatmask":
            out.append(-2 * torch.rand(*v, dtype=dtype))
        elif kind == "int64":
            out.append(torch.tensor(v, dtype=torch.int64))
        else:
            out.append(torch.tensor(v, dtype=torch.bool))
    return out


def onnx_grads(path, model):
    """The gradient of every float initializer that holds a parameter (or its transpose)."""
    params = {n: p for n, p in model.named_parameters()}
    used = set()
    grads = {}
    for init in onnx.load(path).graph.initializer:
        a = onnx.numpy_helper.to_array(init)
        if a.dtype not in (np.float32, np.float64):
            continue
        hits = []
        for name, p in params.items():
            pv = p.detach().numpy()
            if pv.shape == a.shape and np.array_equal(pv, a):
                hits.append((name, False))
            elif pv.ndim == 2 and pv.T.shape == a.shape and np.array_equal(pv.T, a):
                hits.append((name, True))
        if len(hits) > 1:
            raise SystemExit(f"{path}: initializer {init.name} equals parameters {hits}")
        if hits:
            name, tr = hits[0]
            g = params[name].grad.detach()
            grads[init.name] = (g.T if tr else g).reshape(-1).tolist()
            used.add(name)
    missing = set(params) - used
    if missing:
        raise SystemExit(f"{path}: parameters {sorted(missing)} are in no initializer")
    return grads


def main(names):
    known = {m[0] for m in MODELS}  # noqa
    unknown = set(names) - known
    if unknown:
        raise SystemExit(f"unknown models {sorted(unknown)}; known: {sorted(known)}")
    os.makedirs(HERE, exist_ok=True)
    for name, cls, specs, opsets, *opts in MODELS:
        if names and name not in names:
            continue
        opts = opts[0] if opts else {}
        for opset in opsets:
            for dtype, tag in ((torch.float32, "f32"), (torch.float64, "f64")):
                torch.manual_seed(11)
                model = cls().to(dtype).eval()
                with torch.no_grad():  # no two parameters equal (the exporter would merge them)
                    for p in model.parameters():
                        p.add_(0.1 * torch.randn_like(p))
                inputs = make_inputs(specs, dtype)
                input_names = [f"in{i}" for i in range(len(inputs))]
                label = f"{name}{opset}" if len(opsets) > 1 else name
                base = os.path.join(HERE, f"{label}_{tag}")
                torch.onnx.export(model, tuple(inputs), base + ".onnx", opset_version=opset,
                                  input_names=input_names, output_names=["y"], **opts)
                ins = [t.clone().requires_grad_(t.is_floating_point()) for t in inputs]
                y = model(*ins)
                r = torch.randn(*y.shape, dtype=dtype)
                loss = (y * r).sum()
                model.zero_grad()
                loss.backward()
                records = []
                for n, t in zip(input_names, inputs):
                    kind = "float" if t.is_floating_point() else ("bool" if t.dtype == torch.bool else "int64")
                    records.append({"name": n, "dtype": kind, "shape": list(t.shape),
                                    "data": t.to(torch.float64).reshape(-1).tolist()})
                first = next(rec for rec in records if rec["dtype"] == "float")
                with open(base + ".json", "w") as f:
                    json.dump({
                        "input": {"shape": first["shape"], "data": first["data"]},
                        "inputs": records,
                        "output": {"shape": list(y.shape), "data": y.detach().reshape(-1).tolist()},
                        "r": r.reshape(-1).tolist(),
                        "loss": loss.item(),
                        "grads": onnx_grads(base + ".onnx", model),
                        "grad_inputs": {n: t.grad.reshape(-1).tolist() for n, t in zip(input_names, ins) if t.grad is not None},
                    }, f)
                print(base, "ok")


if __name__ == "__main__":
    main(sys.argv[1:])
