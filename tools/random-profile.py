#!/usr/bin/env python3
"""Writes random layer-wise profiles in PipeDream's graph.txt format, for testing the planner on
models it was not tuned on (bench/README.md, "Random graphs").

    tools/random-profile.py OUT_DIR FIRST_SEED LAST_SEED

writes OUT_DIR/randSEED.txt for each seed in [FIRST_SEED, LAST_SEED) and prints one line per
file: seed, layers, whether it branches. The same seed gives the same file. A profile is a
chain of 8 to 300 layers (lognormal forward times in ms, backward about twice, activations up
to 300 MB, a few layers of 0.1 to 1.5 GB of weights, a few of no time); three in five also
have residual blocks (two layers and an add, with a skip edge) and two-branch blocks joined
by a concatenation. Plan them with --pbs 32 (any batch size the user chooses).
"""
import os
import random
import sys


def write_profile(seed, path):
    rng = random.Random(seed)
    layers = rng.choice([8, 20, 40, 80, 150, 300])
    branchy = rng.random() < 0.6
    nodes, edges = [], []

    def node(i, name, fwd, bwd, activation, parameters):
        nodes.append(f"node{i} -- {name} -- forward_compute_time={fwd:.4f}, "
                     f"backward_compute_time={bwd:.4f}, activation_size={activation:.1f}, "
                     f"parameter_size={parameters:.1f}")

    node(0, "Input0", 0.0, 0.0, rng.uniform(1e6, 5e7), 0)
    prev, i = 0, 1
    while i <= layers:
        kind = rng.random()
        if branchy and kind < 0.25 and i + 3 <= layers:  # residual block
            start = prev
            for _ in range(2):
                fwd = rng.lognormvariate(0, 1)
                node(i, f"Conv{i}", fwd, 2 * fwd * rng.uniform(0.8, 1.3), rng.uniform(1e5, 2e8),
                     rng.choice([0, rng.uniform(1e3, 1e7)]))
                edges.append((prev, i))
                prev, i = i, i + 1
            node(i, f"Add{i}", rng.choice([0.0, 0.01]), 0.0, rng.uniform(1e5, 2e8), 0)
            edges += [(prev, i), (start, i)]
            prev, i = i, i + 1
        elif branchy and kind < 0.35 and i + 4 <= layers:  # two branches, then a concatenation
            start, ends = prev, []
            for _ in range(2):
                last = start
                for _ in range(rng.choice([1, 2])):
                    fwd = rng.lognormvariate(-0.5, 1)
                    node(i, f"Br{i}", fwd, 2 * fwd, rng.uniform(1e5, 1e8), rng.uniform(0, 1e6))
                    edges.append((last, i))
                    last, i = i, i + 1
                ends.append(last)
            node(i, f"Cat{i}", 0.0, 0.0, rng.uniform(1e5, 2e8), 0)
            edges += [(end, i) for end in ends]
            prev, i = i, i + 1
        else:
            fwd = 0.0 if rng.random() < 0.05 else rng.lognormvariate(0, 1.2)
            parameters = (rng.uniform(1e8, 1.5e9) if rng.random() < 0.03
                          else rng.choice([0, rng.uniform(1e3, 2e7)]))
            node(i, f"Layer{i}", fwd, 2 * fwd * rng.uniform(0.5, 1.5), rng.uniform(1e4, 3e8),
                 parameters)
            edges.append((prev, i))
            prev, i = i, i + 1
    with open(path, "w") as out:
        out.write("\n".join(nodes) + "\n")
        for src, dst in edges:
            out.write(f"\tnode{src} -- node{dst}\n")
    return layers, branchy


def main(argv):
    if len(argv) != 4:
        sys.exit(__doc__)
    out_dir, first, last = argv[1], int(argv[2]), int(argv[3])
    os.makedirs(out_dir, exist_ok=True)
    for seed in range(first, last):
        layers, branchy = write_profile(seed, os.path.join(out_dir, f"rand{seed}.txt"))
        print(seed, layers, "branchy" if branchy else "chain")


if __name__ == "__main__":
    main(sys.argv)
