#include "pe/model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "pe/error.h"

namespace pe {
namespace {

TEST(Model, ChainModelHasOneStatePerLayer) {
  ModelProfile m = make_chain_model("m", 4, {{"a", 1, 2, 10, 100}, {"b", 3, 4, 20, 200}});
  ASSERT_EQ(m.size(), 2u);
  EXPECT_DOUBLE_EQ(m.forward(0, 1), 4);
  EXPECT_DOUBLE_EQ(m.backward(1, 1), 4);
  EXPECT_DOUBLE_EQ(m.activation(1, 1), 20);
  EXPECT_DOUBLE_EQ(m.parameters(0, 0), 100);
  EXPECT_DOUBLE_EQ(m.states[0].crossing, 10);
  EXPECT_DOUBLE_EQ(m.states[1].crossing, 0);
}

TEST(Model, RejectsBadLayers) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(make_chain_model("m", 1, {}), InputError);
  EXPECT_THROW(make_chain_model("m", 1, {{"a", -1, 0, 0, 0}}), InputError);
  EXPECT_THROW(make_chain_model("m", 1, {{"a", nan, 0, 0, 0}}), InputError);
  EXPECT_THROW(make_chain_model("m", 0, {{"a", 1, 0, 0, 0}}), InputError);
  EXPECT_THROW(make_chain_model("m", 1, {{"a", 1, 0, INFINITY, 0}}), InputError);
}

}  // namespace
}  // namespace pe
