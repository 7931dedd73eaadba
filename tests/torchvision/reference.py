#!/usr/bin/env python3
"""Exports the models of issue 26's acceptance suite to ONNX and writes PyTorch's reference
values for each: the forward pass, the autograd gradient of loss = sum(output * r) with respect
to every ONNX initializer that holds a PyTorch parameter (or buffer), and, for the small models,
the Hessian-vector product H.v by double backward (Debian's python3-torch 1.13,
python3-torchvision 0.14, python3-onnx 1.12).

    /usr/bin/python3 tests/torchvision/reference.py [--dtype float32|float64] OUTDIR [MODEL ...]

Without MODEL arguments every model in MODELS is written; without --dtype both float64 and
float32. For each model and dtype it writes OUTDIR/<name>_<f64|f32>.onnx and .json and prints
one line "ok <path>" (the Go test reads them). The files are megabytes to tens of megabytes
(resnet18: 45 MB of float32 weights): write them outside the repository.

The models (all with random weights, weights=None: nothing is downloaded):
  * torchvision's CNNs, in eval mode, batch 2, 3x64x64, exported with torch.onnx.export's
    defaults (operator set 14, constant folding, eval mode: the exporter folds every batch
    norm that follows a convolution into the convolution's weight and bias);
  * resnet18_train: resnet18 exported with training=TrainingMode.TRAINING in training mode, so
    that its batch norms stay BatchNormalization nodes with batch statistics (training_mode=1);
  * small torch.nn models (TransformerEncoderLayer, MultiheadAttention, LSTM, GRU, Embedding
    with LayerNorm, a small ViT), eval mode, default export settings.
Before export every float parameter gets a small random perturbation (so that no two
initializers are equal: the exporter merges equal ones, and fresh biases are all 0) and the
batch norms' running statistics are calibrated on random batches (so that eval mode keeps the
activations at a realistic scale through a hundred layers).

The JSON file:

    {"name", "dtype": "float32" | "float64", "mode": "eval" | "train",
     "inputs": [{"name", "dtype": "float" | "int64", "shape", "b64"}],
     "output": array, "r": array, "loss": float,
     "grads": {ONNX initializer name: array},   every initializer that holds a PyTorch tensor
     "grad_inputs": {graph input name: array},  the float inputs
     "v": {initializer: array}, "hv": {initializer: array},   small models only
     "unreferenced": [float initializers that hold no PyTorch tensor (folded constants)],
     "matches": {"name": n, "value": n, "transpose": n, "fused": n, "entries": n, "unused": n},
     "fused_pairs": conv + batch norm pairs fused in the reference copy,
     "check": relative difference between the original model's output and the reference's,
     "exact": {"output", "loss", "grads", "grad_inputs"[, "hv"]}   float32 only: the same
              float32 model, inputs, r and v evaluated in float64 (what both float32
              computations round),
     "kinks": {"margin", "at_risk", "calls", "tau"}   float32 only: how close the inputs of
              relu, relu6/hardtanh, hardswish, hardsigmoid and max_pool2d come to their kinks
              in the exact evaluation (class Kinks),
     "exported": {"why", "output", "loss", "grads", "deviation", "grad_deviation"}   float64
              models with HardSigmoid only: PyTorch's values for the function the ONNX file
              defines (alpha is a float32 attribute) and their largest relative differences
              from the model's,
     "seconds": {"export": s, "reference": s}}

where an array is {"shape": [...], "b64": base64 of the float64 little-endian values} (the
float32 references converted exactly; base64 keeps the JSON compact and quick to read).

ONNX's float attributes are float32, so in float64 a file can define a slightly different
function than the model: HardSigmoid's alpha (PyTorch's 1/6 becomes 0.1666666716337204, 2.5e-8
of mobilenet_v3_small's output: "exported" above) and BatchNormalization's epsilon (1e-5
becomes 9.99999974737875e-06, about 1e-11 of the output of densenet121 and resnet18_train,
whose batch norms the exporter does not fold: below the float64 tolerance, left alone).

How gradients are keyed by initializer. The exporter renames, transposes, concatenates and
folds parameters, so the reference is computed on a copy of the model whose tensors are
re-expressed as functions of the initializers (leaves that require grad), matched as follows:
  * name: the initializer has the tensor's name and value (kept as is);
  * value: another initializer has the tensor's value (an embedding's rows gathered by a
    constant arange, folded by the exporter);
  * transpose: its value equals the tensor's transpose (a Linear folded into MatMul);
  * fused: eval-mode conv + batch norm. The copy has PyTorch's own fusion applied
    (torch.nn.utils.fusion.fuse_conv_bn_eval on every convolution whose output feeds a batch
    norm, found with forward hooks); each fused weight and bias is matched to the initializer
    closest in value (within 1e-4 relative in float32, 1e-10 in float64; the exporter's fusion
    rounds differently) and replaced by that initializer's exact value;
  * entries: every entry of the initializer equals one entry of a parameter (the LSTM and GRU
    W, R and B: gates reordered, directions stacked, the two biases concatenated); the
    parameter is rebuilt from the initializers' entries with index_put;
  * unused: in training mode the batch norms' running statistics are inputs of
    BatchNormalization that its output does not read: gradient 0.
A batch norm the exporter leaves alone in eval mode (densenet's after a concatenation) is
computed in the copy as (x - mean) / sqrt(var + eps) * weight + bias with PyTorch ops, because
F.batch_norm refuses gradients for running statistics. The script checks that the copy's output
equals the original model's (the "check" field, at most 1e-4 in float32 and 1e-9 in float64
relative to the output's largest entry) and stops with an error when a parameter lies in no
initializer or an initializer matches ambiguously.
"""
import base64
import copy
import json
import math
import os
import sys
import time

