// GPU types: the published numbers the planner needs, and a catalogue of common ones.
#pragma once

#include <string>
#include <vector>

#include "pe/units.h"

namespace pe {

/// A GPU's published peak numbers.
struct GpuSpec {
  std::string name;                     ///< e.g. "A100-80GB".
  double peak_flops = 0;                ///< Dense 16-bit tensor FLOP/s (no sparsity).
  Bytes memory = 0;                     ///< Device memory.
  BytesPerSecond memory_bandwidth = 0;  ///< Device memory bandwidth.
  std::string source;                   ///< Where the numbers come from.
};

/// The bundled GPUs, with their sources: V100-16GB, V100-32GB, A100-40GB, A100-80GB,
/// H100-80GB (SXM parts; dense 16-bit tensor peaks from NVIDIA's data sheets).
const std::vector<GpuSpec>& gpu_catalog();

/// A catalogue GPU by name (case-insensitive); throws InputError naming `where` and listing
/// the known names.
const GpuSpec& find_gpu(const std::string& name, const std::string& where);

}  // namespace pe
