// Cluster description files (`--cluster FILE`).
//
//   machines:                 # a list of machine groups, in device-id order
//     - count: 2              # machines in this group (default 1)
//       gpus: 8               # GPUs per machine (required)
//       type: V100            # free text for the reader, not used (optional)
//       gpu: A100-80GB        # its GPU type (optional): a catalogue name (pe/gpu.h) or
//                             # {name: X, peak_tflops: 400, memory_gb: 96}; machines
//                             # without one have the model's GPU and memory_GB
//   bandwidth_GBps:           # optional; GB = 1e9 bytes
//     intra: 25               # between GPUs of one machine
//     inter_allreduce: 3      # all-reduce across machines
//     inter_p2p: 1            # point-to-point across machines
//   memory_GB: 16             # per GPU (optional)
#pragma once

#include <string>

#include "pe/cluster.h"

namespace pe {

/// Reads a cluster file. Missing optional keys keep HPGO's V100 defaults. Throws
/// InputError naming the file, line and key for unknown keys, wrong types, non-positive
/// or non-finite numbers, a `type` that is not text, a second YAML document, more than
/// 100,000 YAML nodes (checked before the document is built; use `count` for many
/// machines), and files that cannot be read or parsed.
Cluster load_cluster_yaml(const std::string& path);

/// Same, from text; `file_label` names the input in error messages.
Cluster parse_cluster_yaml(const std::string& text, const std::string& file_label);

}  // namespace pe
