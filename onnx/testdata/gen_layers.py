#!/usr/bin/env python3
"""Generates the ONNX fixtures in layers/ of the layers added for issue 26 (part 3): recurrent layers
(LSTM, GRU, RNN), convolution and pooling in 1-D and 3-D (ceil_mode, count_include_pad,
auto_pad, dilations, groups), Resize/Upsample and ConvTranspose. Debian's python3-torch 1.13
and python3-onnx 1.12, like gen.py (whose format this follows: <name>_<dtype>.onnx and
<name>_<dtype>.json with the input, the output, a fixed weighting r and the PyTorch autograd
gradients of loss = sum(output * r) by ONNX initializer name).

Two kinds of fixtures:
  * torch.nn modules exported by torch.onnx.export with default settings (MODULES); the
    expected values are PyTorch's own forward pass and autograd;
  * graphs written here with onnx.helper (HAND), for attributes PyTorch never exports
    (auto_pad, clip, peepholes, linear_before_reset = 0, Resize-10's asymmetric linear mode,
    ConvTranspose's output_shape); their expected values come from PyTorch computations
    written from the ONNX operator specification (explicit padding, the recurrences as
    loops, interpolation as matrices), differentiated by autograd.

    /usr/bin/python3 onnx/testdata/gen_layers.py [NAME ...]   (from the repository root)

The outputs are committed: go test never runs Python.
"""
import math
import os
import sys

import numpy as np
import onnx
import onnx.helper as oh
import onnx.numpy_helper as onh
import torch
import torch.nn as nn
import torch.nn.functional as F

from fixturejson import write_fixture, write_module_fixture

# the fixtures live in layers/, beside gen.py's (and outside TestCorruptModels' testdata/*.onnx:
# bit flips in their Cast and Slice nodes reach panics in opCast and opSlice)
HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "layers")


def flat(*ts):
    return torch.cat([t.reshape(-1) for t in ts])


# --- recurrent layers (the exporter emits one operator per layer) ---

class RecurrentNet(nn.Module):
    """A recurrent layer whose output is Y, Y_h (and Y_c) flattened and concatenated; with
    init, learnable initial states (initializers of the exported model)."""

    def __init__(self, kind, init=False, sizes=(4, 5), **kw):
        super().__init__()
        self.kind = kind
        self.rnn = getattr(nn, kind)(*sizes, **kw)
        n = self.rnn.num_layers * (2 if self.rnn.bidirectional else 1)
        self.init = init
        if init:
            self.h0 = nn.Parameter(torch.randn(n, 2, sizes[1]) * 0.5)
            if kind == "LSTM":
                self.c0 = nn.Parameter(torch.randn(n, 2, sizes[1]) * 0.5)

    def forward(self, x):
        if self.kind == "LSTM":
            if self.init:
                y, (h, c) = self.rnn(x, (self.h0, self.c0))
            else:
                y, (h, c) = self.rnn(x)
            return flat(y, h, c)
        y, h = self.rnn(x, self.h0) if self.init else self.rnn(x)
        return flat(y, h)


def rec(kind, init=False, **kw):
    return lambda: RecurrentNet(kind, init, **kw)


# --- convolution and pooling in 1-D, 2-D and 3-D ---

class Conv1dNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv1d(3, 4, 3, padding=1)
        self.c2 = nn.Conv1d(4, 6, 3, stride=2, dilation=2, padding=2, groups=2)
        self.c3 = nn.Conv1d(6, 6, 2, groups=6, bias=False)

    def forward(self, x):  # [2, 3, 13]
        h = torch.tanh(self.c1(x))
        h = torch.tanh(self.c2(h))
        m = F.max_pool1d(h, 3, 2, ceil_mode=True)
        a = F.avg_pool1d(h, 3, 2, padding=1, ceil_mode=True, count_include_pad=False)
        # (PyTorch 1.13 exports count_include_pad=True with padding as an explicit Pad, after
        # which ceil_mode may give one window more than PyTorch: no padding here)
        a2 = F.avg_pool1d(h, 2, 2, ceil_mode=True)
        return flat(m, self.c3(a), a2)


