"""The pieces behind `python3 -m pe.profile` and `python3 -m pe.run`: loading a model
factory, tracing it into operators, timing them, partitioning a plan's stages, running
the schedule over torch.distributed (gloo) and comparing predicted with measured time.

Nothing here imports pe._core at import time; planning goes through `planning.py`."""
