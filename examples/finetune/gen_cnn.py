#!/usr/bin/env python3
"""Exports examples/finetune/digits_cnn.onnx from PyTorch (Debian's python3-torch 1.13): a small
ResNet-style CNN for 1×28×28 digits at batch 32 — a 3×3 stem with batch norm, one basic block
(two 3×3 convolutions with batch norm and the identity shortcut), a stride-2 3×3 convolution to
32 channels, global average pooling and a linear layer to 10 logits — with PyTorch's own
initial weights (seed 5), exported as a user who trains it would (torch.onnx.export, opset 14,
training mode: batch norm normalises with the batch's statistics, a BatchNormalization node with
training_mode=1; in eval mode the exporter folds batch norm into the convolutions).
`go run ./examples/finetune -cnn` trains it on the built-in digits.

    /usr/bin/python3 examples/finetune/gen_cnn.py      (from the repository root)
"""
import os

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c1, self.b1 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)
        self.c2, self.b2 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)

    def forward(self, x):
        h = torch.relu(self.b1(self.c1(x)))
        return torch.relu(x + self.b2(self.c2(h)))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU())
        self.block = Block(16)
        self.down = nn.Sequential(nn.Conv2d(16, 32, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU())
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        h = self.down(self.block(self.stem(x)))
        return self.fc(h.mean((2, 3)))


torch.manual_seed(5)
model = Net().train()
x = torch.zeros(32, 1, 28, 28)
torch.onnx.export(model, (x,), os.path.join(HERE, "digits_cnn.onnx"), opset_version=14,
                  input_names=["x"], output_names=["logits"], do_constant_folding=False,
                  training=torch.onnx.TrainingMode.TRAINING)
print("parameters", sum(p.numel() for p in model.parameters()))
