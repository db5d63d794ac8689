"""A four-layer perceptron on 256 features: a chain of Linear and ReLU operators."""
import torch.nn as nn
import torch


def make():
    model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
    return model, torch.randn(8, 256)
