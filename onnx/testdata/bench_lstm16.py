#!/usr/bin/env python3
"""Times PyTorch on the model of layers/lstm16_f32 (nn.LSTM(8, 16), 16 steps, batch 4, float32,
loss = sum(output * r)), for comparison with BenchmarkONNXLSTM16 in tests/onnx_layers_test.go:
set-up (building the module and its first forward and backward pass) and one training step
(forward and backward), the median of many.

    /usr/bin/python3 onnx/testdata/bench_lstm16.py [THREADS]
"""
import statistics
import sys
import time

import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(8, 16)

    def forward(self, x):
        y, (h, c) = self.rnn(x)
        return torch.cat([y.reshape(-1), h.reshape(-1), c.reshape(-1)])


def main():
    if len(sys.argv) > 1:
        torch.set_num_threads(int(sys.argv[1]))
    torch.manual_seed(7)
    x = torch.randn(16, 4, 8)
    t0 = time.perf_counter()
    model = Net()
    r = torch.randn(16 * 4 * 16 + 2 * 4 * 16)
    (model(x) * r).sum().backward()
    setup = time.perf_counter() - t0
    times = []
    for _ in range(300):
        t = time.perf_counter()
        model.zero_grad()
        (model(x) * r).sum().backward()
        times.append(time.perf_counter() - t)
    print(f"threads {torch.get_num_threads()}: set-up {setup * 1e3:.1f} ms, step {statistics.median(times) * 1e6:.0f} µs (median of 300)")


if __name__ == "__main__":
    main()
