"""PyTorch anchor for examples/bench -torch (run as a subprocess by the Go command).

The same models as examples/models at the bench's sizes (MLP 784-512-10 b128, convnet
28x28x32 b32, tanh RNN 64->128 x16 b32, single-head attention 128x64; Gorgonia's MNIST convnet
b50 without dropout, a ResNet basic-block stack, a MobileNet-style depthwise-separable stack,
a transformer encoder layer, an LSTM unrolled over 16 steps), forward and backward
(loss.backward(), gradients of the parameters), in float64 and float32. Shapes, losses and
initialisation scales are the Go models'; the values are drawn here (torch.Generator), not
shared with Go. It reads commands on
stdin, one per line, and answers one line each, so the Go side can alternate its steps with
these:

    threads N          -> "ok"           torch.set_num_threads(N) (OpenBLAS follows)
    step MODEL DTYPE   -> milliseconds of one step (forward + backward), measured here
    gemm M N K DTYPE   -> GFLOP/s of numpy's a @ b (m×k times k×n, best of 7 runs)
    tvexport NAME B S DTYPE PATH -> "ok": torchvision.models.NAME(weights=None), eval mode,
                          exported to ONNX at PATH for input [B,3,S,S] (torch.onnx.export's
                          default opset)
    tvstep NAME B S DTYPE -> milliseconds of one step of that model: loss Σ out ⊙ r,
                          backward with respect to every parameter (eval mode, as exported)
    tvforward NAME B S DTYPE -> milliseconds of that step's forward pass alone (the loss, with
                          autograd recording, as in training; no backward)
    quit

MODEL is a key of MODELS (mlp, convnet, rnn, attention, convnet_mnist, resnet, mobilenet,
transformer, lstm); DTYPE is float64 or float32. Needs python3-torch
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


def convnet_mnist(dtype, n=50):
    """Gorgonia's convnet example (models.ConvNetMNIST), batch 50, dropout off."""
    g = torch.Generator().manual_seed(1)
    x, y = uniform(g, 1, n, 1, 28, 28, dtype=dtype), one_hot(g, n, 10, dtype)
    fs = [param(g, 1 / 3, 32, 1, 3, 3, dtype=dtype), param(g, (32 * 9) ** -0.5, 64, 32, 3, 3, dtype=dtype),
          param(g, (64 * 9) ** -0.5, 128, 64, 3, 3, dtype=dtype)]
    w3, w4 = param(g, 1152 ** -0.5, 1152, 625, dtype=dtype), param(g, 625 ** -0.5, 625, 10, dtype=dtype)

    def loss():
        h = x
        for f in fs:
            h = F.max_pool2d(torch.relu(F.conv2d(h, f, padding=1)), 2)
        h = torch.relu(h.reshape(n, 1152) @ w3)
        return -(y * F.log_softmax(h @ w4, dim=1)).mean()
    return loss, fs + [w3, w4]


def bn_params(g, ch, dtype):
    gamma = (1 + uniform(g, 0.1, ch, dtype=dtype)).requires_grad_()
    return gamma, param(g, 0.1, ch, dtype=dtype)


def batch_norm(h, gb):
    return F.batch_norm(h, None, None, gb[0], gb[1], training=True, eps=1e-5)


def resnet(dtype, n=32, size=16, ch=16, blocks=2, classes=10):
    """models.ResNet: stem conv3x3-BN-ReLU, basic blocks relu(bn(conv(relu(bn(conv h)))) + h), GAP, dense."""
    g = torch.Generator().manual_seed(1)
    x, y = uniform(g, 1, n, 3, size, size, dtype=dtype), one_hot(g, n, classes, dtype)
    convs, bns = [], []
    for i in range(1 + 2 * blocks):
        cin = 3 if i == 0 else ch
        convs.append(param(g, (cin * 9) ** -0.5, ch, cin, 3, 3, dtype=dtype))
        bns.append(bn_params(g, ch, dtype))
    wd, bd = param(g, ch ** -0.5, ch, classes, dtype=dtype), param(g, 0.1, classes, dtype=dtype)

    def conv_bn(h, i):
        return batch_norm(F.conv2d(h, convs[i], padding=1), bns[i])

    def loss():
        h = torch.relu(conv_bn(x, 0))
        for k in range(blocks):
            a = torch.relu(conv_bn(h, 1 + 2 * k))
            h = torch.relu(conv_bn(a, 2 + 2 * k) + h)
        return softmax_xent(h.mean((2, 3)) @ wd + bd, y)
    return loss, convs + [p for gb in bns for p in gb] + [wd, bd]


def mobilenet(dtype, n=32, size=16, ch=32, blocks=3, classes=10):
    """models.MobileNet: stem conv3x3-BN-ReLU, blocks relu(bn(pw(relu(bn(dw3x3 h))))), GAP, dense."""
    g = torch.Generator().manual_seed(1)
    x, y = uniform(g, 1, n, 3, size, size, dtype=dtype), one_hot(g, n, classes, dtype)
    stem, stem_bn = param(g, 27 ** -0.5, ch, 3, 3, 3, dtype=dtype), bn_params(g, ch, dtype)
    dws, pws, bns = [], [], []
    for _ in range(blocks):
        dws.append(param(g, 1 / 3, ch, 1, 3, 3, dtype=dtype))
        bns.append(bn_params(g, ch, dtype))
        pws.append(param(g, ch ** -0.5, ch, ch, 1, 1, dtype=dtype))
        bns.append(bn_params(g, ch, dtype))
    wd, bd = param(g, ch ** -0.5, ch, classes, dtype=dtype), param(g, 0.1, classes, dtype=dtype)

    def loss():
        h = torch.relu(batch_norm(F.conv2d(x, stem, padding=1), stem_bn))
        for k in range(blocks):
            h = torch.relu(batch_norm(F.conv2d(h, dws[k], padding=1, groups=ch), bns[2 * k]))
            h = torch.relu(batch_norm(F.conv2d(h, pws[k]), bns[2 * k + 1]))
        return softmax_xent(h.mean((2, 3)) @ wd + bd, y)
    return loss, [stem, *stem_bn] + dws + pws + [p for gb in bns for p in gb] + [wd, bd]


