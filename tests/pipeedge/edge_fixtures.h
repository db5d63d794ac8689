// Small builders for heterogeneous-pipeline tests.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "pe/edge.h"
#include "pe/error.h"

namespace pe::edge_test {

/// A model with the given per-layer weights (MiB) and outputs (elements per sample).
inline EdgeModel make_model(std::vector<double> weights_mib, std::vector<std::uint64_t> outputs,
                            std::uint64_t parameters_in = 0) {
  EdgeModel model;
  model.name = "m";
  model.weights_mib = std::move(weights_mib);
  model.parameters_out = std::move(outputs);
  model.parameters_in = parameters_in;
  return model;
}

/// A device type with the given NIC speed (Mbit/s), memory (MiB) and layer times (s).
inline EdgeDeviceType make_type(std::string name, double bandwidth_mbps, double memory_mib,
                                std::vector<double> seconds) {
  return EdgeDeviceType{std::move(name), bandwidth_mbps, memory_mib, std::move(seconds)};
}

/// Settings without buffers and with 1-sample micro-batches, so memory is weights only
/// when every output is 0.
inline EdgeSettings plain_settings() {
  EdgeSettings settings;
  settings.micro_batch = 1;
  settings.buffers_in = 0;
  settings.buffers_out = 0;
  return settings;
}

/// Expects `call` to throw InputError whose message contains every string of `parts`.
inline void expect_input_error(const std::function<void()>& call,
                               const std::vector<std::string>& parts) {
  std::vector<::testing::Matcher<std::string>> each;
  for (const std::string& part : parts) each.push_back(::testing::HasSubstr(part));
  EXPECT_THAT(call, ::testing::ThrowsMessage<InputError>(::testing::AllOfArray(each)));
}

}  // namespace pe::edge_test
