// The bundled layer-wise profiles (profiles/catalog.yml) and how a profile is looked up by
// name or path. See profiles/README.md for the list.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pe/settings.h"

namespace pe {

/// One profile and HPGO's planning defaults for it.
struct ProfileEntry {
  std::string name;               ///< Catalogue name, e.g. "resnet50", "dapple/bert-48-pbs-2".
  std::string path;               ///< The graph file, ready to open (catalogue paths are
                                  ///< resolved against profiles_directory()).
  double profile_batch_size = 0;  ///< Batch size the profile was taken at; 0 = unknown.
  int min_micro_batch = 1;        ///< Smallest micro-batch size to plan with (samples).
  double optimizer_scaling = 2;   ///< Weight-memory multiplier (weights, gradients,
                                  ///< optimizer state): 2 SGD-momentum, 3 Adam-like.
  std::optional<double> activation_bytes_per_sample;  ///< Memory per sample in flight;
                                                      ///< empty = derive from the profile.
  std::string notes;  ///< Free text: where defaults come from, caveats.
};

/// Directory of bundled profiles, the first of:
///  1. $PE_PROFILES_DIR, if set and non-empty;
///  2. share/pe/profiles beside the running program's bin/ folder, if it exists (an
///     installed pe-plan or sched-pipeline, even when the installation was moved);
///  3. the directory given to set_installed_profiles_directory(), if it exists (a program
///     built against the installed package: find_package(pe) registers its pe_PROFILES_DIR);
///  4. the source tree's profiles/, if it exists (programs of the pe build itself);
///  5. share/pe/profiles under the install prefix the library was configured with.
/// The directory is not checked further.
std::string profiles_directory();

/// Registers the installed profiles (step 3 of profiles_directory()). Programs linking the
/// installed pe::importers call it before main through a source file that the package
/// configuration adds to them; an empty directory clears it. Call it before planning
/// starts, not while other threads look profiles up.
void set_installed_profiles_directory(const std::string& directory);

/// Reads profiles_directory()/catalog.yml, in file order. Throws InputError (file, line,
/// key) when it is missing or malformed: unknown keys, duplicate names, a non-positive
/// batch size, micro-batch or scaling, a negative activation size.
std::vector<ProfileEntry> bundled_profiles();

/// Finds a profile by catalogue name or by path. A path that is a catalogue file gets that
/// entry. For a path not in the catalogue the batch size is taken from a DAPPLE-style file
/// name (`...-pbs-N...`) when present, otherwise 0 (unknown: the caller must ask the user
/// for --pbs); min_micro_batch 1, optimizer_scaling 2, activation derived. Throws
/// InputError for an unknown name (listing the known names), a missing file or a directory.
/// Paths that are not regular files but can be read (devices, pipes) are taken as given.
ProfileEntry find_profile(const std::string& name_or_path);

/// The entry's planning defaults as TrainingSettings: its min_micro_batch,
/// optimizer_scaling and activation_bytes_per_sample. The profile batch size is not a
/// setting: pass entry.profile_batch_size to import_pipedream_graph.
TrainingSettings training_settings(const ProfileEntry& entry);

}  // namespace pe