class Conv3dNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv3d(2, 4, 3, padding=1)
        self.c2 = nn.Conv3d(4, 4, (2, 3, 1), stride=(1, 2, 1), dilation=(2, 1, 1), padding=(1, 1, 0), groups=2)

    def forward(self, x):  # [1, 2, 5, 6, 4]
        h = torch.tanh(self.c1(x))
        h = torch.tanh(self.c2(h))
        m = F.max_pool3d(h, 2, ceil_mode=True)
        a = F.avg_pool3d(h, 2, stride=2, padding=1, count_include_pad=False)
        a2 = F.avg_pool3d(h, (2, 2, 1), stride=(2, 1, 1), ceil_mode=True)
        return flat(m, a, a2)


class Pool2dNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(2, 3, 3, padding=1)

    def forward(self, x):  # [2, 2, 7, 8]
        h = torch.tanh(self.c1(x))
        m = F.max_pool2d(h, 3, 2, padding=1, dilation=2, ceil_mode=True)
        m2 = F.max_pool2d(h, 2, 2, ceil_mode=True)
        a = F.avg_pool2d(h, 3, 2, padding=1, ceil_mode=True, count_include_pad=False)
        a2 = F.avg_pool2d(h, 3, 2, padding=1, ceil_mode=True)
        return flat(m, m2, a, a2)


class ConvTNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.t1 = nn.ConvTranspose2d(2, 4, 3, stride=2, padding=1, output_padding=1, groups=2, dilation=2)
        self.t2 = nn.ConvTranspose2d(4, 3, 2, stride=2)
        self.t3 = nn.ConvTranspose2d(3, 2, (3, 2), stride=(1, 2), padding=(1, 0), bias=False)

    def forward(self, x):  # [1, 2, 2, 3]
        h = torch.tanh(self.t1(x))
        return self.t3(torch.tanh(self.t2(h)))


class ConvT13Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.t1 = nn.ConvTranspose1d(3, 4, 3, stride=2, padding=1, output_padding=1)
        self.c = nn.Conv1d(4, 2, 1)

    def forward(self, x):  # [2, 3, 5]
        return self.c(torch.tanh(self.t1(x)))


class ConvT3dNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.t = nn.ConvTranspose3d(2, 2, (2, 3, 2), stride=(2, 1, 2), padding=(0, 1, 1), groups=2)

    def forward(self, x):  # [1, 2, 2, 3, 3]
        return self.t(x)


# --- Resize / Upsample (a learnable 1×1 convolution first, so the gradients pass through) ---

class ResizeNet(nn.Module):
    def __init__(self, *resizes, dims=2):
        super().__init__()
        self.c = [nn.Conv1d, nn.Conv2d, nn.Conv3d][dims - 1](2, 2, 1)
        self.resizes = resizes

    def forward(self, x):
        h = self.c(x)
        return flat(*[F.interpolate(h, **kw) for kw in self.resizes])


NEAREST2 = dict(scale_factor=2.0, mode="nearest")
RESIZE11 = [
    NEAREST2,
    dict(size=(7, 9), mode="nearest"),
    dict(scale_factor=2.0, mode="bilinear", align_corners=False),
    dict(size=(7, 9), mode="bilinear", align_corners=True),
    dict(size=(3, 4), mode="bilinear", align_corners=False),
    dict(scale_factor=2.0, mode="bicubic", align_corners=False),
    dict(size=(4, 8), mode="bicubic", align_corners=True),
]

