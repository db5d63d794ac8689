// Bubble filling at the documented maximum of chunks: placed in near-linear time, in order.
#include <gtest/gtest.h>

#include "pe/fill.h"
#include "simulate/timeline_index.h"

namespace pe {
namespace {

// 2 stages, M = 2, GPipe, f = g = 1: stage 0 is idle in [2,4), stage 1 in [0,1) and [5,6).
// A million chunks of 1 us (1.05 us with the margin) on stage 1 fill [0,1) with 952,380 of
// them and put the rest from 5 on. Placing them took minutes while each placement shifted
// the whole pending list.
TEST(FillScale, AMillionChunksArePlacedBackToBack) {
  WorkItem tiny;
  tiny.name = "tiny";
  tiny.duration = 1;
  tiny.split_total = true;
  tiny.chunks = 1000000;
  tiny.stages = {1};
  const FillResult r =
      fill_bubbles(simulate(testing::uniform_shape(2, 2, Schedule::GPipe, {1, 1, 0, 0})), {{tiny}});
  ASSERT_TRUE(r.complete);
  ASSERT_EQ(r.pieces.size(), 1000000u);
  EXPECT_EQ(r.iterations, 1);
  int jumps = 0, out_of_order = 0;
  for (std::size_t k = 1; k < r.pieces.size(); ++k) {
    const FilledPiece& before = r.pieces[k - 1];
    out_of_order += r.pieces[k].index != before.index + 1;
    if (r.pieces[k].start != before.reserved_end) {
      ++jumps;
      EXPECT_EQ(r.pieces[k].index, 952380);
      EXPECT_EQ(r.pieces[k].start, 5);
    }
  }
  EXPECT_EQ(out_of_order, 0);
  EXPECT_EQ(jumps, 1);  // from the gap [0,1) to [5,6)
  EXPECT_NEAR(r.pieces.back().reserved_end, 5 + (1.05 - 952380 * 1.05e-6), 1e-6);
}

}  // namespace
}  // namespace pe
