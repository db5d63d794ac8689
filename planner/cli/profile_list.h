// pe-plan --list-profiles: the bundled profiles a user can name with --profile.
#pragma once

#include <string>

#include "options.h"

namespace pe::cli {

/// One row per bundled profile: catalogue name, cut states, profile batch size and graph
/// file (relative to the profiles folder), as a table, CSV or JSON. Each profile is
/// imported to count its states. Throws InputError when a bundled file cannot be read.
std::string profile_list(Format format);

}  // namespace pe::cli