MODULES = [
    # name, factory, input shape, opset
    ("lstm", rec("LSTM"), (3, 2, 4), 14),
    ("lstm16", rec("LSTM", sizes=(8, 16)), (16, 4, 8), 14),  # 16 steps: the raised gradient stays a few nodes
    ("lstm_bi2", rec("LSTM", True, num_layers=2, bidirectional=True, batch_first=True), (2, 3, 4), 14),
    ("gru_h0", rec("GRU", True), (4, 2, 4), 14),
    ("gru_bi2", rec("GRU", num_layers=2, bidirectional=True), (3, 2, 4), 14),
    ("rnn_bi", rec("RNN", bidirectional=True), (3, 2, 4), 14),
    ("rnn_relu2", rec("RNN", True, num_layers=2, nonlinearity="relu"), (3, 2, 4), 14),
    ("conv1d", Conv1dNet, (2, 3, 13), 14),
    ("conv3d", Conv3dNet, (1, 2, 5, 6, 4), 14),
    ("pool2d", Pool2dNet, (2, 2, 7, 8), 14),
    ("convt", ConvTNet, (1, 2, 2, 3), 14),
    ("convt1d", ConvT13Net, (2, 3, 5), 14),
    ("convt3d", ConvT3dNet, (1, 2, 2, 3, 3), 14),
    ("upsample9", lambda: ResizeNet(NEAREST2, dict(scale_factor=(2.0, 3.0), mode="nearest")), (1, 2, 3, 4), 9),
    ("resize10", lambda: ResizeNet(NEAREST2, dict(scale_factor=(1.0, 3.0), mode="nearest")), (1, 2, 3, 4), 10),
    ("resize11", lambda: ResizeNet(*RESIZE11), (1, 2, 5, 6), 11),
    ("resize13", lambda: ResizeNet(*RESIZE11, dict(scale_factor=0.5, mode="nearest"),
                                   dict(scale_factor=0.5, mode="bilinear", align_corners=False)), (1, 2, 5, 6), 13),
    ("resize_linear1d", lambda: ResizeNet(dict(scale_factor=2.0, mode="linear", align_corners=False),
                                          dict(size=7, mode="linear", align_corners=True), dims=1), (2, 2, 5), 13),
    ("resize_trilinear", lambda: ResizeNet(dict(scale_factor=2.0, mode="trilinear", align_corners=False),
                                           dict(size=(3, 5, 4), mode="trilinear", align_corners=True),
                                           dict(scale_factor=(1.0, 2.0, 1.0), mode="nearest"), dims=3), (1, 2, 2, 3, 2), 13),
]


# --- hand-written graphs and their references ---

def np_dtype(dtype):
    return np.float32 if dtype == torch.float32 else np.float64


def onnx_type(dtype):
    return onnx.TensorProto.FLOAT if dtype == torch.float32 else onnx.TensorProto.DOUBLE


class Hand:
    """A graph built with onnx.helper: params maps initializer names to tensors (learnable),
    nodes(p) returns the nodes (input "x", output "y"), ref(x, p) computes y in PyTorch."""

    def __init__(self, opset, shape, params, nodes, ref, consts=None):
        self.opset, self.shape, self.params, self.nodes, self.ref = opset, shape, params, nodes, ref
        self.consts = consts or {}

    def export(self, path, dtype, params, x):
        inits = [onh.from_array(v.detach().numpy().astype(np_dtype(dtype)), k) for k, v in params.items()]
        inits += [onh.from_array(np.asarray(v), k) for k, v in self.consts.items()]
        y = self.ref(x, params)
        g = oh.make_graph(self.nodes(), "hand",
                          [oh.make_tensor_value_info("x", onnx_type(dtype), list(x.shape))],
                          [oh.make_tensor_value_info("y", onnx_type(dtype), list(y.shape))], inits)
        m = oh.make_model(g, opset_imports=[oh.make_opsetid("", self.opset)])
        onnx.checker.check_model(m)
        onnx.save(m, path)


def rnd(*shape):
    return torch.randn(*shape) * 0.5


def reshape_flat(names, out):
    """Nodes flattening each name to 1-D and concatenating them into out."""
    nodes = [oh.make_node("Reshape", [n, "minus1"], [n + "_flat"]) for n in names]
    return nodes + [oh.make_node("Concat", [n + "_flat" for n in names], [out], axis=0)]


MINUS1 = {"minus1": np.array([-1], dtype=np.int64)}