def transformer(dtype, b=4, s=64, d=128, heads=4, ff=512):
    """models.Transformer, one post-norm encoder layer: h = LN(x + MHA(x)), out = LN(h + MLP(h))."""
    g = torch.Generator().manual_seed(1)
    x, y = uniform(g, 1, b * s, d, dtype=dtype), uniform(g, 1, b * s, d, dtype=dtype)
    dh = d // heads

    def lin(k, n):
        return param(g, k ** -0.5, k, n, dtype=dtype), param(g, 0.1, n, dtype=dtype)
    wq, wk, wv, wo = lin(d, d), lin(d, d), lin(d, d), lin(d, d)
    ln1 = bn_params(g, d, dtype)
    w1, w2 = lin(d, ff), lin(ff, d)
    ln2 = bn_params(g, d, dtype)

    def split(t):
        return t.reshape(b, s, heads, dh).transpose(1, 2)

    def loss():
        q, k, v = (split(x @ w + bias) for w, bias in (wq, wk, wv))
        a = torch.softmax(q @ k.transpose(-1, -2) * dh ** -0.5, dim=-1)
        o = (a @ v).transpose(1, 2).reshape(b * s, d) @ wo[0] + wo[1]
        h = F.layer_norm(x + o, (d,), ln1[0], ln1[1], 1e-5)
        f = F.gelu(h @ w1[0] + w1[1], approximate="tanh") @ w2[0] + w2[1]
        out = F.layer_norm(h + f, (d,), ln2[0], ln2[1], 1e-5)
        return ((out - y) ** 2).mean()
    return loss, [*wq, *wk, *wv, *wo, *ln1, *w1, *w2, *ln2]


def lstm(dtype, n=32, i=64, hidden=128, steps=16):
    """models.LSTMSeq: fused gates z = x W + h U + b split into i, f, g, o; h0 = c0 = 0."""
    g = torch.Generator().manual_seed(1)
    w = param(g, hidden ** -0.5, i, 4 * hidden, dtype=dtype)
    u = param(g, hidden ** -0.5, hidden, 4 * hidden, dtype=dtype)
    bias = param(g, 0.1, 4 * hidden, dtype=dtype)
    xs = [uniform(g, 1, n, i, dtype=dtype) for _ in range(steps)]
    y = uniform(g, 1, n, hidden, dtype=dtype)

    def loss():
        h = torch.zeros(n, hidden, dtype=dtype)
        c = torch.zeros(n, hidden, dtype=dtype)
        for x in xs:
            zi, zf, zg, zo = (x @ w + h @ u + bias).chunk(4, 1)
            c = torch.sigmoid(zf) * c + torch.sigmoid(zi) * torch.tanh(zg)
            h = torch.sigmoid(zo) * torch.tanh(c)
        return ((h - y) ** 2).mean()
    return loss, [w, u, bias]


MODELS = {"mlp": mlp, "convnet": convnet, "rnn": rnn, "attention": attention, "convnet_mnist": convnet_mnist,
          "resnet": resnet, "mobilenet": mobilenet, "transformer": transformer, "lstm": lstm}
DTYPES = {"float64": torch.float64, "float32": torch.float32}


def step(loss, params):
    for p in params:
        p.grad = None
    t0 = time.perf_counter()
    loss().backward()
    return (time.perf_counter() - t0) * 1e3


def forward(loss, params):
    t0 = time.perf_counter()
    loss()
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


def torchvision_model(name, batch, size, dtype):
    import torchvision
    torch.manual_seed(1)
    m = getattr(torchvision.models, name)(weights=None).to(DTYPES[dtype]).eval()
    x = torch.randn(batch, 3, size, size, dtype=DTYPES[dtype])
    return m, x


def tv_export(name, batch, size, dtype, path):
    m, x = torchvision_model(name, batch, size, dtype)
    torch.onnx.export(m, x, path)


def tv_step(name, batch, size, dtype):
    m, x = torchvision_model(name, batch, size, dtype)
    with torch.no_grad():
        r = torch.randn_like(m(x))
    params = list(m.parameters())
    return lambda: (m(x) * r).sum(), params


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
        elif cmd[0] == "tvexport":
            import warnings
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tv_export(cmd[1], int(cmd[2]), int(cmd[3]), cmd[4], cmd[5])
            out = "ok"
        elif cmd[0] in ("tvstep", "tvforward"):
            key = ("tvstep",) + tuple(cmd[1:5])
            if key not in built:
                built[key] = tv_step(cmd[1], int(cmd[2]), int(cmd[3]), cmd[4])
            out = "%.6f" % (step if cmd[0] == "tvstep" else forward)(*built[key])
        elif cmd[0] == "gemm":
            m, n, k = (int(v) for v in cmd[1:4])
            out = "%.3f" % gemm(m, n, k, np.dtype(cmd[4]))
        else:
            out = "error unknown command " + cmd[0]
        print(out, flush=True)


if __name__ == "__main__":
    main()
