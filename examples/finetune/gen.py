#!/usr/bin/env python3
"""Exports examples/finetune/iris_mlp.onnx from PyTorch (Debian's python3-torch 1.13): an MLP
4 → 16 → 3 (tanh) over the 150 iris flowers as one batch (the example fine-tunes on 120 and
holds 30 out), pre-trained for only 15 SGD steps on standardised features, so fine-tuning has
work to do.

    /usr/bin/python3 examples/finetune/gen.py      (from the repository root)
"""
import csv
import os

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
rows = list(csv.reader(open(os.path.join(HERE, "..", "data", "iris.csv"))))[1:]
names = sorted({r[4] for r in rows})
x = torch.tensor([[float(v) for v in r[:4]] for r in rows])
y = torch.tensor([names.index(r[4]) for r in rows])
x = (x - x.mean(0)) / x.std(0)

torch.manual_seed(3)
model = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for _ in range(15):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
print("pre-trained loss", loss.item())
model.eval()
torch.onnx.export(model, (x,), os.path.join(HERE, "iris_mlp.onnx"), opset_version=13,
                  input_names=["x"], output_names=["logits"], do_constant_folding=False)