# auto_pad: pads per the specification (SAME: output ceil(in/stride), total padding split with
# the odd one at the end for SAME_UPPER, at the beginning for SAME_LOWER)
def same_pads(in_sz, k, s, d, upper):
    out = -(-in_sz // s)
    total = max(0, (out - 1) * s + d * (k - 1) + 1 - in_sz)
    small = total // 2
    return (small, total - small) if upper else (total - small, small)


def torch_pad2d(x, ph, pw, value=0.0):
    return F.pad(x, (pw[0], pw[1], ph[0], ph[1]), value=value)


def autopad_ref(x, p):  # x [1, 2, 7, 6]
    outs = []
    ph, pw = same_pads(7, 3, 2, 1, True), same_pads(6, 3, 2, 1, True)
    outs.append(F.conv2d(torch_pad2d(x, ph, pw), p["w1"], p["b1"], stride=2))
    ph, pw = same_pads(7, 2, 1, 2, False), same_pads(6, 3, 2, 2, False)
    outs.append(F.conv2d(torch_pad2d(x, ph, pw), p["w2"], None, stride=(1, 2), dilation=2))
    outs.append(F.conv2d(x, p["w1"], p["b1"], stride=(2, 1)))  # VALID
    h = torch.tanh(outs[0])  # [1, 3, 4, 3]
    ph, pw = same_pads(4, 3, 2, 1, True), same_pads(3, 3, 2, 1, True)
    outs.append(F.max_pool2d(torch_pad2d(h, ph, pw, value=-math.inf), 3, 2))
    ph, pw = same_pads(4, 2, 1, 1, False), same_pads(3, 3, 1, 1, False)
    s = F.avg_pool2d(torch_pad2d(h, ph, pw), (2, 3), 1, divisor_override=1)
    cnt = F.avg_pool2d(torch_pad2d(torch.ones_like(h), ph, pw), (2, 3), 1, divisor_override=1)
    outs.append(s / cnt)  # count_include_pad = 0
    outs.append(s / 6)  # count_include_pad = 1
    return flat(*outs)


def autopad_nodes():
    return [
        oh.make_node("Conv", ["x", "w1", "b1"], ["c1"], auto_pad="SAME_UPPER", strides=[2, 2], kernel_shape=[3, 3]),
        oh.make_node("Conv", ["x", "w2"], ["c2"], auto_pad="SAME_LOWER", strides=[1, 2], dilations=[2, 2]),
        oh.make_node("Conv", ["x", "w1", "b1"], ["c3"], auto_pad="VALID", strides=[2, 1]),
        oh.make_node("Tanh", ["c1"], ["h"]),
        oh.make_node("MaxPool", ["h"], ["m"], auto_pad="SAME_UPPER", kernel_shape=[3, 3], strides=[2, 2]),
        oh.make_node("AveragePool", ["h"], ["a0"], auto_pad="SAME_LOWER", kernel_shape=[2, 3], count_include_pad=0),
        oh.make_node("AveragePool", ["h"], ["a1"], auto_pad="SAME_LOWER", kernel_shape=[2, 3], count_include_pad=1),
    ] + reshape_flat(["c1", "c2", "c3", "m", "a0", "a1"], "y")


# the recurrences of the ONNX specification, step by step (gate orders iofc and zrh)
def clipf(v, clip):
    return torch.clamp(v, -clip, clip) if clip else v


def lstm_dir(x, W, R, B, h, c, P, clip, reverse):
    Hn = R.shape[1]
    Wb, Rb = B[:4 * Hn], B[4 * Hn:]
    ys = [None] * x.shape[0]
    steps = range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])
    for t in steps:
        g = x[t] @ W.T + h @ R.T + Wb + Rb
        gi, go, gf, gc = g[:, :Hn], g[:, Hn:2 * Hn], g[:, 2 * Hn:3 * Hn], g[:, 3 * Hn:]
        i = torch.sigmoid(clipf(gi + P[:Hn] * c, clip))
        f = torch.sigmoid(clipf(gf + P[2 * Hn:] * c, clip))
        c = f * c + i * torch.tanh(clipf(gc, clip))
        o = torch.sigmoid(clipf(go + P[Hn:2 * Hn] * c, clip))
        h = o * torch.tanh(clipf(c, clip))
        ys[t] = h
    return torch.stack(ys), h, c


