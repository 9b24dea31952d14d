#!/usr/bin/env python3
"""PyTorch's side of tools/bench/mnist_vs_torch: the Fashion-MNIST CNN of models/mnist, trained from the
same initial weights (a safetensors file sluice wrote), on the same data order (a raw int64 file of
image indices), with the same batch size and Adam settings, on 2 CPU threads. Prints one JSON object:
{"losses": [...], "seconds": s, "torch": version}.

  /usr/bin/python3 scripts/mnist_torch.py WEIGHTS.safetensors ORDER.bin STEPS BATCH LR [DATA_DIR]
"""
import gzip
import json
import struct
import sys
import time

import torch
import torch.nn.functional as F

MEAN, STD = 0.2860, 0.3530  # models/mnist/mnist.cpp's normalization


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        assert e["dtype"] == "F32", (name, e["dtype"])
        b, end = e["data_offsets"]
        t = torch.frombuffer(bytearray(raw[8 + n + b:8 + n + end]), dtype=torch.float32)
        out[name] = t.reshape(e["shape"]).clone()
    return out


def read_idx(path):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    dims = raw[3]
    shape = struct.unpack(">" + "I" * dims, raw[4:4 + 4 * dims])
    return torch.frombuffer(bytearray(raw[4 + 4 * dims:]), dtype=torch.uint8).reshape(shape)


class Cnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(16, 32, 3, padding=1)
        self.fc = torch.nn.Linear(32 * 7 * 7, 10)

    def forward(self, x):
        h = F.max_pool2d(F.relu(self.conv1(x)), 2)
        h = F.max_pool2d(F.relu(self.conv2(h)), 2)
        return self.fc(h.flatten(1))


def main():
    weights, order_path, steps, batch, lr = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
    data = sys.argv[6] if len(sys.argv) > 6 else "/usr/share/datasets/fashion-mnist"
    torch.set_num_threads(2)
    model = Cnn()
    model.load_state_dict(read_safetensors(weights))
    images = read_idx(data + "/train-images-idx3-ubyte.gz")
    labels = read_idx(data + "/train-labels-idx1-ubyte.gz").long()
    with open(order_path, "rb") as f:
        order = torch.frombuffer(bytearray(f.read()), dtype=torch.int64)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    t0 = time.perf_counter()
    for s in range(steps):
        idx = order[s * batch:(s + 1) * batch]
        x = ((images[idx].float() / 255 - MEAN) / STD).unsqueeze(1)
        loss = F.cross_entropy(model(x), labels[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    print(json.dumps({"losses": losses, "seconds": time.perf_counter() - t0, "torch": torch.__version__}))


if __name__ == "__main__":
    main()
