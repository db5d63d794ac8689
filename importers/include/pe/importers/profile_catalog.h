// The bundled layer-wise profiles (profiles/catalog.yml) and how a profile is looked up by
// name or path. See profiles/README.md for the list.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace pe {

/// One profile and HPGO's planning defaults for it.
struct ProfileEntry {
  std::string name;                 ///< Catalogue name, e.g. "resnet50", "dapple/bert-48-pbs-2".
  std::string path;                 ///< The graph file, ready to open (catalogue paths are
                                    ///< resolved against profiles_directory()).
  double profile_batch_size = 0;    ///< Batch size the profile was taken at; 0 = unknown.
  int min_micro_batch = 1;          ///< Smallest micro-batch size to plan with (samples).
  double optimizer_scaling = 2;     ///< Weight-memory multiplier (weights, gradients,
                                    ///< optimizer state): 2 SGD-momentum, 3 Adam-like.
  std::optional<double> activation_bytes_per_sample;  ///< Memory per sample in flight;
                                                      ///< empty = derive from the profile.
  std::string notes;                ///< Free text: where defaults come from, caveats.
};

/// Directory of bundled profiles: $PE_PROFILES_DIR if set and non-empty, else
/// share/pe/profiles beside the running program's bin/ folder (an installed tree, even
/// when moved), else the source tree's profiles/ if it exists, else the configured
/// install location. The directory is not checked further.
std::string profiles_directory();

/// Reads profiles_directory()/catalog.yml, in file order. Throws InputError (file, line,
/// key) when it is missing or malformed: unknown keys, duplicate names, a non-positive
/// batch size, micro-batch or scaling, a negative activation size.
std::vector<ProfileEntry> bundled_profiles();

/// Finds a profile by catalogue name or by path. A path that is a catalogue file gets that
/// entry. For a path not in the catalogue the batch size is taken from a DAPPLE-style file
/// name (`...-pbs-N...`) when present, otherwise 0 (unknown: the caller must ask the user
/// for --pbs); min_micro_batch 1, optimizer_scaling 2, activation derived. Throws
/// InputError for an unknown name (listing the known names) or a missing file.
ProfileEntry find_profile(const std::string& name_or_path);

}  // namespace pe