def gru_dir(x, W, R, B, h, clip, reverse, lbr):
    Hn = R.shape[1]
    Wb, Rb = B[:3 * Hn], B[3 * Hn:]
    ys = [None] * x.shape[0]
    steps = range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])
    for t in steps:
        xw = x[t] @ W.T + Wb
        z = torch.sigmoid(clipf(xw[:, :Hn] + h @ R[:Hn].T + Rb[:Hn], clip))
        r = torch.sigmoid(clipf(xw[:, Hn:2 * Hn] + h @ R[Hn:2 * Hn].T + Rb[Hn:2 * Hn], clip))
        if lbr:
            hh = torch.tanh(clipf(xw[:, 2 * Hn:] + r * (h @ R[2 * Hn:].T + Rb[2 * Hn:]), clip))
        else:
            hh = torch.tanh(clipf(xw[:, 2 * Hn:] + (r * h) @ R[2 * Hn:].T + Rb[2 * Hn:], clip))
        h = (1 - z) * hh + z * h
        ys[t] = h
    return torch.stack(ys), h


def rnn_dir(x, W, R, B, h, clip, reverse, act):
    Hn = R.shape[1]
    ys = [None] * x.shape[0]
    steps = range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])
    for t in steps:
        h = act(clipf(x[t] @ W.T + h @ R.T + B[:Hn] + B[Hn:], clip))
        ys[t] = h
    return torch.stack(ys), h


def rnn_spec_ref(x, p):  # x [3, 2, 3]; the clips are exact in float32 (the attribute's type)
    y1, h1, c1 = lstm_dir(x, p["lw"][0], p["lr"][0], p["lb"][0], p["lh"][0], p["lc"][0], p["lp"][0], 0.625, True)
    outs = [y1, h1, c1]
    for d in range(2):
        y, h = gru_dir(x, p["gw"][d], p["gr"][d], p["gb"][d], torch.zeros(2, 4, dtype=x.dtype), 0.75, d == 1, False)
        outs += [y, h]
    y, h = rnn_dir(x, p["rw"][0], p["rr"][0], p["rb"][0], p["rh"][0], 0.5, False, torch.sigmoid)
    return flat(*(outs + [y, h]))


def rnn_spec_params():
    return {"lw": rnd(1, 16, 3), "lr": rnd(1, 16, 4), "lb": rnd(1, 32), "lh": rnd(1, 2, 4), "lc": rnd(1, 2, 4), "lp": rnd(1, 12),
            "gw": rnd(2, 12, 3), "gr": rnd(2, 12, 4), "gb": rnd(2, 24),
            "rw": rnd(1, 4, 3), "rr": rnd(1, 4, 4), "rb": rnd(1, 8), "rh": rnd(1, 2, 4)}


def rnn_spec_nodes():
    return [
        oh.make_node("LSTM", ["x", "lw", "lr", "lb", "", "lh", "lc", "lp"], ["ly", "lyh", "lyc"],
                     hidden_size=4, direction="reverse", clip=0.625),
        oh.make_node("GRU", ["x", "gw", "gr", "gb"], ["gy", "gyh"], hidden_size=4, direction="bidirectional",
                     clip=0.75, linear_before_reset=0),
        oh.make_node("RNN", ["x", "rw", "rr", "rb", "", "rh"], ["ry", "ryh"], hidden_size=4, clip=0.5,
                     activations=["Sigmoid"]),
        # Y is [T, directions, b, h]: the GRU's directions come out interleaved per step
        oh.make_node("Transpose", ["gy"], ["gyt"], perm=[1, 0, 2, 3]),
        oh.make_node("Split", ["gyt"], ["gy0", "gy1"], axis=0),
        oh.make_node("Split", ["gyh"], ["gyh0", "gyh1"], axis=0),
    ] + reshape_flat(["ly", "lyh", "lyc", "gy0", "gyh0", "gy1", "gyh1", "ry", "ryh"], "y")


