// pe-plan's flags, declared once for the parser and the --help text.
#pragma once

#include <CLI/CLI.hpp>

#include "options.h"

namespace pe::cli {

/// Declares every flag of pe-plan on `app`: its names, value, description and group. Each
/// value is checked and stored into `options` as it is parsed, in command-line order.
void declare_flags(CLI::App& app, Options& options);

}  // namespace pe::cli
