#!/usr/bin/env python3
"""Generates the ONNX fixtures of package onnx from PyTorch (Debian's python3-torch 1.13 and
python3-onnx 1.12): each model is exported to <name>_<dtype>.onnx, and <name>_<dtype>.json holds
its input, the output, a fixed weighting r and the PyTorch autograd gradients of
loss = sum(output * r) with respect to every parameter (by its ONNX initializer name).

    /usr/bin/python3 onnx/testdata/gen.py [NAME ...]   (from the repository root; rewrites the
                                                    files of the named models, or of all)

The outputs are committed: go test never runs Python.
"""
import os
import sys

import torch
import torch.nn as nn

from fixturejson import write_module_fixture

HERE = os.path.dirname(os.path.abspath(__file__))


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        return torch.log_softmax(self.fc2(torch.tanh(self.fc1(x))), dim=1)


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.conv2 = nn.Conv2d(4, 4, 3, padding=1, groups=2)
        self.fc = nn.Linear(4 * 2 * 2, 5)

    def forward(self, x):
        h = torch.max_pool2d(torch.relu(self.bn(self.conv(x))), 2)
        h = torch.nn.functional.avg_pool2d(torch.sigmoid(self.conv2(h)), 2)
        return self.fc(torch.flatten(h, 1))


class GRU(nn.Module):
    """A GRU cell unrolled over 3 steps; the output is the last hidden state."""

    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(4, 5)
        self.out = nn.Linear(5, 2)

    def forward(self, x):  # x: [steps, batch, 4]
        h = torch.zeros(x.shape[1], 5, dtype=x.dtype)
        for t in range(x.shape[0]):
            h = self.cell(x[t], h)
        return self.out(h)


class Block(nn.Module):
    """A tiny transformer block: single-head self-attention and a GELU MLP, pre-norm, residuals."""

    def __init__(self, d=8):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)
        self.v = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.ff1 = nn.Linear(d, 2 * d)
        self.ff2 = nn.Linear(2 * d, d)
        self.d = d

    def forward(self, x):  # x: [n, d]
        h = self.ln1(x)
        a = torch.softmax(self.q(h) @ self.k(h).transpose(0, 1) / self.d ** 0.5, dim=-1)
        x = x + a @ self.v(h)
        return x + self.ff2(torch.nn.functional.gelu(self.ff1(self.ln2(x))))


class LinearHead(nn.Module):
    """A linear layer fc from n_in to 6 features, whose output h the subclass's head maps to y."""

    n_in = 0

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(self.n_in, 6)

    def forward(self, x):
        return self.head(self.fc(x))


class Gated(LinearHead):
    """where, clamp, comparisons and a reduction: y = sum over columns of where(h > 0, h, elu(h))."""

    n_in = 5

    def head(self, h):
        g = torch.where(h > 0, h, torch.exp(torch.clamp(h, -3.0, 0.0)) - 1)
        return g.sum(dim=1, keepdim=True) * torch.sigmoid(h)


class Scans(LinearHead):
    """cumsum (forward and reversed), product and minimum reductions, logsumexp."""

    n_in = 4

    def head(self, h):
        p = torch.prod(torch.sigmoid(h), dim=1, keepdim=True)
        c = torch.cumsum(h, dim=1) + torch.flip(torch.cumsum(torch.flip(h, [1]), dim=1), [1])
        return c * p + torch.amin(h, dim=1, keepdim=True) + torch.logsumexp(h, dim=1, keepdim=True)


class SepConv(nn.Module):
    """Depthwise-separable convolutions (MobileNet style): a depthwise convolution with channel
    multiplier 2 and stride 2, a pointwise one, a dilated depthwise one without bias, and a
    grouped one with 3 channels per group, with ReLU6 and tanh between them."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3, padding=1)
        self.dw = nn.Conv2d(4, 8, 3, stride=2, padding=1, groups=4)
        self.pw = nn.Conv2d(8, 6, 1)
        self.dw2 = nn.Conv2d(6, 6, 3, padding=2, dilation=2, groups=6, bias=False)
        self.gc = nn.Conv2d(6, 6, 3, padding=1, groups=2)
        self.fc = nn.Linear(6, 3)

    def forward(self, x):
        h = torch.nn.functional.relu6(self.conv(x))
        h = torch.nn.functional.relu6(self.pw(torch.nn.functional.relu6(self.dw(h))))
        h = torch.tanh(self.gc(torch.tanh(self.dw2(h))))
        return self.fc(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(h, 1), 1))


MODELS = [
    ("mlp", MLP, (4, 6)),
    ("lenet", LeNet, (2, 1, 8, 8)),
    ("gru", GRU, (3, 2, 4)),
    ("block", Block, (5, 8)),
    ("gated", Gated, (4, 5)),
    ("scans", Scans, (3, 4)),
    ("sepconv", SepConv, (2, 2, 8, 8)),
]


def main(names):
    unknown = set(names) - {m[0] for m in MODELS}
    if unknown:
        raise SystemExit(f"unknown models {sorted(unknown)}; known: {[m[0] for m in MODELS]}")
    for name, cls, shape in MODELS:
        if names and name not in names:
            continue
        for dtype, tag in ((torch.float32, "f32"), (torch.float64, "f64")):
            torch.manual_seed(7)
            model = cls().to(dtype)
            if name == "block":  # distinct layer-norm parameters (the exporter merges equal initializers)
                with torch.no_grad():
                    for ln in (model.ln1, model.ln2):
                        ln.weight.uniform_(0.5, 1.5)
                        ln.bias.uniform_(-0.5, 0.5)
            if name == "lenet":  # give batch norm running statistics that are not 0 and 1
                with torch.no_grad():
                    model.bn.running_mean.uniform_(-0.5, 0.5)
                    model.bn.running_var.uniform_(0.5, 1.5)
                    model.bn.weight.uniform_(0.5, 1.5)
                    model.bn.bias.uniform_(-0.5, 0.5)
            # lenet keeps batch norm in training mode (batch statistics, a BatchNormalization
            # node with training_mode=1); in eval mode the exporter folds it into the conv.
            training = name == "lenet"
            model.train(training)
            x = torch.randn(*shape, dtype=dtype)
            base = os.path.join(HERE, f"{name}_{tag}")
            mode = torch.onnx.TrainingMode.TRAINING if training else torch.onnx.TrainingMode.EVAL
            state = {k: v.clone() for k, v in model.state_dict().items()}
            torch.onnx.export(model, (x,), base + ".onnx", opset_version=14,
                              input_names=["x"], output_names=["y"],
                              do_constant_folding=False, training=mode)
            model.load_state_dict(state)  # the export ran the model once (running statistics)
            write_module_fixture(base, model, x)
            print(base, "ok")


if __name__ == "__main__":
    main(sys.argv[1:])
