#!/usr/bin/env python3
"""Exports torchvision models to ONNX for measuring and testing bulkad's importer on real
networks (Debian's python3-torch 1.13, python3-torchvision 0.14).

    /usr/bin/python3 tests/torchvision/export.py [--reference] [--float64] OUTDIR [MODEL ...]

Each model is built with weights=None (random initialisation, seed 0; nothing is downloaded),
in eval mode, float32 (float64 with --float64), for an input of batch 2 and 3x64x64, and
exported with torch.onnx.export's defaults (default operator set, constant folding) to
OUTDIR/<name>.onnx, with the input named x and the output y. Without MODEL arguments every model in MODELS is
exported. With --reference, OUTDIR/<name>.json holds a random input, PyTorch's output for it,
a fixed weighting r, loss = sum(output * r) and the autograd gradient of the loss with respect
to the input (keys input, output, r, loss, grad_input; arrays as {"shape", "data"} or flat).
float64 references are for tests: in float32 a pre-activation a few ulps from a ReLU kink
(mnasnet0_5 has one at 4e-8 of the largest) may round to either side, and the gradient then
differs in the whole receptive field.

The .onnx files are megabytes to tens of megabytes: write them outside the repository.
"""
import json
import os
import sys

import torch
import torchvision

from modelargs import outdir_and_models

MODELS = [
    "resnet18",
    "mobilenet_v2",
    "efficientnet_b0",
    "mnasnet0_5",
    "densenet121",
    "regnet_x_400mf",
    "shufflenet_v2_x0_5",
]


def main(argv):
    args = argv[1:]
    reference = "--reference" in args
    dtype = torch.float64 if "--float64" in args else torch.float32
    args = [a for a in args if a not in ("--reference", "--float64")]
    parsed = outdir_and_models(args, MODELS, __doc__)
    if parsed is None:
        return 2
    out, names = parsed
    for name in names:
        torch.manual_seed(0)
        model = getattr(torchvision.models, name)(weights=None).eval().to(dtype)
        x = torch.randn(2, 3, 64, 64, dtype=dtype)
        path = os.path.join(out, name + ".onnx")
        torch.onnx.export(model, (x,), path, input_names=["x"], output_names=["y"])
        print(path, os.path.getsize(path), "bytes")
        if reference:
            xg = x.clone().requires_grad_(True)
            y = model(xg)
            r = torch.randn(*y.shape, dtype=dtype)
            loss = (y * r).sum()
            loss.backward()
            with open(os.path.join(out, name + ".json"), "w") as f:
                json.dump({
                    "input": {"shape": list(x.shape), "data": x.reshape(-1).tolist()},
                    "output": {"shape": list(y.shape), "data": y.detach().reshape(-1).tolist()},
                    "r": r.reshape(-1).tolist(),
                    "loss": loss.item(),
                    "grad_input": xg.grad.reshape(-1).tolist(),
                }, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
