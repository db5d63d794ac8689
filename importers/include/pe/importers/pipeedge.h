// PipeEdge `sched-pipeline` input files:
//
//   models.yml          MODEL: {layers: L, mem_MB: [L MiB], parameters_in: N,
//                               parameters_out: [elements per sample leaving each layer]}
//   device_types.yml    TYPE: {bw_Mbps: X, mem_MB: Y,
//                              model_profiles: {MODEL: [{batch_size: B, dtype: D,
//                                                        time_s: [L seconds]}]}}
//   devices.yml         TYPE: [host, host, ...]
//
// Errors throw InputError naming file, line and key, the value seen and what was expected.
// Warnings (conditions the original tool accepts) are returned as text, never printed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pe/edge.h"

namespace pe {

/// What sched-pipeline plans: the model and the profile key (micro-batch size and dtype).
struct PipeEdgeQuery {
  std::string model_name = "google/vit-base-patch16-224";  ///< Key in models.yml.
  std::uint64_t micro_batch = 8;        ///< Profile `batch_size` to select (samples).
  std::string dtype = "torch.float32";  ///< Profile `dtype` to select.
};

/// The three input files.
struct PipeEdgeFiles {
  std::string models = "models.yml";              ///< Path of models.yml.
  std::string device_types = "device_types.yml";  ///< Path of device_types.yml.
  std::string devices = "devices.yml";            ///< Path of devices.yml.
};

/// The device types of device_types.yml after profile selection.
struct PipeEdgeDeviceTypes {
  std::vector<EdgeDeviceType> usable;  ///< Types with a matching profile, in file order.
  std::vector<std::string> skipped;    ///< Defined types without one (warned about).
};

/// Everything schedule_pipeline needs, plus the warnings met while reading it.
struct PipeEdgeInput {
  EdgeModel model;                    ///< The queried model.
  EdgeCluster cluster;                ///< Usable device types and their hosts.
  std::vector<std::string> warnings;  ///< In the order met.
};

/// Reads model `model_name` from models.yml text (`file` names it in messages). Only that
/// model is checked. A `parameters_out` shorter than `layers` repeats cyclically (warning);
/// longer, empty with layers > 0, or `mem_MB` of another length is an error.
EdgeModel parse_pipeedge_model(const std::string& text, const std::string& file,
                               const std::string& model_name, std::vector<std::string>& warnings);

/// Reads device_types.yml text. Every type needs bw_Mbps and mem_MB (finite, >= 0). For the
/// queried model, a type's profiles are checked and the one with the queried batch_size and
/// dtype is used; its time_s must have `layers` values. A type without profiles for the
/// model, or without a matching one, is skipped with a warning. When several profiles
/// match, the first is used and a warning names the others.
PipeEdgeDeviceTypes parse_pipeedge_device_types(const std::string& text, const std::string& file,
                                                const PipeEdgeQuery& query, std::size_t layers,
                                                std::vector<std::string>& warnings);

/// Reads devices.yml text into hosts of the usable types, in file order. Host names must
/// be non-empty scalars, unique across the file. Hosts of a type that device_types.yml
/// does not define are ignored with a warning; hosts of skipped types are ignored.
std::vector<EdgeHost> parse_pipeedge_devices(const std::string& text, const std::string& file,
                                             const PipeEdgeDeviceTypes& types,
                                             std::vector<std::string>& warnings);

/// Reads the three files in the original's order (models, device types, devices).
PipeEdgeInput load_pipeedge_input(const PipeEdgeFiles& files, const PipeEdgeQuery& query);

}  // namespace pe