import numpy as np
import onnx
import onnx.numpy_helper
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

from modelargs import outdir_and_models

CNNS = ["resnet18", "mobilenet_v2", "mobilenet_v3_small", "shufflenet_v2_x0_5", "squeezenet1_1",
        "efficientnet_b0", "mnasnet0_5", "googlenet", "densenet121", "regnet_x_400mf"]


class First(nn.Module):
    """The first output of a module that returns a tuple (a recurrent layer's Y, attention's
    output without its weights)."""

    def __init__(self, m, self_attention=False):
        super().__init__()
        self.m = m
        self.self_attention = self_attention

    def forward(self, x):
        if self.self_attention:
            return self.m(x, x, x)[0]
        return self.m(x)[0]


class EmbedNorm(nn.Module):
    """Token and position embeddings summed and layer-normalised (BERT's embedding block)."""

    def __init__(self, vocab=50, length=7, d=16):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(length, d)
        self.norm = nn.LayerNorm(d)

    def forward(self, ids):  # [batch, length] int64
        pos = torch.arange(ids.shape[1])
        return self.norm(self.tok(ids) + self.pos(pos))


class ViT(nn.Module):
    """A small vision transformer: 8x8 patches of a 3x32x32 image embedded by a strided
    convolution, a class token, a learned position embedding, two pre-norm GELU encoder layers,
    a final LayerNorm and a linear head on the class token."""

    def __init__(self, d=16, heads=2, layers=2, classes=10, patch=8, image=32):
        super().__init__()
        n = (image // patch) ** 2
        self.patch = nn.Conv2d(3, d, patch, stride=patch)
        self.cls = nn.Parameter(torch.randn(1, 1, d) * 0.02)
        self.pos = nn.Parameter(torch.randn(1, n + 1, d) * 0.02)
        layer = nn.TransformerEncoderLayer(d, heads, 2 * d, activation="gelu", batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, classes)

    def forward(self, x):  # [batch, 3, 32, 32]
        h = self.patch(x).flatten(2).transpose(1, 2)
        h = torch.cat([self.cls.expand(x.shape[0], -1, -1), h], dim=1) + self.pos
        h = self.norm(self.encoder(h))
        return self.head(h[:, 0])


def cnn(name):
    def make():
        kw = {"aux_logits": False, "init_weights": True} if name == "googlenet" else {}
        return getattr(torchvision.models, name)(weights=None, **kw)
    return make


def fl(*shape):
    return ("float", shape)


# name: (constructor, inputs, mode, small). small models get H.v (not mobilenet_v3_small:
# PyTorch 1.13 has no double backward for hardsigmoid, "derivative for
# aten::hardsigmoid_backward is not implemented").
MODELS = {name: (cnn(name), [fl(2, 3, 64, 64)], "eval", name in ("squeezenet1_1", "shufflenet_v2_x0_5"))
          for name in CNNS}
MODELS.update({
    "resnet18_train": (cnn("resnet18"), [fl(2, 3, 64, 64)], "train", False),
    "transformer_encoder_layer": (lambda: nn.TransformerEncoderLayer(16, 4, 32), [fl(6, 2, 16)], "eval", True),
    "multihead_attention": (lambda: First(nn.MultiheadAttention(16, 4), self_attention=True), [fl(6, 2, 16)], "eval", True),
    "lstm": (lambda: First(nn.LSTM(10, 16, num_layers=2)), [fl(7, 2, 10)], "eval", True),
    "gru": (lambda: First(nn.GRU(10, 16, bidirectional=True, batch_first=True)), [fl(2, 7, 10)], "eval", True),
    "embedding_layernorm": (EmbedNorm, [("int64", (50, (2, 7)))], "eval", True),
    "vit": (ViT, [fl(2, 3, 32, 32)], "eval", True),
})


def b64(t):
    a = np.ascontiguousarray(np.asarray(t.detach().cpu().numpy() if torch.is_tensor(t) else t, dtype="<f8"))
    return {"shape": list(a.shape), "b64": base64.b64encode(a.tobytes()).decode("ascii")}


def perturb(model):
    """Adds a random perturbation of 2% of each parameter's spread (0.02 for constant ones)."""
    with torch.no_grad():
        for p in model.parameters():
            s = p.std().item() if p.numel() > 1 else 0.0
            p.add_(torch.randn_like(p) * 0.02 * (s if s > 0 else 1.0))


def calibrate(model, shape, dtype):
    """Sets every batch norm's running statistics to their averages over four random batches
    (cumulative averages: momentum None), as training would."""
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return
    saved = [m.momentum for m in bns]
    for m in bns:
        m.reset_running_stats()
        m.momentum = None
    model.train()
    with torch.no_grad():
        for _ in range(4):
            model(torch.randn(*shape, dtype=dtype))
    for m, mo in zip(bns, saved):
        m.momentum = mo


def make_inputs(specs, dtype):
    out = []
    for kind, v in specs:
        if kind == "float":
            out.append(torch.randn(*v, dtype=dtype))
        else:
            high, shape = v
            out.append(torch.randint(0, high, shape, dtype=torch.int64))
    return out


class EvalBN(nn.Module):
    """An eval-mode batch norm written with PyTorch ops, so that autograd differentiates the
    running statistics too (F.batch_norm refuses them)."""

    def __init__(self, bn):
        super().__init__()
        self.eps = bn.eps
        for k in ("weight", "bias", "running_mean", "running_var"):
            setattr(self, k, nn.Parameter(getattr(bn, k).detach().clone()))

    def forward(self, x):
        sh = (1, -1) + (1,) * (x.dim() - 2)
        return (x - self.running_mean.view(sh)) / torch.sqrt(self.running_var.view(sh) + self.eps) \
            * self.weight.view(sh) + self.bias.view(sh)


def set_module(model, name, new):
    parent, _, attr = name.rpartition(".")
    setattr(model.get_submodule(parent) if parent else model, attr, new)


def fuse_eval(model, inputs):
    """PyTorch's eval-mode conv + batch norm fusion on every convolution whose output feeds a
    batch norm (found by running the model with forward hooks), then EvalBN for the batch norms
    left. Returns the number of fused pairs."""
    convs, pairs, hooks = {}, [], []
    for name, m in model.named_modules():
        if isinstance(m, nn.Conv2d):
            hooks.append(m.register_forward_hook(lambda m, i, o, name=name: convs.__setitem__(id(o), (name, o))))
        elif isinstance(m, nn.BatchNorm2d):
            def hook(m, i, o, name=name):
                hit = convs.get(id(i[0]))
                if hit is not None and hit[1] is i[0]:
                    pairs.append((hit[0], name))
            hooks.append(m.register_forward_hook(hook))
    with torch.no_grad():
        model(*inputs)
    for h in hooks:
        h.remove()
    for conv, bn in pairs:
        set_module(model, conv, torch.nn.utils.fusion.fuse_conv_bn_eval(model.get_submodule(conv), model.get_submodule(bn)))
        set_module(model, bn, nn.Identity())
    for name, m in list(model.named_modules()):
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            set_module(model, name, EvalBN(m))
    return len(pairs)


def match(tensors, inits, dtype, train):
    """Maps each reference tensor (name -> tensor) to the initializers that hold it (module
    doc). Returns {tensor name: (kind, init name)} or (kind, [(init, src, dst), ...]) for
    entries, and the set of initializers used."""
    out, used = {}, set()
    running = lambda n: n.endswith(".running_mean") or n.endswith(".running_var")  # noqa: E731
    vals = {n: t.detach().numpy() for n, t in tensors.items()}
    # name
    for n, a in vals.items():
        b = inits.get(n)
        if b is not None and b.shape == a.shape:
            if train and running(n):
                out[n] = ("unused", n)
                used.add(n)
            elif np.array_equal(a, b):
                out[n] = ("name", n)
                used.add(n)
    if train:
        missing = [n for n in vals if running(n) and n not in out]
        if missing:
            raise SystemExit(f"running statistics {missing[:3]} are no initializer of that name")
    # equal value, or equal transpose
    free = {k: v for k, v in inits.items() if k not in used}
    for n, a in vals.items():
        if n in out:
            continue
        hits = [(k, "value") for k, b in free.items() if b.shape == a.shape and np.array_equal(a, b)]
        if a.ndim == 2:
            hits += [(k, "transpose") for k, b in free.items() if b.shape == a.T.shape and np.array_equal(a.T, b)]
        if len(hits) > 1:
            raise SystemExit(f"{n} equals several initializers: {hits}")
        if hits:
            out[n] = (hits[0][1], hits[0][0])
            used.add(hits[0][0])
            del free[hits[0][0]]
    # nearest value (fused convolutions)
    tol = 1e-4 if dtype == torch.float32 else 1e-10
    for n, a in vals.items():
        if n in out:
            continue
        scale = max(float(np.abs(a).max()), 1e-30)
        best = sorted((float(np.abs(a - b).max()) / scale, k) for k, b in free.items() if b.shape == a.shape)
        if best and best[0][0] <= tol:
            if len(best) > 1 and best[1][0] <= tol:
                raise SystemExit(f"{n} is near several initializers: {best[:2]}")
            out[n] = ("fused", best[0][1])
            used.add(best[0][1])
            del free[best[0][1]]
    # entries
    rest = [n for n in vals if n not in out]
    if rest and free:
        flat = np.concatenate([vals[n].reshape(-1) for n in rest])
        owner = np.concatenate([np.full(vals[n].size, i) for i, n in enumerate(rest)])
        pos = np.concatenate([np.arange(vals[n].size) for n in rest])
        order = np.argsort(flat, kind="stable")
        sflat = flat[order]
        parts = {n: [] for n in rest}
        for k, b in list(free.items()):
            bf = b.reshape(-1)
            i = np.searchsorted(sflat, bf)
            ok = (i < len(sflat)) & (sflat[np.minimum(i, len(sflat) - 1)] == bf)
            if not ok.all():
                continue
            if ((i + 1 < len(sflat)) & (sflat[np.minimum(i + 1, len(sflat) - 1)] == bf)).any():
                raise SystemExit(f"initializer {k}: a value occurs twice among the parameters {rest}")
            src = order[i]
            for j, n in enumerate(rest):
                sel = owner[src] == j
                if sel.any():
                    parts[n].append((k, np.nonzero(sel)[0], pos[src[sel]]))
            used.add(k)
            del free[k]
        for n, ps in parts.items():
            if ps:
                covered = np.zeros(vals[n].size, dtype=int)
                for _, _, dst in ps:
                    np.add.at(covered, dst, 1)
                if (covered > 1).any():
                    raise SystemExit(f"{n}: an entry lies in two initializers")
                out[n] = ("entries", ps)
    missing = [n for n in vals if n not in out]
    if missing:
        raise SystemExit(f"tensors in no initializer: {missing}")
    return out, used


def set_tensor(model, name, value):
    parent, _, attr = name.rpartition(".")
    mod = model.get_submodule(parent) if parent else model
    mod._parameters.pop(attr, None)
    mod._buffers.pop(attr, None)
    setattr(mod, attr, value)  # RNNBase.__setattr__ keeps _flat_weights in step


def named_tensors(model):
    """The model's parameters and float buffers by name."""
    out = dict(model.named_parameters())
    out.update({n: b for n, b in model.named_buffers() if b.is_floating_point()})
    return out


def install(model, mapping, leaves):
    """Replaces each of the model's tensors by its expression in the leaves (the initializers)."""
    tensors = named_tensors(model)
    for n, (kind, how) in mapping.items():
        if kind == "unused":
            continue
        if kind in ("name", "value", "fused"):
            val = leaves[how]
        elif kind == "transpose":
            val = leaves[how].t()
        else:
            t = tensors[n]
            val = t.detach().reshape(-1).clone()
            for k, src, dst in how:
                val = val.index_put((torch.from_numpy(dst),), leaves[k].reshape(-1)[torch.from_numpy(src)])
            val = val.reshape(t.shape)
        set_tensor(model, n, val)


def evaluate(model, mapping, leaves, inputs, r, v):
    """PyTorch's output, loss, gradients (by leaf, and of the float inputs) and, when v is not
    None, H.v (by leaf), for loss = sum(output * r(output's shape))."""
    install(model, mapping, leaves)
    ins = [t.clone().requires_grad_(t.is_floating_point()) for t in inputs]
    y = model(*ins)
    rr = r(y.shape)
    loss = (y * rr).sum()
    names = sorted(leaves)
    wrt = [leaves[k] for k in names] + [t for t in ins if t.requires_grad]
    gs = torch.autograd.grad(loss, wrt, create_graph=v is not None, allow_unused=True)
    grads = {k: (g if g is not None else torch.zeros_like(leaves[k])).detach() for k, g in zip(names, gs)}
    gin = [g.detach() for g in gs[len(names):]]
    hv = None
    if v is not None:
        s = sum((g * v[k]).sum() for k, g in zip(names, gs) if g is not None and g.requires_grad)
        hs = torch.autograd.grad(s, [leaves[k] for k in names], allow_unused=True) if torch.is_tensor(s) else [None] * len(names)
        hv = {k: (h if h is not None else torch.zeros_like(leaves[k])) for k, h in zip(names, hs)}
    return y.detach(), rr, loss.item(), grads, gin, hv


KINK_TAU = 1e-6


class Kinks:
    """Records, while active, how close the inputs of PyTorch's piecewise functions come to
    their kinks: relu (0), hardtanh and relu6 (its bounds), hardswish and hardsigmoid (-3, 3),
    and for max_pool2d the gap between the largest and the second largest entry of each
    window (ties that are exact are left out: every implementation breaks them alike). Each
    distance is relative to the largest |entry| of that call's input. In float32 an input
    within a few 1e-7 of a kink may round to either side, and the gradient then differs in
    its whole receptive field; margin is the smallest distance seen and at_risk the number of
    entries closer than KINK_TAU."""

    def __init__(self):
        self.margin, self.at_risk, self.calls = math.inf, 0, 0
        self.saved = {}

    def note(self, d):
        d = d[torch.isfinite(d)]
        self.calls += 1
        if d.numel():
            self.margin = min(self.margin, d.min().item())
            self.at_risk += int((d < KINK_TAU).sum())

    def points(self, x, kinks):
        z = x.detach()
        s = max(z.abs().max().item(), 1e-300)
        self.note(torch.stack([(z - c).abs() for c in kinks]).min(0).values / s)

    def pool(self, x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, **kw):
        pair = lambda v: tuple(v) if isinstance(v, (tuple, list)) else (v, v)  # noqa: E731
        (kh, kw_), (ph, pw) = pair(kernel_size), pair(padding)
        sh, sw = pair(stride if stride else kernel_size)
        if pair(dilation) != (1, 1):
            raise SystemExit("max_pool2d with dilation: no kink record")
        z = x.detach()
        ext = []
        for n, k, st, p in ((z.shape[-1], kw_, sw, pw), (z.shape[-2], kh, sh, ph)):
            rnd = math.ceil if ceil_mode else math.floor
            out = rnd((n + 2 * p - k) / st) + 1
            ext += [p, p + max(0, (out - 1) * st + k - (n + 2 * p))]
        zp = F.pad(z, tuple(ext), value=-math.inf)
        win = zp.unfold(2, kh, sh).unfold(3, kw_, sw)  # [n, c, out h, out w, kh, kw]
        top = win.reshape(*win.shape[:4], -1).topk(2, dim=-1).values
        gap = top[..., 0] - top[..., 1]
        s = max(z.abs().max().item(), 1e-300)
        self.note(torch.where(gap > 0, gap, torch.full_like(gap, math.inf)) / s)

    def __enter__(self):
        fs = self.saved = {k: getattr(F, k) for k in ("relu", "hardtanh", "hardswish", "hardsigmoid", "max_pool2d")}

        def relu(x, inplace=False):
            self.points(x, [0.0])
            return fs["relu"](x, inplace)

        def hardtanh(x, min_val=-1.0, max_val=1.0, inplace=False):
            self.points(x, [min_val, max_val])
            return fs["hardtanh"](x, min_val, max_val, inplace)

        def hardswish(x, inplace=False):
            self.points(x, [-3.0, 3.0])
            return fs["hardswish"](x, inplace)

        def hardsigmoid(x, inplace=False):
            self.points(x, [-3.0, 3.0])
            return fs["hardsigmoid"](x, inplace)

        def max_pool2d(x, *a, **kw):
            self.pool(x, *a, **kw)
            return fs["max_pool2d"](x, *a, **kw)

        for k, f in (("relu", relu), ("hardtanh", hardtanh), ("hardswish", hardswish), ("hardsigmoid", hardsigmoid), ("max_pool2d", max_pool2d)):
            setattr(F, k, f)
        self.wrapped = {fs["relu"]: relu}
        return self

    def __exit__(self, *exc):
        for k, f in self.saved.items():
            setattr(F, k, f)

    def modules(self, model):
        """Routes the activations that modules keep as attributes (TransformerEncoderLayer's
        F.relu, bound when the module was made) through the recorder."""
        for m in model.modules():
            f = getattr(m, "activation", None)
            if f in self.wrapped:
                m.activation = self.wrapped[f]


class ExportedHardSigmoid(nn.Module):
    """ONNX's HardSigmoid, max(0, min(1, alpha * x + beta)), with the exported attributes."""

    def __init__(self, alpha, beta):
        super().__init__()
        self.alpha, self.beta = alpha, beta

    def forward(self, x):
        return torch.clamp(x * self.alpha + self.beta, 0.0, 1.0)


def hardsigmoid_attrs(path):
    """The (alpha, beta) of the model's HardSigmoid nodes, when they all have the same."""
    seen = set()
    for n in onnx.load(path).graph.node:
        if n.op_type == "HardSigmoid":
            a = {x.name: x.f for x in n.attribute}
            seen.add((a.get("alpha", 0.2), a.get("beta", 0.5)))
    if len(seen) > 1:
        raise SystemExit(f"{path}: HardSigmoid nodes with different attributes {seen}")
    return seen.pop() if seen else None


def reference(name, dtype, outdir):
    make, specs, mode, small = MODELS[name]
    tag = "f64" if dtype == torch.float64 else "f32"
    base = os.path.join(outdir, f"{name}_{tag}")
    torch.manual_seed(0)
    model = make().to(dtype)
    perturb(model)
    inputs = make_inputs(specs, dtype)
    calibrate(model, inputs[0].shape, dtype)
    train = mode == "train"
    model.train(train)
    input_names = ["x"] if len(inputs) == 1 else [f"x{i}" for i in range(len(inputs))]
    t0 = time.time()
    opts = {"training": torch.onnx.TrainingMode.TRAINING} if train else {}
    torch.onnx.export(model, tuple(inputs), base + ".onnx", input_names=input_names, output_names=["y"], **opts)
    t1 = time.time()
    inits = {}
    for init in onnx.load(base + ".onnx").graph.initializer:
        a = onnx.numpy_helper.to_array(init)
        if a.dtype in (np.float32, np.float64):
            inits[init.name] = a
    proto = copy.deepcopy(model)
    with torch.no_grad():
        want = None if train else model(*inputs)
        fused = 0 if train else fuse_eval(proto, inputs)
    mapping, used = match(named_tensors(proto), inits, dtype, train)
    unused = {how for kind, how in mapping.values() if kind == "unused"}
    leaves = {k: torch.tensor(inits[k]).requires_grad_() for k in sorted(used - unused)}
    counts = {}
    for kind, _ in mapping.values():
        counts[kind] = counts.get(kind, 0) + 1
    torch.manual_seed(1)
    v = {k: torch.randn(*t.shape, dtype=dtype) for k, t in leaves.items()} if small else None
    rs = []

    def r(shape):
        if not rs:
            rs.append(torch.randn(*shape, dtype=dtype))
        return rs[0].to(dtype)

    y, rr, loss, grads, gin, hv = evaluate(copy.deepcopy(proto), mapping, leaves, inputs, r, v)
    check = 0.0
    if want is not None:
        check = float((y - want).abs().max() / want.abs().max())
        if check > (1e-4 if dtype == torch.float32 else 1e-9):
            raise SystemExit(f"{name}: the reference copy's output differs from the model's by {check:.2g}")
    for k in unused:
        grads[k] = torch.zeros(inits[k].shape)
    float_inputs = [n for n, t in zip(input_names, inputs) if t.is_floating_point()]
    rec = {
        "name": name, "dtype": str(dtype).replace("torch.", ""), "mode": mode,
        "inputs": [{"name": n, "dtype": "float" if t.is_floating_point() else "int64", **b64(t.to(torch.float64))}
                   for n, t in zip(input_names, inputs)],
        "output": b64(y), "r": b64(rr), "loss": loss, "grads": {k: b64(g) for k, g in grads.items()},
        "grad_inputs": {n: b64(g) for n, g in zip(float_inputs, gin)},
        "unreferenced": sorted(set(inits) - used), "matches": counts, "fused_pairs": fused, "check": check,
    }
    if v is not None:
        rec["v"] = {k: b64(t) for k, t in v.items()}
        rec["hv"] = {k: b64(t) for k, t in hv.items()}
    if dtype == torch.float32:
        # the same float32 model, inputs, r and v evaluated in float64: the exact values
        # that both float32 computations round
        leaves64 = {k: t.detach().double().requires_grad_() for k, t in leaves.items()}
        v64 = {k: t.double() for k, t in v.items()} if v is not None else None
        ins64 = [t.double() if t.is_floating_point() else t for t in inputs]
        m64 = copy.deepcopy(proto).double()
        with Kinks() as kinks:
            kinks.modules(m64)
            y64, _, loss64, grads64, gin64, hv64 = evaluate(m64, mapping, leaves64, ins64, lambda shape: rr.double(), v64)
        rec["kinks"] = {"margin": kinks.margin if kinks.calls and kinks.margin < math.inf else None,
                        "at_risk": kinks.at_risk, "calls": kinks.calls, "tau": KINK_TAU}
        for k in unused:
            grads64[k] = torch.zeros(inits[k].shape)
        rec["exact"] = {"output": b64(y64), "loss": loss64, "grads": {k: b64(g) for k, g in grads64.items()},
                        "grad_inputs": {n: b64(g) for n, g in zip(float_inputs, gin64)}}
        if hv64 is not None:
            rec["exact"]["hv"] = {k: b64(t) for k, t in hv64.items()}
    hs = hardsigmoid_attrs(base + ".onnx")
    if dtype == torch.float64 and hs is not None and hs != (1 / 6, 0.5):
        # the exported HardSigmoid's alpha is a float32 (0.1666666716337204 for PyTorch's 1/6):
        # in float64 the file's function is 3e-8 (relative) away from PyTorch's. PyTorch's
        # values for the file's function, and how far they are from the model's:
        mx = copy.deepcopy(proto)
        for n, mod in list(mx.named_modules()):
            if isinstance(mod, nn.Hardsigmoid):
                set_module(mx, n, ExportedHardSigmoid(*hs))
        lx = {k: t.detach().clone().requires_grad_() for k, t in leaves.items()}
        yx, _, lossx, gx, ginx, _ = evaluate(mx, mapping, lx, inputs, lambda shape: rr, None)
        for k in unused:
            gx[k] = torch.zeros(inits[k].shape)
        rel = lambda a, b: float((a - b).abs().max() / max(b.abs().max(), 1e-300))  # noqa: E731
        rec["exported"] = {
            "why": f"HardSigmoid's alpha attribute is the float32 {hs[0]!r}, not 1/6",
            "output": b64(yx), "loss": lossx, "grads": {k: b64(g) for k, g in gx.items()},
            "deviation": rel(yx, y), "grad_deviation": max(rel(gx[k], grads[k]) for k in gx),
        }
    rec["seconds"] = {"export": t1 - t0, "reference": time.time() - t1}
    with open(base + ".json", "w") as f:
        json.dump(rec, f)
    return base


def main(argv):
    args = argv[1:]
    dtypes = [torch.float64, torch.float32]
    if "--dtype" in args:
        i = args.index("--dtype")
        dtypes = [getattr(torch, args[i + 1])]
        del args[i:i + 2]
    parsed = outdir_and_models(args, MODELS, __doc__)
    if parsed is None:
        return 2
    outdir, names = parsed
    for name in names:
        for dtype in dtypes:
            print("ok", reference(name, dtype, outdir), flush=True)
    return 0


if __name__ == "__main__":
    import warnings
    warnings.filterwarnings("ignore")
    sys.exit(main(sys.argv))
