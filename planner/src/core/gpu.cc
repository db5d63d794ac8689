#include "pe/gpu.h"

#include <algorithm>
#include <cctype>

#include "pe/error.h"

namespace pe {
namespace {

std::string catalogue_names() {
  std::string list;
  for (const GpuSpec& gpu : gpu_catalog()) list += (list.empty() ? "" : ", ") + gpu.name;
  return list;
}

}  // namespace

const std::vector<GpuSpec>& gpu_catalog() {
  // NVIDIA data sheets: Tesla V100 (SXM2: 125 TFLOP/s tensor, 900 GB/s), A100 (SXM: 312
  // TFLOP/s bf16 dense; 1,555 GB/s for 40 GB, 2,039 GB/s for 80 GB), H100 (SXM5: 989 TFLOP/s
  // bf16 dense, 3.35 TB/s).
  static const std::vector<GpuSpec> catalog{
      {"V100-16GB", 125e12, 16 * kGB, 900 * kGB, "NVIDIA Tesla V100 data sheet (SXM2)"},
      {"V100-32GB", 125e12, 32 * kGB, 900 * kGB, "NVIDIA Tesla V100 data sheet (SXM2)"},
      {"A100-40GB", 312e12, 40 * kGB, 1555 * kGB, "NVIDIA A100 data sheet (SXM)"},
      {"A100-80GB", 312e12, 80 * kGB, 2039 * kGB, "NVIDIA A100 data sheet (SXM)"},
      {"H100-80GB", 989e12, 80 * kGB, 3350 * kGB, "NVIDIA H100 data sheet (SXM5)"}};
  return catalog;
}

const GpuSpec& find_gpu(const std::string& name, const std::string& where) {
  auto lower = [](std::string t) {
    std::transform(t.begin(), t.end(), t.begin(),
                   [](unsigned char ch) { return std::tolower(ch); });
    return t;
  };
  for (const GpuSpec& gpu : gpu_catalog())
    if (lower(gpu.name) == lower(name)) return gpu;
  throw InputError(where, "GPU '" + name +
                              "' is not in the catalogue; known: " + catalogue_names() +
                              " (or give its numbers: name, peak_tflops, memory_gb)");
}

}  // namespace pe