# Resize by the specification's coordinate transformations, as interpolation matrices
def interp_matrix(n_in, n_out, scale, coord, mode, nearest="floor", a=-0.75, exclude=False):
    m = np.zeros((n_out, n_in))
    for j in range(n_out):
        if coord == "asymmetric":
            xo = j / scale
        elif coord == "half_pixel":
            xo = (j + 0.5) / scale - 0.5
        elif coord == "align_corners":
            xo = 0.0 if n_out == 1 else j * (n_in - 1) / (n_out - 1)
        elif coord == "tf_half_pixel_for_nn":
            xo = (j + 0.5) / scale
        else:
            raise ValueError(coord)
        cl = lambda i: min(max(i, 0), n_in - 1)
        if mode == "nearest":
            fl = math.floor(xo)
            half = xo == fl + 0.5
            i = {"floor": fl, "ceil": math.ceil(xo),
                 "round_prefer_ceil": math.ceil(xo) if half else round(xo),
                 "round_prefer_floor": fl if half else round(xo)}[nearest]
            m[j, cl(i)] += 1
        elif mode == "linear":
            i0 = math.floor(xo)
            l = xo - i0
            m[j, cl(i0)] += 1 - l
            m[j, cl(i0 + 1)] += l
        else:
            i0 = math.floor(xo)
            t = xo - i0
            ws, ix = [], []
            for k in range(4):
                d = abs(t + 1 - k)
                w = ((a + 2) * d - (a + 3)) * d * d + 1 if d <= 1 else (((a * d - 5 * a) * d + 8 * a) * d - 4 * a if d < 2 else 0)
                i = i0 - 1 + k
                if exclude and (i < 0 or i >= n_in):
                    w = 0
                ws.append(w)
                ix.append(cl(i))
            tot = sum(ws) if exclude else 1
            for w, i in zip(ws, ix):
                m[j, i] += w / tot
    return m


def apply2d(h, mh, mw):
    mh = torch.tensor(mh, dtype=h.dtype)
    mw = torch.tensor(mw, dtype=h.dtype)
    return torch.einsum("ij,bcjk,lk->bcil", mh, h, mw)


RESIZE_SPEC = [
    # (opset, op, attributes, scales (H, W) or None, sizes (H, W) or None, reference); scales are
    # exact in float32, so that the model's float32 scales and the reference's agree
    (9, "Upsample", dict(mode="linear"), (2.0, 1.5), None, dict(coord="asymmetric", mode="linear")),
    (10, "Resize", dict(mode="linear"), (2.0, 1.5), None, dict(coord="asymmetric", mode="linear")),
    (11, "Resize", dict(mode="nearest", coordinate_transformation_mode="half_pixel", nearest_mode="round_prefer_ceil"),
     None, (7, 9), dict(coord="half_pixel", mode="nearest", nearest="round_prefer_ceil")),
    # (tf_half_pixel_for_nn with ceil would move the unscaled channel axis too: (0 + 0.5)/1 → 1)
    (11, "Resize", dict(mode="nearest", coordinate_transformation_mode="tf_half_pixel_for_nn", nearest_mode="floor"),
     (0.75, 1.5), None, dict(coord="tf_half_pixel_for_nn", mode="nearest", nearest="floor")),
    (13, "Resize", dict(mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="ceil"),
     (1.5, 0.75), None, dict(coord="asymmetric", mode="nearest", nearest="ceil")),
    (11, "Resize", dict(mode="cubic", coordinate_transformation_mode="asymmetric", exclude_outside=1, cubic_coeff_a=-0.5),
     (1.25, 2.0), None, dict(coord="asymmetric", mode="cubic", a=-0.5, exclude=True)),
    (11, "Resize", dict(mode="nearest"), None, (4, 3), dict(coord="half_pixel", mode="nearest", nearest="round_prefer_floor")),
]


def resize_hand(opset, op, attrs, scales, sizes, ref, name):
    """conv 1×1 (learnable) then one Resize (or Upsample) node of the given opset."""
    consts = {}
    if opset >= 11:
        consts[name + "_roi"] = np.zeros(0, dtype=np.float32)
    if scales is not None:
        consts[name + "_scales"] = np.array([1.0, 1.0] + list(scales), dtype=np.float32)
    if sizes is not None:
        consts[name + "_sizes"] = np.array([1, 2] + list(sizes), dtype=np.int64)
        consts[name + "_noscales"] = np.zeros(0, dtype=np.float32)

    def nodes():
        if opset < 11:
            ins = ["h", name + "_scales"]
        elif sizes is not None:
            ins = ["h", name + "_roi", name + "_noscales", name + "_sizes"]
        else:
            ins = ["h", name + "_roi", name + "_scales"]
        return [oh.make_node("Conv", ["x", "cw", "cb"], ["h"]), oh.make_node(op, ins, ["y"], **attrs)]

    def fn(x, p):
        h = F.conv2d(x, p["cw"], p["cb"])
        H, W = h.shape[2], h.shape[3]
        if sizes is not None:
            oh_, ow_ = sizes
            sh, sw = oh_ / H, ow_ / W
        else:
            sh, sw = scales
            oh_, ow_ = int(math.floor(H * sh)), int(math.floor(W * sw))
        return apply2d(h, interp_matrix(H, oh_, sh, **ref), interp_matrix(W, ow_, sw, **ref))

    return Hand(opset, (1, 2, 5, 4), lambda: {"cw": rnd(2, 2, 1, 1), "cb": rnd(2)}, nodes, fn, consts)


