"""The JSON half of a fixture, as package onnxtest reads it (onnxtest.Fixture): the input,
PyTorch's output, the weights r of loss = sum(output * r), the loss, and its gradient with
respect to every parameter, by name, flattened."""

import json


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
