"""A small convolutional classifier on 3x32x32 images with a residual block (a branch in
the graph); cross-entropy against the argmax of the random target."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SmallCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, padding=1)
        self.conv1 = nn.Conv2d(16, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 16, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.head = nn.Linear(16 * 16 * 16, 10)

    def forward(self, x):
        h = F.relu(self.stem(x))
        h = F.relu(h + self.conv2(F.relu(self.conv1(h))))
        return self.head(torch.flatten(self.pool(h), 1))


def make():
    return SmallCnn(), torch.randn(4, 3, 32, 32), \
        lambda out, target: F.cross_entropy(out, target.argmax(dim=1))
