// pe-plan's flags for the API fields they set: library messages name the field
// (UsageError::field()), pe-plan's messages name the flag instead.
#pragma once

#include <string>

#include "pe/error.h"

namespace pe::cli {

/// The flag that sets `field` (e.g. "--mbs" for "TrainingSettings::min_micro_batch"), or ""
/// when no flag does.
std::string flag_for_field(const std::string& field);

/// `text` as pe-plan words it: each API field or phrase the library names replaced by the
/// flag (and value) that sets it, e.g. "TrainingSettings::min_micro_batch 4" becomes
/// "--mbs 4". Used for the reasons the library gives when no plan fits.
std::string cli_wording(std::string text);

/// The message of `error` as pe-plan words it: each mention of its field replaced by the
/// flag that sets it; unchanged when it has no field or the field has no flag.
std::string usage_message(const UsageError& error);

}  // namespace pe::cli
