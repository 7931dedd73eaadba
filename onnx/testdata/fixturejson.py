"""The JSON half of a fixture, as package onnxtest reads it (onnxtest.Fixture): the input,
PyTorch's output, the weights r of loss = sum(output * r), the loss, and its gradient with
respect to every parameter, by name, flattened."""

import json

import torch


def write_fixture(base, x, y, r, loss, grads):
    """Writes base + ".json" for the input x, the output y, the weights r, the scalar loss
    (a tensor) and grads (name -> list of floats)."""
    with open(base + ".json", "w") as f:
        json.dump({
            "input": {"shape": list(x.shape), "data": x.reshape(-1).tolist()},
            "output": {"shape": list(y.shape), "data": y.detach().reshape(-1).tolist()},
            "r": r.reshape(-1).tolist(),
            "loss": loss.item(),
            "grads": grads,
        }, f)


def write_module_fixture(base, model, x, weights=None):
    """Runs model on x and writes base + ".json" for loss = sum(model(x) * r), with
    r = weights(y) (torch.randn of y's shape, drawn after the forward pass, when weights is
    None) and the gradients of every parameter autograd reached (none when the output does
    not require a gradient)."""
    y = model(x)
    r = torch.randn(*y.shape, dtype=x.dtype) if weights is None else weights(y)
    loss = (y * r).sum()
    model.zero_grad()
    grads = {}
    if y.requires_grad:
        loss.backward()
        grads = {n: p.grad.detach().reshape(-1).tolist() for n, p in model.named_parameters()
                 if p.grad is not None}
    write_fixture(base, x, y, r, loss, grads)