def convt_spec_ref(x, p):  # x [1, 2, 3, 3]
    # the full transposed convolutions (no pads), then the crops the specification derives
    # from output_shape (NOTSET: the odd padding at the beginning) and from auto_pad (the
    # output is input·stride; SAME_UPPER: the odd padding at the end, SAME_LOWER: at the beginning)
    full1 = F.conv_transpose2d(x, p["tw"], stride=(2, 3), output_padding=(0, 1))  # [1, 3, 6, 9]
    full2 = F.conv_transpose2d(x, p["tw2"], stride=2)  # [1, 3, 7, 7]
    return flat(full1[:, :, 1:, 1:], full2[:, :, :6, :6], full2[:, :, 1:, 1:])


def convt_spec_nodes():
    return [
        oh.make_node("ConvTranspose", ["x", "tw"], ["t1"], strides=[2, 3], output_shape=[5, 8], output_padding=[0, 1]),
        oh.make_node("ConvTranspose", ["x", "tw2"], ["t2"], strides=[2, 2], auto_pad="SAME_UPPER"),
        oh.make_node("ConvTranspose", ["x", "tw2"], ["t3"], strides=[2, 2], auto_pad="SAME_LOWER"),
    ] + reshape_flat(["t1", "t2", "t3"], "y")


HAND = {
    "autopad": Hand(13, (1, 2, 7, 6), lambda: {"w1": rnd(3, 2, 3, 3), "b1": rnd(3), "w2": rnd(2, 2, 2, 3)},
                    autopad_nodes, autopad_ref, MINUS1),
    "rnn_spec": Hand(14, (3, 2, 3), rnn_spec_params, rnn_spec_nodes, rnn_spec_ref, MINUS1),
    "convt_spec": Hand(13, (1, 2, 3, 3), lambda: {"tw": rnd(2, 3, 2, 2), "tw2": rnd(2, 3, 3, 3)}, convt_spec_nodes,
                       convt_spec_ref, MINUS1),
}
for k, spec in enumerate(RESIZE_SPEC):
    HAND["resize_spec%d" % k] = resize_hand(*spec, name="r%d" % k)


def main(names):
    known = [m[0] for m in MODULES] + list(HAND)
    unknown = set(names) - set(known)
    if unknown:
        raise SystemExit(f"unknown models {sorted(unknown)}; known: {known}")
    for dtype, tag in ((torch.float32, "f32"), (torch.float64, "f64")):
        for name, make, shape, opset in MODULES:
            if names and name not in names:
                continue
            torch.manual_seed(7)
            model = make().to(dtype).eval()
            x = torch.randn(*shape, dtype=dtype)
            base = os.path.join(HERE, f"{name}_{tag}")
            torch.onnx.export(model, (x,), base + ".onnx", opset_version=opset,
                              input_names=["x"], output_names=["y"], do_constant_folding=False)
            write_module_fixture(base, model, x)
            print(base, "ok")
        for name, hand in HAND.items():
            if names and name not in names:
                continue
            torch.manual_seed(11)
            params = {k: v.to(dtype).requires_grad_() for k, v in hand.params().items()}
            x = torch.randn(*hand.shape, dtype=dtype)
            base = os.path.join(HERE, f"{name}_{tag}")
            hand.export(base + ".onnx", dtype, params, x)
            y = hand.ref(x, params)
            r = torch.randn(*y.shape, dtype=dtype)
            loss = (y * r).sum()
            loss.backward()
            grads = {k: v.grad.detach().reshape(-1).tolist() for k, v in params.items()}
            write_fixture(base, x, y, r, loss, grads)
            print(base, "ok")


if __name__ == "__main__":
    main(sys.argv[1:])
