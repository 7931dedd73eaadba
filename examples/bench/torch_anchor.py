"""PyTorch anchor for examples/bench -torch (run as a subprocess by the Go command).

The same four models as examples/models at the bench's sizes (MLP 784-512-10 b128, convnet
28x28x32 b32, tanh RNN 64->128 x16 b32, single-head attention 128x64), forward and backward
(loss.backward(), gradients of the parameters), in float64 and float32. It reads commands on
stdin, one per line, and answers one line each, so the Go side can alternate its steps with
these:

    threads N          -> "ok"           torch.set_num_threads(N) (OpenBLAS follows)
    step MODEL DTYPE   -> milliseconds of one step (forward + backward), measured here
    gemm M N K DTYPE   -> GFLOP/s of numpy's a @ b (m×k times k×n, best of 7 runs)
    quit

MODEL is mlp, convnet, rnn or attention; DTYPE is float64 or float32. Needs python3-torch
(Debian: apt-get install python3-torch libopenblas0-pthread).
"""
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F


def uniform(gen, scale, *shape, dtype):
    return (torch.rand(*shape, generator=gen, dtype=torch.float64) * 2 - 1).mul_(scale).to(dtype)


def one_hot(gen, n, k, dtype):
    y = torch.zeros(n, k, dtype=dtype)
    y[torch.arange(n), torch.randint(k, (n,), generator=gen)] = 1
    return y


def param(gen, scale, *shape, dtype):
    return uniform(gen, scale, *shape, dtype=dtype).requires_grad_()


def softmax_xent(logits, y):
    return -(y * F.log_softmax(logits, dim=1)).sum(1).mean()


def mlp(dtype):
    g = torch.Generator().manual_seed(1)
    x, y = uniform(g, 1, 128, 784, dtype=dtype), one_hot(g, 128, 10, dtype)
    w0, b0 = param(g, 784 ** -0.5, 784, 512, dtype=dtype), param(g, 0.1, 512, dtype=dtype)
    w1, b1 = param(g, 512 ** -0.5, 512, 10, dtype=dtype), param(g, 0.1, 10, dtype=dtype)
    return lambda: softmax_xent(torch.relu(x @ w0 + b0) @ w1 + b1, y), [w0, b0, w1, b1]


def convnet(dtype):
    g = torch.Generator().manual_seed(1)
    x, y = uniform(g, 1, 32, 1, 28, 28, dtype=dtype), one_hot(g, 32, 10, dtype)
    f = param(g, 1 / 3, 32, 1, 3, 3, dtype=dtype)
    flat = 32 * 14 * 14
    wd, bd = param(g, flat ** -0.5, flat, 10, dtype=dtype), param(g, 0.1, 10, dtype=dtype)

    def loss():
        p = F.max_pool2d(torch.relu(F.conv2d(x, f, padding=1)), 2)
        return softmax_xent(p.reshape(32, flat) @ wd + bd, y)
    return loss, [f, wd, bd]


def rnn(dtype):
    g = torch.Generator().manual_seed(1)
    wx, wh = param(g, 64 ** -0.5, 64, 128, dtype=dtype), param(g, 128 ** -0.5, 128, 128, dtype=dtype)
    b = param(g, 0.1, 128, dtype=dtype)
    xs = [uniform(g, 1, 32, 64, dtype=dtype) for _ in range(16)]
    y = uniform(g, 1, 32, 128, dtype=dtype)

    def loss():
        h = torch.zeros(32, 128, dtype=dtype)
        for x in xs:
            h = torch.tanh(x @ wx + h @ wh + b)
        return ((h - y) ** 2).mean()
    return loss, [wx, wh, b]


def attention(dtype):
    g = torch.Generator().manual_seed(1)
    n, d = 128, 64
    x, y = uniform(g, 1, n, d, dtype=dtype), uniform(g, 1, n, d, dtype=dtype)
    wq, wk, wv = (param(g, d ** -0.5, d, d, dtype=dtype) for _ in range(3))

    def loss():
        a = torch.softmax((x @ wq) @ (x @ wk).T * d ** -0.5, dim=1)
        return ((a @ (x @ wv) - y) ** 2).mean()
    return loss, [wq, wk, wv]


MODELS = {"mlp": mlp, "convnet": convnet, "rnn": rnn, "attention": attention}
DTYPES = {"float64": torch.float64, "float32": torch.float32}


def step(loss, params):
    for p in params:
        p.grad = None
    t0 = time.perf_counter()
    loss().backward()
    return (time.perf_counter() - t0) * 1e3


def gemm(m, n, k, dtype):
    a = np.random.rand(m, k).astype(dtype)
    b = np.random.rand(k, n).astype(dtype)
    for _ in range(3):
        a @ b
    best = float("inf")
    for _ in range(7):
        t0, reps = time.perf_counter(), 0
        while time.perf_counter() - t0 < 0.05:
            a @ b
            reps += 1
        best = min(best, (time.perf_counter() - t0) / reps)
    return 2 * m * n * k / best / 1e9


def main():
    built = {}
    for line in sys.stdin:
        cmd = line.split()
        if not cmd:
            continue
        if cmd[0] == "quit":
            break
        if cmd[0] == "threads":
            torch.set_num_threads(int(cmd[1]))
            out = "ok"
        elif cmd[0] == "step":
            key = (cmd[1], cmd[2])
            if key not in built:
                built[key] = MODELS[cmd[1]](DTYPES[cmd[2]])
            out = "%.6f" % step(*built[key])
        elif cmd[0] == "gemm":
            m, n, k = (int(v) for v in cmd[1:4])
            out = "%.3f" % gemm(m, n, k, np.dtype(cmd[4]))
        else:
            out = "error unknown command " + cmd[0]
        print(out, flush=True)


if __name__ == "__main__":
    main()
