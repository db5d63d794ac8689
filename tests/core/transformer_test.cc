// Transformers from their configuration: the FLOP, parameter and activation formulas of
// pe/transformer.h against the published counts they generalize and against totals of
// released models, and the planner's model built from them.
#include "pe/transformer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pe/error.h"

namespace pe {
namespace {

using ::testing::HasSubstr;

TransformerConfig gpt3_175b() {
  TransformerConfig c;
  c.name = "gpt3-175b";
  c.layers = 96;
  c.hidden = 12288;
  c.heads = 96;
  c.ffn = 4 * 12288;
  c.sequence = 2048;
  c.vocabulary = 50257;
  c.tied_embeddings = true;
  c.flash_attention = false;
  return c;
}

TransformerConfig llama2(int layers, int hidden, int heads, int kv_heads, int ffn) {
  TransformerConfig c;
  c.name = "llama2";
  c.layers = layers;
  c.hidden = hidden;
  c.heads = heads;
  c.kv_heads = kv_heads;
  c.ffn = ffn;
  c.gated_ffn = true;
  c.sequence = 4096;
  c.vocabulary = 32000;
  return c;
}

double parameters(const TransformerConfig& c) {
  double sum = 0;
  for (const TransformerLayer& layer : transformer_layers(c)) sum += layer.parameter_count;
  return sum;
}

TEST(Transformer, GptLayerFlopsAreMegatronsCount) {
  const TransformerConfig c = gpt3_175b();
  const double s = c.sequence, h = c.hidden;
  const TransformerLayer layer = transformer_layers(c)[1];
  EXPECT_EQ(layer.name, "layer 1");
  EXPECT_DOUBLE_EQ(layer.forward_flops, 24 * s * h * h + 4 * s * s * h);
}

TEST(Transformer, StandardAttentionActivationsAreKorthikantisCount) {
  const TransformerConfig c = gpt3_175b();
  const double s = c.sequence, h = c.hidden, a = c.heads;
  EXPECT_DOUBLE_EQ(transformer_layers(c)[1].activation, s * h * (34 + 5 * a * s / h));
  EXPECT_DOUBLE_EQ(transformer_layers(c)[1].recomputed_activation, 2 * s * h);
}

TEST(Transformer, HandCountedSmallGatedLayerWithGroupedQueries) {
  // s = 4 tokens, h = 8, a = 2 heads, k = 1 kv head (r = 1/2), f = 16, d = 2 bytes.
  TransformerConfig c;
  c.name = "tiny";
  c.layers = 1;
  c.hidden = 8;
  c.heads = 2;
  c.kv_heads = 1;
  c.ffn = 16;
  c.gated_ffn = true;
  c.sequence = 4;
  c.vocabulary = 10;
  const TransformerLayer layer = transformer_layers(c)[1];
  // Projections 2*4*(2*64 + 2*64/2) = 1536, attention 4*16*8 = 512, FFN 3*2*4*8*16 = 3072.
  EXPECT_DOUBLE_EQ(layer.forward_flops, 1536 + 512 + 3072);
  // Q and O 128, K and V 64, FFN 3*8*16 = 384, two norms 16.
  EXPECT_DOUBLE_EQ(layer.parameter_count, 128 + 64 + 384 + 16);
  // Flash attention: 2*(3*32 + 2*16) + 4*2*4 + 32 = 320; FFN 2*(32 + 4*64) + 32 = 608;
  // norms 2*2*32 = 128.
  EXPECT_DOUBLE_EQ(layer.activation, 320 + 608 + 128);
  c.flash_attention = false;  // scores: 2*(96 + 32 + 2*2*16) + 2*16 + 32 = 448
  EXPECT_DOUBLE_EQ(transformer_layers(c)[1].activation, 448 + 608 + 128);
  EXPECT_DOUBLE_EQ(layer.output, 2 * 4 * 8);
  EXPECT_DOUBLE_EQ(layer.tensor_parallel, 2 * 4 * 8);
}

TEST(Transformer, ParameterTotalsMatchTheReleasedModels) {
  // Llama 2 checkpoints as released: 6,738,415,616 and 68,976,648,192 parameters.
  EXPECT_DOUBLE_EQ(parameters(llama2(32, 4096, 32, 32, 11008)), 6738415616.0);
  EXPECT_DOUBLE_EQ(parameters(llama2(80, 8192, 64, 8, 28672)), 68976648192.0);
  // GPT-3 175B (Brown et al.): 175.0e9 with biases and position embeddings, left out here.
  EXPECT_NEAR(parameters(gpt3_175b()), 175.0e9, 0.005 * 175.0e9);
}

TEST(Transformer, ModelTimesAreFlopsOverTheReachedPeak) {
  const TransformerConfig c = llama2(2, 256, 4, 2, 512);
  const GpuSpec gpu{"test", 100e12, 80e9, 2e12, "test"};
  const ModelProfile model = transformer_model(c, gpu, 0.5);
  const std::vector<TransformerLayer> layers = transformer_layers(c);
  ASSERT_EQ(model.size(), 4u);
  EXPECT_EQ(model.states[0].name, "embedding");
  EXPECT_EQ(model.states[3].name, "head");
  EXPECT_DOUBLE_EQ(model.profile_batch_size, 1);
  EXPECT_DOUBLE_EQ(model.forward(1, 1), layers[1].forward_flops / 50e12);
  EXPECT_DOUBLE_EQ(model.backward(1, 1), 2 * model.forward(1, 1));
  // Mixed-precision Adam: 2-byte weights, 16 bytes per parameter on the device.
  EXPECT_DOUBLE_EQ(model.parameters(1, 1), 2 * layers[1].parameter_count);
  EXPECT_DOUBLE_EQ(transformer_optimizer_scaling(c), 8);
  EXPECT_DOUBLE_EQ(model.states[1].crossing, layers[1].output);
  EXPECT_DOUBLE_EQ(model.states[3].crossing, 0);
  double forward = 0;
  for (const TransformerLayer& layer : layers) forward += layer.forward_flops;
  EXPECT_DOUBLE_EQ(transformer_training_flops(c), 3 * forward);
}

TEST(Transformer, BadConfigurationsNameTheKey) {
  auto message = [](TransformerConfig c) {
    try {
      validate(c, "m.yml");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  TransformerConfig c = llama2(2, 256, 4, 2, 512);
  EXPECT_EQ(message(c), "no error");
  TransformerConfig odd = c;
  odd.hidden = 250;
  EXPECT_THAT(message(odd), HasSubstr("hidden 250 is not a multiple of heads 4"));
  odd = c;
  odd.kv_heads = 3;
  EXPECT_THAT(message(odd), HasSubstr("heads 4 is not a multiple of kv_heads 3"));
  odd = c;
  odd.layers = 0;
  EXPECT_THAT(message(odd), HasSubstr("layers must be a positive whole number"));
  odd = c;
  odd.optimizer = "lion";
  EXPECT_THAT(message(odd), HasSubstr("optimizer 'lion' is unknown"));
  EXPECT_THROW(transformer_model(c, GpuSpec{"g", 1e12, 1e9, 0, ""}, 1.5), InputError);
  EXPECT_THROW(transformer_model(c, GpuSpec{"g", 0, 1e9, 0, ""}, 0.5), InputError);
}

TEST(GpuCatalog, FindsByNameAndListsTheKnownOnes) {
  EXPECT_DOUBLE_EQ(find_gpu("h100-80gb", "x").peak_flops, 989e12);
  EXPECT_DOUBLE_EQ(find_gpu("A100-40GB", "x").memory, 40e9);
  try {
    find_gpu("B200", "m.yml:3: gpu");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("m.yml:3: gpu"));
    EXPECT_THAT(e.what(), HasSubstr("'B200' is not in the catalogue; known: V100-16GB"));
  }
}

}  // namespace
}  // namespace pe
