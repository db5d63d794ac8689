// Transformer files (pe-plan --model): the bundled configurations load with the sizes their
// sources give, and bad files are errors naming the file, line and key.
#include "pe/importers/transformer_yaml.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "pe/error.h"

namespace pe {
namespace {

using ::testing::HasSubstr;

const std::string kGood =
    "layers: 2\nhidden: 256\nheads: 4\nkv_heads: 2\nffn: 512\nffn_kind: gated\n"
    "sequence: 128\nvocabulary: 1000\ngpu: A100-40GB\n";

std::string error_of(const std::string& text) {
  try {
    parse_transformer_yaml(text, "m.yml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(TransformerYaml, ReadsEveryKeyAndItsDefaults) {
  const TransformerInput in = parse_transformer_yaml(kGood, "dir/small.yml");
  EXPECT_EQ(in.config.name, "small");
  EXPECT_EQ(in.config.layers, 2);
  EXPECT_EQ(in.config.kv_heads, 2);
  EXPECT_TRUE(in.config.gated_ffn);
  EXPECT_TRUE(in.config.flash_attention);
  EXPECT_FALSE(in.config.tied_embeddings);
  EXPECT_EQ(in.config.activation_bytes, 2);
  EXPECT_EQ(in.config.optimizer, "adam-mixed");
  EXPECT_EQ(in.gpu.name, "A100-40GB");
  EXPECT_DOUBLE_EQ(in.efficiency, 0.5);
  const TransformerInput custom = parse_transformer_yaml(
      "name: x\nlayers: 1\nhidden: 64\nheads: 2\nffn: 128\nsequence: 8\nvocabulary: 50\n"
      "activations: fp32\noptimizer: sgd-fp32\nattention: standard\ntied_embeddings: true\n"
      "efficiency: 0.25\ngpu: {name: mine, peak_tflops: 10, memory_gb: 12}\n",
      "m.yml");
  EXPECT_EQ(custom.config.kv_heads, 2);
  EXPECT_EQ(custom.config.activation_bytes, 4);
  EXPECT_FALSE(custom.config.flash_attention);
  EXPECT_TRUE(custom.config.tied_embeddings);
  EXPECT_DOUBLE_EQ(custom.gpu.peak_flops, 10e12);
  EXPECT_DOUBLE_EQ(custom.gpu.memory, 12e9);
  EXPECT_DOUBLE_EQ(custom.efficiency, 0.25);
}

TEST(TransformerYaml, BadFilesNameTheLineAndKey) {
  EXPECT_THAT(error_of(kGood + "dropout: 0.1\n"), HasSubstr("dropout"));
  EXPECT_THAT(error_of("hidden: 256\nheads: 4\n"), HasSubstr("layers"));
  EXPECT_THAT(error_of("layers: 2\nhidden: 250\nheads: 4\nffn: 8\nsequence: 8\n"
                       "vocabulary: 8\ngpu: V100-16GB\n"),
              HasSubstr("m.yml:3: heads: hidden 250 is not a multiple of heads 4"));
  EXPECT_THAT(error_of("layers: 2\nhidden: 256\nheads: 4\nkv_heads: 3\nffn: 8\nsequence: 8\n"
                       "vocabulary: 8\ngpu: V100-16GB\n"),
              HasSubstr("m.yml:4: kv_heads: heads 4 is not a multiple of kv_heads 3"));
  std::string unknown_gpu = kGood;
  unknown_gpu.replace(unknown_gpu.find("A100-40GB"), 9, "TPUv4");
  EXPECT_THAT(error_of(unknown_gpu),
              HasSubstr("m.yml:9: gpu: GPU 'TPUv4' is not in the catalogue"));
  EXPECT_THAT(error_of(kGood + "efficiency: 1.5\n"), HasSubstr("efficiency"));
  EXPECT_THAT(error_of(kGood + "activations: fp8\n"),
              HasSubstr("'fp8' is not one of: bf16, fp16, fp32"));
  std::string negative = kGood;
  negative.replace(negative.find("layers: 2"), 9, "layers: -2");
  EXPECT_THAT(error_of(negative), HasSubstr("m.yml:1: layers"));
  EXPECT_THAT(error_of(kGood + "ffn_kind: swish\n"), HasSubstr("duplicate key 'ffn_kind'"));
}

TEST(TransformerYaml, ALayerLargerThanTheGpuIsAnError) {
  // One layer of hidden 16384 and FFN 65536 holds 3.2e9 parameters: 51 GB at 16 bytes each.
  const std::string text =
      "layers: 1\nhidden: 16384\nheads: 128\nffn: 65536\nsequence: 8\nvocabulary: 8\n"
      "gpu: V100-32GB\n";
  EXPECT_THAT(error_of(text), HasSubstr("m.yml:7: gpu: layer 1 alone needs"));
  EXPECT_THAT(error_of(text), HasSubstr("but V100-32GB has 32"));
}

TEST(TransformerYaml, BundledConfigurationsLoadWithTheirPublishedSizes) {
  const std::vector<std::string> names = bundled_transformers();
  EXPECT_GE(names.size(), 7u);
  for (const std::string& name : names) {
    const TransformerInput in = load_transformer_yaml(find_transformer(name));
    EXPECT_EQ(in.config.name, name);
    EXPECT_FALSE(in.source.empty()) << name;
  }
  const TransformerInput llama = load_transformer_yaml(find_transformer("llama2-70b"));
  EXPECT_EQ(llama.config.layers, 80);
  EXPECT_EQ(llama.config.kv_heads, 8);
  try {
    find_transformer("gpt5");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("gpt3-175b"));
  }
}

}  // namespace
}  // namespace pe
